package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// An Edit's outcome kept for its request_id is counted by its encoded
// size, a few lines for a small edit of a large file; the strings it holds
// must be its own, not pieces of the file's text, or the table would keep
// every edited version of the file alive unaccounted until its TTL ends.
func TestRememberedEditHoldsOnlyItsOwnLines(t *testing.T) {
	t.Run("a kept response of a one-line edit shares no bytes with either version", func(t *testing.T) {
		dir := t.TempDir()
		var b strings.Builder
		for i := range 20_000 {
			fmt.Fprintf(&b, "line %05d of a file large enough to matter\n", i)
		}
		text := b.String()
		if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ws, err := workspace.Open(dir, workspace.WithFsync(false))
		if err != nil {
			t.Fatal(err)
		}
		s := New(ws)
		ctx := WithAgent(context.Background(), "agent")
		read, err := s.Read(ctx, ReadRequest{Path: "big.txt", Offset: 10_000, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		req := &hashlinev1.EditRequest{Path: "big.txt", RequestId: "k1",
			Edits: []*hashlinev1.FileEdit{client.Replace(read.Lines[0].Tag(), "", "changed")}}
		resp, _, err := Once(ctx, s, req.GetRequestId(), 1, false, func(*hashlinev1.EditResponse, error) int64 { return 0 }, func() (*hashlinev1.EditResponse, error) {
			return s.Edit(ctx, req)
		})
		if err != nil {
			t.Fatal(err)
		}
		s.requests.mu.Lock()
		kept := s.requests.m[requestKey{agent: "agent", id: "k1"}].resp.(*hashlinev1.EditResponse)
		s.requests.mu.Unlock()
		var lines []*hashlinev1.Line
		lines = append(lines, kept.GetReplaced()...)
		for _, w := range kept.GetWindows() {
			lines = append(lines, w.GetLines()...)
		}
		if len(kept.GetReplaced()) == 0 || len(kept.GetWindows()) == 0 {
			t.Fatalf("the response shows %d replaced lines and %d windows; want some of each", len(kept.GetReplaced()), len(kept.GetWindows()))
		}
		for _, v := range []string{read.Version, resp.GetVersion()} {
			doc, ok := s.cache.Peek(v)
			if !ok {
				t.Fatalf("version %s is not in the cache", v)
			}
			for _, l := range lines {
				if within(l.GetContent(), doc) {
					t.Errorf("line %d of the kept response (%q) points into the text of version %s", l.GetNumber(), l.GetContent(), v)
				}
			}
		}
	})
}

// within reports whether s lies inside the text of doc.
func within(s string, doc *hashline.Document) bool {
	text := doc.Text()
	if s == "" || text == "" {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(text)))
	return p >= lo && p < lo+uintptr(len(text))
}
