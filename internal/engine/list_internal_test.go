package engine

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// entrySize stands in for proto.Size when a page is filled up to the
// response limit, so it must agree with it for every kind of entry, or a
// page could outgrow the limit.
func TestEntrySizeIsTheEncodedSize(t *testing.T) {
	paths := []string{"", "a", strings.Repeat("p", 127), strings.Repeat("p", 128), strings.Repeat("é", 5000)}
	types := []hashlinev1.EntryType{
		hashlinev1.EntryType_ENTRY_TYPE_UNSPECIFIED, hashlinev1.EntryType_ENTRY_TYPE_FILE,
		hashlinev1.EntryType_ENTRY_TYPE_DIR, hashlinev1.EntryType_ENTRY_TYPE_SYMLINK,
	}
	sizes := []int64{0, 1, 127, 128, 1 << 40, -1}
	for _, p := range paths {
		for _, typ := range types {
			for _, size := range sizes {
				want := proto.Size(&hashlinev1.Entry{Path: p, Type: typ, Size: size})
				if got := entrySize(p, typ, size); got != want {
					t.Errorf("entrySize(%d-byte path, %v, %d) = %d, proto.Size says %d", len(p), typ, size, got, want)
				}
			}
		}
	}
}
