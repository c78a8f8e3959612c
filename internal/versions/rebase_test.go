package versions_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

var h = hashline.Hasher{}

// doc builds an LF document from lines.
func doc(lines ...string) *hashline.Document {
	if len(lines) == 0 {
		return hashline.ParseDocument(nil)
	}
	return hashline.ParseDocument([]byte(strings.Join(lines, "\n") + "\n"))
}

// ref is the tag of line n of d.
func ref(d *hashline.Document, n int) string {
	return hashline.Ref{Line: n, Hash: h.Sum(d.Line(n))}.String()
}

// base is the file every case starts from: ten distinct lines.
var base = doc("l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10")

func replace(start, end, text string) hashline.Edit {
	return hashline.Edit{Op: hashline.OpReplace, Start: start, End: end, Text: text}
}

func TestRebase(t *testing.T) {
	type conflict struct {
		edit   int
		field  string
		reason string
		line   int    // base line
		now    string // CurrentLine
		marked []int
	}
	tests := []struct {
		name      string
		cur       *hashline.Document
		edits     []hashline.Edit
		want      string // the current file after applying the rebased edits
		moved     []versions.Move
		conflicts []conflict
	}{
		{
			name:  "an edit below another agent's insertion moves down and applies",
			cur:   doc("new", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10"),
			edits: []hashline.Edit{replace(ref(base, 5), "", "L5")},
			want:  "new l1 l2 l3 l4 L5 l6 l7 l8 l9 l10",
			moved: []versions.Move{{Ref: ref(base, 5), From: 5, To: 6}},
		},
		{
			name:  "an edit above another agent's change keeps its number",
			cur:   doc("l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "X", "Y", "l10"),
			edits: []hashline.Edit{replace(ref(base, 2), "", "L2")},
			want:  "l1 L2 l3 l4 l5 l6 l7 l8 X Y l10",
		},
		{
			name:  "a range between two other changes maps whole",
			cur:   doc("l1", "A", "l3", "l4", "l5", "l6", "l8", "l9", "l10"),
			edits: []hashline.Edit{replace(ref(base, 3), ref(base, 6), "R")},
			want:  "l1 A R l8 l9 l10",
		},
		{
			name:  "a range with lines inserted just before and after it keeps them",
			cur:   doc("l1", "l2", "B", "l3", "l4", "A", "l5", "l6", "l7", "l8", "l9", "l10"),
			edits: []hashline.Edit{{Op: hashline.OpDelete, Start: ref(base, 3), End: ref(base, 4)}},
			want:  "l1 l2 B A l5 l6 l7 l8 l9 l10",
			moved: []versions.Move{{Ref: ref(base, 3), From: 3, To: 4}, {Ref: ref(base, 4), From: 4, To: 5}},
		},
		{
			name:      "a changed referenced line is CHANGED with its current content",
			cur:       doc("l1", "l2", "l3", "l4", "five", "l6", "l7", "l8", "l9", "l10"),
			edits:     []hashline.Edit{replace(ref(base, 5), "", "L5")},
			conflicts: []conflict{{0, "start", "CHANGED", 5, "5:" + h.Sum("five") + "|five", []int{5}}},
		},
		{
			name:      "a deleted referenced line is DELETED",
			cur:       doc("l1", "l2", "l3", "l4", "l6", "l7", "l8", "l9", "l10"),
			edits:     []hashline.Edit{{Op: hashline.OpInsertAfter, Start: ref(base, 5), Text: "x"}},
			conflicts: []conflict{{0, "anchor", "DELETED", 5, "", nil}},
		},
		{
			name:      "a range spanning a changed line is a CONFLICT on its start",
			cur:       doc("l1", "l2", "l3", "l4", "FIVE", "l6", "l7", "l8", "l9", "l10"),
			edits:     []hashline.Edit{replace(ref(base, 3), ref(base, 7), "R")},
			conflicts: []conflict{{0, "start", "CONFLICT", 3, "3:" + h.Sum("l3") + "|l3", []int{5}}},
		},
		{
			name:      "a range with lines inserted inside it is a CONFLICT",
			cur:       doc("l1", "l2", "l3", "l4", "in", "l5", "l6", "l7", "l8", "l9", "l10"),
			edits:     []hashline.Edit{replace(ref(base, 3), ref(base, 7), "R")},
			conflicts: []conflict{{0, "start", "CONFLICT", 3, "3:" + h.Sum("l3") + "|l3", []int{5}}},
		},
		{
			name:      "a range ending on a changed line is CHANGED on its end",
			cur:       doc("l1", "l2", "l3", "l4", "l5", "l6", "SEVEN", "l8", "l9", "l10"),
			edits:     []hashline.Edit{replace(ref(base, 3), ref(base, 7), "R")},
			conflicts: []conflict{{0, "end", "CHANGED", 7, "7:" + h.Sum("SEVEN") + "|SEVEN", []int{7}}},
		},
		{
			name:      "inserting at the point another agent inserted at is a CONFLICT",
			cur:       doc("l1", "l2", "l3", "l4", "l5", "theirs", "l6", "l7", "l8", "l9", "l10"),
			edits:     []hashline.Edit{{Op: hashline.OpInsertAfter, Start: ref(base, 5), Text: "mine"}},
			conflicts: []conflict{{0, "anchor", "CONFLICT", 5, "5:" + h.Sum("l5") + "|l5", []int{6}}},
		},
		{
			name:      "insertBefore at the point another agent inserted at is a CONFLICT",
			cur:       doc("l1", "l2", "l3", "l4", "l5", "theirs", "l6", "l7", "l8", "l9", "l10"),
			edits:     []hashline.Edit{{Op: hashline.OpInsertBefore, Start: ref(base, 6), Text: "mine"}},
			conflicts: []conflict{{0, "anchor", "CONFLICT", 6, "7:" + h.Sum("l6") + "|l6", []int{6}}},
		},
		{
			name:  "inserting after a line whose successor changed applies before the change",
			cur:   doc("l1", "l2", "l3", "l4", "l5", "SIX", "l7", "l8", "l9", "l10"),
			edits: []hashline.Edit{{Op: hashline.OpInsertAfter, Start: ref(base, 5), Text: "mine"}},
			want:  "l1 l2 l3 l4 l5 mine SIX l7 l8 l9 l10",
		},
		{
			name:      "inserting after a line whose successor another change grew is a CONFLICT",
			cur:       doc("l1", "l2", "l3", "l4", "l5", "theirs", "SIX", "l7", "l8", "l9", "l10"),
			edits:     []hashline.Edit{{Op: hashline.OpInsertAfter, Start: ref(base, 5), Text: "mine"}},
			conflicts: []conflict{{0, "anchor", "CONFLICT", 5, "5:" + h.Sum("l5") + "|l5", []int{6, 7}}},
		},
		{
			name:      "inserting before a line whose predecessor another change grew is a CONFLICT",
			cur:       doc("l1", "l2", "l3", "l4", "FIVE", "theirs", "l6", "l7", "l8", "l9", "l10"),
			edits:     []hashline.Edit{{Op: hashline.OpInsertBefore, Start: ref(base, 6), Text: "mine"}},
			conflicts: []conflict{{0, "anchor", "CONFLICT", 6, "7:" + h.Sum("l6") + "|l6", []int{5, 6}}},
		},
		{
			name: "two insertions that another change's deletion brought together conflict",
			cur:  doc("l1", "l2", "l3", "l4", "l6", "l7", "l8", "l9", "l10"),
			edits: []hashline.Edit{
				{Op: hashline.OpInsertAfter, Start: ref(base, 4), Text: "a"},
				{Op: hashline.OpInsertBefore, Start: ref(base, 6), Text: "b"},
			},
			conflicts: []conflict{{1, "anchor", "CONFLICT", 6, "5:" + h.Sum("l6") + "|l6", nil}},
		},
		{
			name:  "inserting before a line whose predecessor was deleted applies",
			cur:   doc("l1", "l2", "l3", "l4", "l6", "l7", "l8", "l9", "l10"),
			edits: []hashline.Edit{{Op: hashline.OpInsertBefore, Start: ref(base, 6), Text: "mine"}},
			want:  "l1 l2 l3 l4 mine l6 l7 l8 l9 l10",
			moved: []versions.Move{{Ref: ref(base, 6), From: 6, To: 5}},
		},
		{
			name: "every conflict of a batch is reported at once, with the references that still hold",
			cur:  doc("top", "l1", "l2", "TWO", "l4", "l5", "l6", "l7", "l8", "l9"),
			edits: []hashline.Edit{
				replace(ref(base, 3), "", "x"),
				replace(ref(base, 8), "", "y"),
				{Op: hashline.OpDelete, Start: ref(base, 10)},
			},
			moved: []versions.Move{{Ref: ref(base, 8), From: 8, To: 9}},
			conflicts: []conflict{
				{0, "start", "CHANGED", 3, "4:" + h.Sum("TWO") + "|TWO", []int{4}},
				{2, "start", "DELETED", 10, "", nil},
			},
		},
		{
			name:  "append and replaceText pass through for the current file",
			cur:   doc("l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10"),
			edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "end"}, {Op: hashline.OpReplaceText, OldText: "l0", NewText: "zero"}, replace(ref(base, 1), "", "one")},
			want:  "zero one l2 l3 l4 l5 l6 l7 l8 l9 l10 end",
			moved: []versions.Move{{Ref: ref(base, 1), From: 1, To: 2}},
		},
		{
			name:  "a line whose ending alone changed is untouched",
			cur:   hashline.ParseDocument([]byte("l1\r\nl2\r\nl3\r\nl4\r\nl5\r\nl6\r\nl7\r\nl8\r\nl9\r\nl10")),
			edits: []hashline.Edit{replace(ref(base, 10), "", "ten")},
			want:  "l1 l2 l3 l4 l5 l6 l7 l8 l9 ten",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := versions.Rebase(base, tt.cur, tt.edits, h)
			if len(tt.conflicts) > 0 {
				var ce *versions.ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want a conflict", err)
				}
				var gotC []conflict
				for _, c := range ce.Conflicts {
					gotC = append(gotC, conflict{c.EditIndex, c.Field, c.Reason, c.Line, c.CurrentLine, c.Marked})
					if c.Message == "" || len(c.Fresh) == 0 {
						t.Errorf("conflict %+v has no message or fresh lines", c)
					}
				}
				if !reflect.DeepEqual(gotC, tt.conflicts) {
					t.Errorf("conflicts:\n got %+v\nwant %+v", gotC, tt.conflicts)
				}
				if !reflect.DeepEqual(ce.Moved, tt.moved) {
					t.Errorf("moved = %+v, want %+v", ce.Moved, tt.moved)
				}
				if !strings.Contains(ce.Error(), "changed since last read") {
					t.Errorf("message: %s", ce.Error())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Moved, tt.moved) {
				t.Errorf("moved = %+v, want %+v", got.Moved, tt.moved)
			}
			res, err := hashline.ApplyEdits(tt.cur, got.Edits, hashline.ApplyOptions{Hasher: h})
			if err != nil {
				t.Fatalf("applying the rebased edits %+v: %v", got.Edits, err)
			}
			if s := strings.Join(strings.Fields(res.Doc.Text()), " "); s != tt.want {
				t.Errorf("result = %q, want %q", s, tt.want)
			}
		})
	}
}

