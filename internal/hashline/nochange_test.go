package hashline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestNoChangeShowsTargetAndWhereTheTextStands checks what a refused no-op
// carries for a model to get unstuck: the lines it targeted as they are now
// (Fresh, with tags to edit from) and the places where the text it sent
// already stands (TextAt: the target, then others nearest first).
func TestNoChangeShowsTargetAndWhereTheTextStands(t *testing.T) {
	h := Hasher{}
	var many strings.Builder
	for i := 1; i <= 60; i++ {
		switch i {
		case 10, 14, 50:
			many.WriteString("\tretry(ctx)\n\tcount++\n")
		default:
			fmt.Fprintf(&many, "step%d()\n", i)
		}
	}
	// The block stands at lines 10-11, 15-16 and 52-53.
	src := many.String()
	for _, tc := range []struct {
		name     string
		in       string
		edits    []Edit
		fresh    []int      // line numbers of Fresh, per problem in order
		textAt   []LineSpan // TextAt of the first problem
		mention  []string
		unspoken []string
	}{
		{
			name:     "text standing only at its target is not said to stand elsewhere",
			in:       "a\nb\nc\n",
			edits:    []Edit{{Op: OpReplace, Start: "@2", Text: "b"}},
			fresh:    []int{2},
			textAt:   []LineSpan{{2, 2}},
			mention:  []string{"line 2 already holds the text you sent", "the change may already be made", "Do not send it again", "\n    2:"},
			unspoken: []string{"also stands"},
		},
		{
			name:    "text standing elsewhere too is named there, nearest first",
			in:      src,
			edits:   []Edit{{Op: OpReplace, Start: "@15", End: "@16", Text: "\tretry(ctx)\n\tcount++\n"}},
			fresh:   []int{15, 16},
			textAt:  []LineSpan{{15, 16}, {10, 11}, {52, 53}},
			mention: []string{"lines 15-16 already hold the text you sent", "It also stands at lines 10-11 (5 lines above) and lines 52-53."},
		},
		{
			name:     "text of only punctuation is not looked for elsewhere",
			in:       "{\n}\n{\n}\n",
			edits:    []Edit{{Op: OpReplace, Start: "@2", Text: "}"}},
			fresh:    []int{2},
			textAt:   []LineSpan{{2, 2}},
			unspoken: []string{"also stands"},
		},
		{
			name:   "a replaceText that changes nothing shows the lines of its match",
			in:     "x := 1\ny := 2\n",
			edits:  []Edit{{Op: OpReplaceText, OldText: "y := 2", NewText: "y := 2"}},
			fresh:  []int{2},
			textAt: []LineSpan{{2, 2}},
		},
		{
			name:   "a replaceText of every match shows each matching line",
			in:     "f()\ng()\nf()\n",
			edits:  []Edit{{Op: OpReplaceText, OldText: "f()", NewText: "f()", All: true}},
			fresh:  []int{1, 3},
			textAt: []LineSpan{{1, 1}, {3, 3}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ParseText(tc.in)
			_, err := ApplyEdits(d, resolveEdits(d, h, tc.edits), ApplyOptions{Hasher: h})
			var be *BatchError
			if !errors.As(err, &be) || be.Reason() != ReasonNoChange {
				t.Fatalf("want NO_CHANGE, got %v", err)
			}
			p := be.Problems[0]
			var got []int
			for _, l := range p.Fresh {
				got = append(got, l.Number)
				if want := (TaggedLine{Number: l.Number, Hash: d.Hash(h, l.Number), Content: d.Line(l.Number)}); l != want {
					t.Errorf("fresh line %v, want %v", l, want)
				}
			}
			if !slices.Equal(got, tc.fresh) {
				t.Errorf("fresh lines %v, want %v", got, tc.fresh)
			}
			if !slices.Equal(p.TextAt, tc.textAt) {
				t.Errorf("TextAt %v, want %v", p.TextAt, tc.textAt)
			}
			if !be.ShowsTags() {
				t.Error("the error shows tags but ShowsTags is false")
			}
			msg := be.Error()
			for _, m := range tc.mention {
				if !strings.Contains(msg, m) {
					t.Errorf("the message lacks %q:\n%s", m, msg)
				}
			}
			for _, m := range tc.unspoken {
				if strings.Contains(msg, m) {
					t.Errorf("the message says %q:\n%s", m, msg)
				}
			}
		})
	}
}
