package watch

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashline/hashline/internal/floor"
)

// BenchmarkPublish measures what an Edit pays to publish its change: with
// nobody watching (one atomic load), and with a subscriber of the file
// (line ranges of a one-line change in a 10,000-line file, then one append
// to the hub's ring), against the durable write every Edit does anyway,
// measured in the same run. Compare the ns/op of the sub-benchmarks.
func BenchmarkPublish(b *testing.B) {
	var buf bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&buf, "line %d of a fairly ordinary source file\n", i)
	}
	old := buf.Bytes()
	new := bytes.Replace(old, []byte("line 5000 of"), []byte("LINE 5000 of"), 1)
	oldState, newState := State{Version: "v1", Text: old, HasText: true}, State{Version: "v2", Text: new, HasText: true}

	b.Run("nobody-watching", func(b *testing.B) {
		h := NewHub()
		for b.Loop() {
			h.Publish(Change{Path: "f", Agent: "x", Old: &oldState, New: newState})
		}
	})
	b.Run("one-subscriber-10k-lines", func(b *testing.B) {
		h := NewHub()
		s, _ := h.Subscribe("")
		defer s.Close()
		for b.Loop() {
			h.Publish(Change{Path: "f", Agent: "x", Old: &oldState, New: newState})
			s.Next()
		}
	})
	b.Run("durable-write-floor", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "f")
		for b.Loop() {
			if err := floor.DurableWrite(p, new); err != nil {
				b.Fatal(err)
			}
		}
	})
}