func TestRebaseRefusesReferencesNotMadeAgainstTheBase(t *testing.T) {
	cur := doc("l1", "l2", "CHANGED", "l4")
	for _, e := range []hashline.Edit{
		replace("3:"+h.Sum("CHANGED"), "", "x"), // a current tag, not a base one
		replace(ref(base, 3), "99:"+h.Sum("l3"), "x"),
		replace("three", "", "x"),
		replace("3:"+strings.Repeat("0", 4), "", "x"), // wrong hash length
	} {
		if _, err := versions.Rebase(base, cur, []hashline.Edit{e}, h); !errors.Is(err, versions.ErrNotBase) {
			t.Errorf("%+v: err = %v, want ErrNotBase", e, err)
		}
	}
}

func TestRebaseWithoutReferencesRebasesNothing(t *testing.T) {
	got, err := versions.Rebase(base, doc("x"), []hashline.Edit{{Op: hashline.OpAppend, Text: "y"}}, h)
	if err != nil || got.Refs != 0 || len(got.Moved) != 0 {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func TestConflictMessageShowsMarkedLinesAndMoves(t *testing.T) {
	// Another agent added a line on top, rewrote line 2 and deleted line 10.
	cur := doc("top", "l1", "l2", "TWO", "l4", "l5", "l6", "l7", "l8", "l9")
	_, err := versions.Rebase(base, cur, []hashline.Edit{
		replace(ref(base, 3), "", "x"),
		replace(ref(base, 8), "", "y"),
		{Op: hashline.OpInsertAfter, Start: ref(base, 10), Text: "z"},
	}, h)
	want := "2 line(s) changed since last read; use the updated refs below (>>> marks changed lines)\n" +
		"    2:" + h.Sum("l1") + "|l1\n" +
		"    3:" + h.Sum("l2") + "|l2\n" +
		">>> 4:" + h.Sum("TWO") + "|TWO\n" +
		"    5:" + h.Sum("l4") + "|l4\n" +
		"    6:" + h.Sum("l5") + "|l5\n" +
		"...\n" +
		"    9:" + h.Sum("l8") + "|l8\n" +
		"    10:" + h.Sum("l9") + "|l9\n" +
		"edit 2 (anchor): line 10 (" + ref(base, 10) + ") was deleted by another change since you read the file; pick another line from the current lines and retry\n" +
		"these references still hold and moved: " + ref(base, 8) + " is now line 9"
	var ce *versions.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *versions.ConflictError", err)
	}
	// By default three lines on each side, which here join the two views.
	line := func(n int, s string) string { return fmt.Sprintf("    %d:%s|%s\n", n, h.Sum(s), s) }
	wide := strings.Replace(want, "    2:", line(1, "top")+"    2:", 1)
	wide = strings.Replace(wide, "...\n", line(7, "l6")+line(8, "l7"), 1)
	if err.Error() != wide {
		t.Errorf("message:\n%v\nwant:\n%s", err, wide)
	}
	ce.SetContext(cur, h, 2)
	if err.Error() != want {
		t.Errorf("message with two lines of context:\n%v\nwant:\n%s", err, want)
	}
	ce.SetContext(cur, h, 0)
	// The changed line alone, and the line beside the deleted one (the
	// last), which says where it was.
	if got := err.Error(); !strings.Contains(got, "lines)\n>>> 4:"+h.Sum("TWO")+"|TWO\n...\n"+line(10, "l9")+"edit 2") {
		t.Errorf("message with no context shows other lines than the changed one and the deleted one's neighbour:\n%s", got)
	}
}

func TestRebaseKeepsReferencesToLinesNoChangeTouched(t *testing.T) {
	// Another agent turned blocks cacbca into bcacc (60 lines a block): the
	// first three blocks of the base survive as the second to fourth of the
	// current file. A diff that matched the shared run bca instead marked
	// them changed and refused a reference the agent had every right to.
	base, _ := blockDoc("cacbca", 60)
	cur, lines := blockDoc("bcacc", 60)
	edits := []hashline.Edit{replace(ref(base, 30), "", "X")}
	got, err := versions.Rebase(base, cur, edits, h)
	if err != nil {
		t.Fatalf("rebasing a reference to an untouched line: %v", err)
	}
	if want := []versions.Move{{Ref: ref(base, 30), From: 30, To: 90}}; !reflect.DeepEqual(got.Moved, want) {
		t.Errorf("moved = %+v, want %+v", got.Moved, want)
	}
	res, err := hashline.ApplyEdits(cur, got.Edits, hashline.ApplyOptions{Hasher: h})
	if err != nil {
		t.Fatalf("applying the rebased edits %+v: %v", got.Edits, err)
	}
	lines[89] = "X"
	if res.Doc.Text() != doc(lines...).Text() {
		t.Errorf("result:\n%s", res.Doc.Text())
	}
}
