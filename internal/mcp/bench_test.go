package mcp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

func benchFile(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "\tv%06d := f(%d) // note\n", i, i%997)
	}
	return b.String()
}

// BenchmarkReadFile reads a page through the whole bridge (in-memory MCP
// transport, JSON, the embedded engine) next to the same Read made directly
// on the engine's client; the difference is what the MCP layer costs.
func BenchmarkReadFile(b *testing.B) {
	for _, n := range []int{100, 10_000, 100_000} {
		s := newSession(b, "embedded")
		s.write("f.go", benchFile(n))
		b.Run(fmt.Sprintf("lines=%d/mcp", n), func(b *testing.B) {
			for b.Loop() {
				s.ok("read_file", map[string]any{"path": "f.go"})
			}
		})
		b.Run(fmt.Sprintf("lines=%d/client", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.c.Read(s.ctx, &hashlinev1.ReadRequest{Path: "f.go"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEditFile toggles one line of a 100-line file through the bridge
// and, for comparison, through the engine's client directly. fsync is off
// to leave the disk out of what this measures.
func BenchmarkEditFile(b *testing.B) {
	s := newSessionWith(b, engineConfig{ws: []workspace.Option{workspace.WithFsync(false)}})
	content := benchFile(100)
	// Each run starts from the original file and reads its refs, so that
	// -count and repeated runs find the file in the state they expect.
	start := func(b *testing.B) (refs, texts [2]string) {
		s.write("f.go", content)
		old := tagged(b, s.ok("read_file", map[string]any{"path": "f.go"}))[49]
		_, oldText, _ := strings.Cut(old, "|")
		return [2]string{ref(old), ref(old)}, [2]string{"\tv000049 := 42 // edited", oldText}
	}
	b.Run("mcp", func(b *testing.B) {
		refs, texts := start(b)
		for i := 0; b.Loop(); i++ {
			out := s.ok("edit_file", map[string]any{"path": "f.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": refs[i%2], "new_text": texts[i%2]}},
			}})
			refs[(i+1)%2] = freshRef(b, out, 50)
		}
	})
	b.Run("client", func(b *testing.B) {
		refs, texts := start(b)
		for i := 0; b.Loop(); i++ {
			resp, err := s.c.Edit(s.ctx, &hashlinev1.EditRequest{Path: "f.go", Edits: []*hashlinev1.FileEdit{client.Replace(refs[i%2], "", texts[i%2])}})
			if err != nil {
				b.Fatal(err)
			}
			for _, w := range resp.GetWindows() {
				for _, l := range w.GetLines() {
					if l.GetNumber() == 50 {
						refs[(i+1)%2] = client.Ref(l)
					}
				}
			}
		}
	})
}

// freshRef finds line n's ref in an edit_file result's tagged diff, on an
// unchanged (" ") or added ("+") line.
func freshRef(t testing.TB, out string, n int) string {
	t.Helper()
	prefix := fmt.Sprintf("%d:", n)
	for _, l := range strings.Split(out, "\n") {
		if (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "+")) && strings.HasPrefix(l[1:], prefix) {
			return ref(l[1:])
		}
	}
	t.Fatalf("no line %d in:\n%s", n, out)
	return ""
}
