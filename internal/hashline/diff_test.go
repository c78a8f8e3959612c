package hashline

import "testing"

func TestDiffWritesTouchingEditsAsOneBlock(t *testing.T) {
	// Edits of one batch that touch (an insertion right before a replaced
	// line, a replaced last line and the deleted lines after it) show as
	// diff tools show one change: the removed lines, then the added ones.
	// A line without newline can then only be the last of its side.
	for _, tt := range []struct {
		name, in string
		edits    []Edit
		want     string
	}{
		{"an insertion touching a replacement", "a\nb\nc\n",
			[]Edit{{Op: OpInsertAfter, Start: "@1", Text: "x\ny"}, {Op: OpReplace, Start: "@3", Text: "C"}, {Op: OpDelete, Start: "@2"}},
			"--- old\n+++ new\n@@ -1,3 +1,4 @@\n a\n-b\n-c\n+x\n+y\n+C\n"},
		{"a new last line without newline before deleted lines", "a\nb\nc",
			[]Edit{{Op: OpReplace, Start: "@2", Text: "B"}, {Op: OpDelete, Start: "@3"}},
			"--- old\n+++ new\n@@ -1,3 +1,2 @@\n a\n-b\n-c\n\\ No newline at end of file\n+B\n\\ No newline at end of file\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := ParseDocument([]byte(tt.in))
			h := Hasher{}
			res, err := ApplyEdits(d, resolveEdits(d, h, tt.edits), ApplyOptions{Hasher: h, Context: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.Diff != tt.want {
				t.Errorf("diff:\n%s\nwant:\n%s", res.Diff, tt.want)
			}
			checkDiff(t, d.Text(), res.Doc.Text(), res.Diff)
		})
	}
}
