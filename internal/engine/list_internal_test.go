package engine

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// entrySize and pageTokenSize stand in for the face's measure of the
// encoded response when a page is filled up to the response limit, so
// they must agree with the API's encoding for every kind of entry and
// token, or a page could outgrow the limit.
func TestEntrySizeIsTheEncodedSize(t *testing.T) {
	t.Parallel()
	paths := []string{"", "a", strings.Repeat("p", 127), strings.Repeat("p", 128), strings.Repeat("é", 5000)}
	types := []hashlinev1.EntryType{
		hashlinev1.EntryType_ENTRY_TYPE_FILE, hashlinev1.EntryType_ENTRY_TYPE_DIR, hashlinev1.EntryType_ENTRY_TYPE_SYMLINK,
	}
	sizes := []int64{0, 1, 127, 128, 1 << 40, -1}
	for _, p := range paths {
		for _, typ := range types {
			for _, size := range sizes {
				want := proto.Size(&hashlinev1.Entry{Path: p, Type: typ, Size: size})
				if got := entrySize(p, size); got != want {
					t.Errorf("entrySize(%d-byte path, %d) = %d, proto.Size of a %v says %d", len(p), size, got, typ, want)
				}
			}
		}
	}
}

func TestPageTokenSizeIsTheEncodedSize(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"a", "dir/", strings.Repeat("k", 94), strings.Repeat("k", 96), strings.Repeat("é/", 4000)} {
		want := proto.Size(&hashlinev1.ListResponse{Truncated: true, NextPageToken: pageToken(key)})
		if got := pageTokenSize(key); got != want {
			t.Errorf("pageTokenSize(%d-byte key) = %d, proto.Size says %d", len(key), got, want)
		}
	}
}

func TestSizeVarint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    uint64
		want int
	}{{0, 1}, {1, 1}, {127, 1}, {128, 2}, {1<<14 - 1, 2}, {1 << 14, 3}, {1<<63 - 1, 9}, {1 << 63, 10}, {^uint64(0), 10}} {
		if got := sizeVarint(tc.v); got != tc.want {
			t.Errorf("sizeVarint(%d) = %d, want %d", tc.v, got, tc.want)
		}
	}
}
