package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

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
		req := &EditRequest{Path: "big.txt",
			Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: read.Lines[0].Tag(), Text: "changed"}}}
		resp, _, err := Once(ctx, s, "k1", 1, false, func(*EditResult, error) int64 { return 0 }, func() (*EditResult, error) {
			return s.Edit(ctx, req)
		})
		if err != nil {
			t.Fatal(err)
		}
		s.requests.mu.Lock()
		kept := s.requests.m[requestKey{agent: "agent", id: "k1"}].resp.(*EditResult)
		s.requests.mu.Unlock()
		var lines []hashline.TaggedLine
		lines = append(lines, kept.Replaced...)
		for _, w := range kept.Windows {
			lines = append(lines, w.Lines...)
		}
		if len(kept.Replaced) == 0 || len(kept.Windows) == 0 {
			t.Fatalf("the response shows %d replaced lines and %d windows; want some of each", len(kept.Replaced), len(kept.Windows))
		}
		for _, v := range []string{read.Version, resp.Version} {
			doc, ok := s.cache.Peek(v)
			if !ok {
				t.Fatalf("version %s is not in the cache", v)
			}
			for _, l := range lines {
				if within(l.Content, doc) {
					t.Errorf("line %d of the kept response (%q) points into the text of version %s", l.Number, l.Content, v)
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
