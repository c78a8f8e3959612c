package hashline

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestProblemTagsAreTheLinesTheRefusalShows: a refusal records, as line
// numbers, the lines whose tags it shows besides Fresh (Problem.Tags), so
// that what it showed a model is known without reading its message back:
// the current line of a stale reference, the lines an ambiguous or missing
// oldText could mean, the lines around the readings of an ambiguous text.
// Each one's tag is in the message (or is CurrentLine), and a problem that
// shows no tags has none.
func TestProblemTagsAreTheLinesTheRefusalShows(t *testing.T) {
	t.Parallel()
	h := Hasher{}
	tag := func(d *Document, n int) string { return Ref{Line: n, Hash: d.Hash(h, n)}.String() }
	for _, tt := range []struct {
		name   string
		in     string
		edits  func(d *Document) []Edit
		reason Reason
		want   []int
	}{
		{
			name:   "ambiguous oldText: every line it starts on",
			in:     "func a() {\n\tif x {\n\t}\n}\n",
			edits:  func(*Document) []Edit { return []Edit{{Op: OpReplaceText, OldText: "}\n", NewText: "} // done\n"}} },
			reason: ReasonAmbiguousText,
			want:   []int{3, 4},
		},
		{
			name:   "missing oldText: the lines with similar text",
			in:     "x\n\tfoo()\n\t\tfoo()\ny\n",
			edits:  func(*Document) []Edit { return []Edit{{Op: OpReplaceText, OldText: "foo() ", NewText: "bar()"}} },
			reason: ReasonTextNotFound,
			want:   []int{2, 3},
		},
		{
			name:   "missing oldText with nothing similar: no tags",
			in:     "x\n\tfoo()\ny\n",
			edits:  func(*Document) []Edit { return []Edit{{Op: OpReplaceText, OldText: "nowhere", NewText: "bar()"}} },
			reason: ReasonTextNotFound,
		},
		{
			name: "the readings of an ambiguous text: the lines around the span",
			in:   "a\nb\nc\nd\n",
			edits: func(d *Document) []Edit {
				return []Edit{{Op: OpReplace, Start: tag(d, 2), Text: "+x"}}
			},
			reason: ReasonInvalidEdit,
			want:   []int{1, 3},
		},
		{
			name: "a stale reference: its current line",
			in:   "a\nb\nc\n",
			edits: func(d *Document) []Edit {
				return []Edit{{Op: OpReplace, Start: Ref{Line: 2, Hash: d.Hash(h, 3)}.String(), Text: "x"}}
			},
			reason: ReasonStaleRef,
			want:   []int{2},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := ParseDocument([]byte(tt.in))
			_, err := PlanEdits(d, tt.edits(d), h)
			var b *BatchError
			if !errors.As(err, &b) || len(b.Problems) != 1 {
				t.Fatalf("err = %v, want one problem", err)
			}
			p := b.Problems[0]
			if p.Reason != tt.reason {
				t.Fatalf("reason %s, want %s: %s", p.Reason, tt.reason, p.Message)
			}
			if !slices.Equal(p.Tags, tt.want) {
				t.Errorf("Tags = %v, want %v; message: %s", p.Tags, tt.want, p.Message)
			}
			for _, n := range p.Tags {
				if !strings.Contains(p.Message+" "+p.CurrentLine, tag(d, n)) {
					t.Errorf("Tags has line %d, whose tag %s the problem does not show: %s", n, tag(d, n), p.Message)
				}
			}
		})
	}
}
