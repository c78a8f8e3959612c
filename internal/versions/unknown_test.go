package versions_test

import (
	"fmt"
	"testing"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

func TestUnknownBase(t *testing.T) {
	// The current file: base with line 5 rewritten, as another agent left it.
	cur := doc("l1", "l2", "l3", "l4", "B5", "l6", "l7", "l8", "l9", "l10")
	var long []string
	for i := range 100 {
		long = append(long, fmt.Sprintf("line %d", i+1))
	}
	longDoc := doc(long...)
	type want struct {
		reason  hashline.Reason
		field   string
		line    int
		current string // the tagged current line; "" when past the end
		fresh   [2]int // first and last fresh line numbers
		around  [2]int // the lines they show context around
	}
	tests := []struct {
		name  string
		cur   *hashline.Document
		edits []hashline.Edit
		want  []want // nil: the batch passes
	}{
		{
			name:  "append, prepend and replaceText pass",
			cur:   cur,
			edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "x"}, {Op: hashline.OpPrepend, Text: "y"}, {Op: hashline.OpReplaceText, OldText: "l7", NewText: "7"}},
		},
		{
			name:  "a reference that still matches by number and hash is refused",
			cur:   cur,
			edits: []hashline.Edit{replace(ref(base, 2), "", "x")},
			want:  []want{{hashline.ReasonStaleRef, "start", 2, ref(cur, 2) + "|l2", [2]int{1, 5}, [2]int{2, 2}}},
		},
		{
			name:  "a range shows every line inside it",
			cur:   cur,
			edits: []hashline.Edit{replace(ref(base, 3), ref(base, 7), "x")},
			want: []want{
				{hashline.ReasonStaleRef, "start", 3, ref(cur, 3) + "|l3", [2]int{1, 10}, [2]int{3, 7}},
				{hashline.ReasonStaleRef, "end", 7, ref(cur, 7) + "|l7", [2]int{4, 10}, [2]int{7, 7}},
			},
		},
		{
			name:  "a long range shows a bounded part of its inside",
			cur:   longDoc,
			edits: []hashline.Edit{{Op: hashline.OpDelete, Start: ref(longDoc, 10), End: ref(longDoc, 90)}},
			want: []want{
				{hashline.ReasonStaleRef, "start", 10, ref(longDoc, 10) + "|line 10", [2]int{7, 53}, [2]int{10, 50}},
				{hashline.ReasonStaleRef, "end", 90, ref(longDoc, 90) + "|line 90", [2]int{87, 93}, [2]int{90, 90}},
			},
		},
		{
			name:  "an anchor past the end of the current file",
			cur:   doc("l1", "l2", "l3"),
			edits: []hashline.Edit{{Op: hashline.OpInsertAfter, Start: ref(base, 8), Text: "x"}},
			want:  []want{{hashline.ReasonStaleRef, "anchor", 8, "", [2]int{1, 3}, [2]int{3, 3}}},
		},
		{
			name:  "insertBefore among edits without references",
			cur:   cur,
			edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "x"}, {Op: hashline.OpInsertBefore, Start: ref(base, 1), Text: "y"}},
			want:  []want{{hashline.ReasonStaleRef, "anchor", 1, ref(cur, 1) + "|l1", [2]int{1, 4}, [2]int{1, 1}}},
		},
		{
			name: "malformed references are reported alone",
			cur:  cur,
			edits: []hashline.Edit{
				replace(ref(base, 2), "", "x"),
				replace("5:zz", "", "x"),
				replace(ref(base, 3), "3:abc", "x"),
			},
			want: []want{
				{reason: hashline.ReasonInvalidRef, field: "start"},
				{reason: hashline.ReasonInvalidRef, field: "end", line: 3},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := versions.UnknownBase(tt.cur, tt.edits, h)
			if tt.want == nil {
				if b != nil {
					t.Fatalf("refused: %v", b)
				}
				return
			}
			if b == nil || len(b.Problems) != len(tt.want) {
				t.Fatalf("problems = %+v, want %d", b, len(tt.want))
			}
			for i, w := range tt.want {
				p := b.Problems[i]
				if p.Reason != w.reason || p.Field != w.field || p.Line != w.line || p.Message == "" {
					t.Errorf("problem %d = %+v, want %+v", i, p, w)
				}
				if w.reason != hashline.ReasonStaleRef {
					continue
				}
				if p.CurrentLine != w.current {
					t.Errorf("problem %d: current line %q, want %q", i, p.CurrentLine, w.current)
				}
				if len(p.Fresh) == 0 || p.Fresh[0].Number != w.fresh[0] || p.Fresh[len(p.Fresh)-1].Number != w.fresh[1] {
					t.Errorf("problem %d: fresh %v, want lines %d-%d", i, p.Fresh, w.fresh[0], w.fresh[1])
				}
				if p.Around != w.around {
					t.Errorf("problem %d: around %v, want %v", i, p.Around, w.around)
				}
			}
		})
	}
}
