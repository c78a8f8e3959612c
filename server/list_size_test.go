package server_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
)

// A page of entries is cut at the response limit, as an Edit response is
// bounded by it: a page over it would be lost by a client that receives no
// more (grpc's default), and asked again it would be lost again. Paging on
// from the cut lists every entry once.
func TestListCutsAPageAtTheResponseLimit(t *testing.T) {
	const limit = 4096
	e := newEnv(t, engine.WithMaxResponseBytes(limit))
	want := map[string]bool{}
	for i := range 200 {
		p := fmt.Sprintf("d/%s-%03d.txt", strings.Repeat("n", 60), i)
		e.write(p, "x\n")
		want[p] = true
	}
	got := map[string]bool{}
	tok := ""
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatal("the listing never ends")
		}
		resp, err := e.c.List(e.ctx, &hashlinev1.ListRequest{Path: "d", MaxEntries: 1000, PageToken: tok, IncludeVersions: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := proto.Size(resp); n > limit {
			t.Fatalf("a page of %d entries is %d bytes, over the %d-byte response limit", len(resp.GetEntries()), n, limit)
		}
		if len(resp.GetEntries()) == 0 {
			t.Fatalf("page %d is empty, truncated %t", pages, resp.GetTruncated())
		}
		for _, en := range resp.GetEntries() {
			if got[en.GetPath()] {
				t.Errorf("%s listed twice", en.GetPath())
			}
			got[en.GetPath()] = true
		}
		if !resp.GetTruncated() {
			break
		}
		tok = resp.GetNextPageToken()
	}
	if len(got) != len(want) {
		t.Errorf("listed %d entries, want %d", len(got), len(want))
	}
}
