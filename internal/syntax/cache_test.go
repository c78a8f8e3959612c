package syntax_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashline/hashline/internal/syntax"
)

// countingGo is a parser of Go, by Check's own for Go through a Check of
// an empty before, that counts the parses.
func countingGo(n *atomic.Int64) func([]byte) []syntax.Diagnostic {
	return func(src []byte) []syntax.Diagnostic {
		n.Add(1)
		return syntax.Check("x.go", nil, src, syntax.Options{ChunkBytes: -1}).Diagnostics
	}
}

// TestCacheSavesTheParseOfTheContentBefore: the second of two edits that
// leave a file broken parses only its content after: the content before it
// is the first edit's after, parsed then. The diagnostics are those of a
// check without the cache.
func TestCacheSavesTheParseOfTheContentBefore(t *testing.T) {
	v0 := "package p\n\nfunc f() {\n\tx := 1\n\t_ = x\n}\n\nvar v = []int{1, 2}\n"
	v1 := strings.Replace(v0, "x := 1", "x := (1", 1) // broken
	v2 := strings.Replace(v1, "{1, 2}", "{1, 2", 1)   // still broken, one more error
	var n atomic.Int64
	cache := syntax.NewCache(0)
	opts := syntax.WithParser(syntax.Options{ChunkBytes: -1, Cache: cache}, countingGo(&n))
	plain := syntax.WithParser(syntax.Options{ChunkBytes: -1}, countingGo(new(atomic.Int64)))

	r1 := syntax.Check("f.go", []byte(v0), []byte(v1), opts)
	if got := n.Load(); got != 2 {
		t.Errorf("first broken edit: %d parses, want 2 (after and before)", got)
	}
	n.Store(0)
	r2 := syntax.Check("f.go", []byte(v1), []byte(v2), opts)
	if got := n.Load(); got != 1 {
		t.Errorf("second broken edit: %d parses, want 1 (before was the first's after)", got)
	}
	for i, c := range []struct {
		got           syntax.Report
		before, after string
	}{{r1, v0, v1}, {r2, v1, v2}} {
		if want := syntax.Check("f.go", []byte(c.before), []byte(c.after), plain); !reflect.DeepEqual(c.got, want) || len(want.Diagnostics) == 0 {
			t.Errorf("edit %d: %+v with the cache, %+v without", i+1, c.got, want)
		}
	}
	// Another file, or other content under the same name, is parsed.
	n.Store(0)
	syntax.Check("g.go", []byte(v1), []byte(v2), opts)
	syntax.Check("f.go", []byte(v1+"\n"), []byte(v2), opts)
	if got := n.Load(); got != 4 {
		t.Errorf("%d parses for two edits whose content before was not parsed, want 4", got)
	}
}

// TestCacheForgetsTheLeastRecentlyUsedFile: a cache of two files keeps the
// two used last.
func TestCacheForgetsTheLeastRecentlyUsedFile(t *testing.T) {
	var n atomic.Int64
	opts := syntax.WithParser(syntax.Options{ChunkBytes: -1, Cache: syntax.NewCache(2)}, countingGo(&n))
	broken := func(k int) string { return fmt.Sprintf("package p\nvar x = (%d\n", k) }
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		syntax.Check(f, []byte("package p\n"), []byte(broken(1)), opts) // after cached
	}
	n.Store(0)
	for _, f := range []string{"b.go", "c.go", "a.go"} {
		syntax.Check(f, []byte(broken(1)), []byte(broken(2)), opts)
	}
	// b and c were known (1 parse each); a was forgotten (2), and its check
	// then pushed b out.
	if got := n.Load(); got != 4 {
		t.Errorf("%d parses, want 4", got)
	}
}

// TestCheckIsTheSameWithTheCache: random edits of a Go file, some of them
// breaking it and some mending it, checked in turn with one cache and
// without: the same reports.
func TestCheckIsTheSameWithTheCache(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	lines := strings.Split(strings.TrimSuffix(goFile(400), "\n"), "\n")
	cache := syntax.NewCache(0)
	edits := []string{"\tif (x > 1 {", "}", "\treturn x, nil", "func (", "\ts := `", "\t_ = 1"}
	for i := range 300 {
		before := []byte(strings.Join(lines, "\n") + "\n")
		k := rng.IntN(len(lines))
		switch rng.IntN(3) {
		case 0:
			lines[k] = edits[rng.IntN(len(edits))]
		case 1:
			lines = append(lines[:k], lines[k+1:]...)
		default:
			lines = append(lines[:k], append([]string{edits[rng.IntN(len(edits))]}, lines[k:]...)...)
		}
		after := []byte(strings.Join(lines, "\n") + "\n")
		for _, chunk := range []int{256, -1} {
			got := syntax.Check("f.go", before, after, syntax.Options{ChunkBytes: chunk, Cache: cache})
			want := syntax.Check("f.go", before, after, syntax.Options{ChunkBytes: chunk})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("edit %d (chunk %d): %+v with the cache, %+v without", i, chunk, got, want)
			}
		}
	}
}
