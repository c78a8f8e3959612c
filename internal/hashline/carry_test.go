package hashline

import (
	"fmt"
	"strings"
	"testing"
)

// TestApplyCarriesSums checks that the line sums a document had computed
// are carried into the document an edit makes, that every carried or
// computed sum is its line's, and that lines nobody hashed before are not
// hashed by the edit beyond what its windows show.
func TestApplyCarriesSums(t *testing.T) {
	const n = 1000 // 16 chunks, the last one partial
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d\n", i+1)
	}
	src := b.String()
	h := Hasher{}
	lines := func(k int) string { return strings.Repeat("new\n", k) }
	tests := []struct {
		name  string
		edits func(ref func(int) string) []Edit
	}{
		{"a line replaced keeps every chunk", func(ref func(int) string) []Edit {
			return []Edit{{Op: OpReplace, Start: ref(500), Text: "x"}}
		}},
		{"a line inserted at the top moves every chunk by one line", func(ref func(int) string) []Edit {
			return []Edit{{Op: OpInsertBefore, Start: ref(1), Text: "x"}}
		}},
		{"a whole chunk inserted moves the rest by one chunk", func(ref func(int) string) []Edit {
			return []Edit{{Op: OpInsertAfter, Start: ref(100), Text: lines(sumChunkLen)}}
		}},
		{"lines deleted", func(ref func(int) string) []Edit {
			return []Edit{{Op: OpDelete, Start: ref(10), End: ref(12)}, {Op: OpDelete, Start: ref(900), End: ref(999)}}
		}},
		{"many lines inserted", func(ref func(int) string) []Edit {
			return []Edit{{Op: OpInsertAfter, Start: ref(300), Text: lines(5 * sumChunkLen)}, {Op: OpReplace, Start: ref(700), End: ref(701), Text: "y"}}
		}},
		{"appended", func(ref func(int) string) []Edit {
			return []Edit{{Op: OpAppend, Text: lines(3)}}
		}},
	}
	for _, tt := range tests {
		for _, filled := range []string{"all", "every other", "none"} {
			t.Run(tt.name+", "+filled+" known", func(t *testing.T) {
				d := ParseDocument([]byte(src))
				for k := range d.sums {
					if filled == "all" || filled == "every other" && k%2 == 0 {
						d.sum(k*sumChunkLen + 1)
					}
				}
				ref := func(l int) string { return fmt.Sprintf("%d:%s", l, h.Sum(d.Line(l))) }
				res, err := ApplyEdits(d, tt.edits(ref), ApplyOptions{Hasher: h, Context: 2})
				if err != nil {
					t.Fatal(err)
				}
				nd := res.Doc
				unknown := 0
				for k := range nd.sums {
					if nd.sums[k].Load() == nil {
						unknown++
					}
				}
				switch {
				case filled == "all" && unknown > 0:
					t.Errorf("%d of %d chunks unknown after the edit, though every old line's sum was known", unknown, len(nd.sums))
				case filled == "none" && (unknown == 0 || unknown == len(nd.sums)):
					t.Errorf("%d of %d chunks unknown; want all but those the windows show", unknown, len(nd.sums))
				}
				for l := 1; l <= nd.Len(); l++ {
					if got, want := nd.sum(l), Sum32(nd.Line(l)); got != want {
						t.Fatalf("line %d (%q): sum %08x, want %08x", l, nd.Line(l), got, want)
					}
				}
			})
		}
	}
}
