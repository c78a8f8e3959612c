package versions_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

func TestCheck(t *testing.T) {
	shown := versions.Lines{{1, 3}, {7, 7}}.Has
	for _, tt := range []struct {
		name  string
		edits []hashline.Edit
		shown func(int) bool
		want  bool
	}{
		{"no references", []hashline.Edit{{Op: hashline.OpAppend, Text: "x"}, {Op: hashline.OpReplaceText, OldText: "l9", NewText: "x"}}, shown, true},
		{"a shown line that matches", []hashline.Edit{replace(ref(base, 2), "", "x")}, shown, true},
		{"a shown line of another hash", []hashline.Edit{replace("2:"+otherHash(ref(base, 2)), "", "x")}, shown, false},
		{"a line not shown that matches", []hashline.Edit{replace(ref(base, 5), "", "x")}, shown, false},
		{"any line when nothing is known of what was shown", []hashline.Edit{replace(ref(base, 5), "", "x")}, nil, true},
		{"a range shown at both ends, not inside", []hashline.Edit{{Op: hashline.OpDelete, Start: ref(base, 3), End: ref(base, 7)}}, shown, true},
		{"a range whose end was not shown", []hashline.Edit{replace(ref(base, 3), ref(base, 8), "x")}, shown, false},
		{"an anchor not shown", []hashline.Edit{{Op: hashline.OpInsertBefore, Start: ref(base, 6), Text: "x"}}, shown, false},
		{"past the end", []hashline.Edit{replace("11:00", "", "x")}, nil, false},
		{"a malformed reference", []hashline.Edit{replace("2:zz", "", "x")}, nil, false},
		{"a hash of another length", []hashline.Edit{replace(ref(base, 2)+"0", "", "x")}, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := versions.Check(base, tt.edits, h, tt.shown); got != tt.want {
				t.Errorf("Check = %v, want %v", got, tt.want)
			}
		})
	}
	if !versions.WellFormed([]hashline.Edit{replace(ref(base, 2), ref(base, 3), "x")}, h) || versions.WellFormed([]hashline.Edit{replace("2:zz", "", "x")}, h) {
		t.Error("WellFormed")
	}
	if got := versions.RefLines([]hashline.Edit{replace(ref(base, 2), ref(base, 5), "x"), {Op: hashline.OpAppend}, {Op: hashline.OpInsertAfter, Start: ref(base, 9)}}, h); !slices.Equal(got, []int{2, 5, 9}) {
		t.Errorf("RefLines = %v", got)
	}
}

// otherHash is a hash of ref's length that is not ref's.
func otherHash(ref string) string {
	_, hash, _ := strings.Cut(ref, ":")
	if hash == "00" {
		return "01"
	}
	return "00"
}

func TestUnshown(t *testing.T) {
	shown := versions.Range(1, 3).Has
	edits := []hashline.Edit{
		replace(ref(base, 2), "", "shown and matching: not reported"),
		replace(ref(base, 5), "", "not shown, matching"),
		replace("3:"+otherHash(ref(base, 3)), "", "shown, another hash"),
		{Op: hashline.OpInsertAfter, Start: "12:00", Text: "past the end"},
		{Op: hashline.OpAppend, Text: "no reference"},
	}
	b := versions.Unshown(base, edits, h, shown)
	if b == nil || len(b.Problems) != 3 {
		t.Fatalf("problems = %+v, want three", b)
	}
	for i, w := range []struct {
		edit, line int
		current    string
		says       string
	}{
		{1, 5, ref(base, 5) + "|l5", "never shown line 5"},
		{2, 3, ref(base, 3) + "|l3", "matches no line you were shown"},
		{3, 12, "", "now has 10 lines"},
	} {
		p := b.Problems[i]
		if p.Reason != hashline.ReasonStaleRef || p.EditIndex != w.edit || p.Line != w.line || p.CurrentLine != w.current || len(p.Fresh) == 0 || !strings.Contains(p.Message, w.says) {
			t.Errorf("problem %d = %+v, want edit %d line %d current %q, saying %q", i, p, w.edit, w.line, w.current, w.says)
		}
	}
	if b := versions.Unshown(base, edits[:1], h, shown); b != nil {
		t.Errorf("a batch that holds: %+v", b)
	}
	if b := versions.Unshown(base, []hashline.Edit{replace("x", "", "y"), replace(ref(base, 5), "", "z")}, h, shown); b == nil || len(b.Problems) != 1 || b.Problems[0].Reason != hashline.ReasonInvalidRef {
		t.Errorf("malformed: %+v, want the INVALID_REF alone", b)
	}
}

func TestConflictListsTheReferencesThatHeld(t *testing.T) {
	cur := doc("top", "l1", "l2", "l3", "l4", "B5", "l6", "l7", "l8", "l9", "l10")
	_, err := versions.Rebase(base, cur, []hashline.Edit{
		replace(ref(base, 5), "", "x"), // changed
		replace(ref(base, 8), "", "y"), // moved to 9
	}, h)
	var ce *versions.ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || !slices.Equal(ce.Held, []int{9}) {
		t.Fatalf("err = %v, want one conflict and line 9 held", err)
	}
}

func TestCarry(t *testing.T) {
	r := versions.Range
	// The new version: line 3 replaced by two lines, line 8 deleted.
	cur := doc("l1", "l2", "A", "B", "l4", "l5", "l6", "l7", "l9", "l10")
	hunks := versions.Diff(base, cur)
	for _, tt := range []struct {
		name        string
		prev        versions.Seen
		lines, move versions.Lines
	}{
		{"every line: those before and after the changes keep their numbers, those between move, the changed are gone",
			versions.Seen{Lines: r(1, 10)}, versions.Lines{{1, 2}, {9, 10}}, r(5, 8)},
		{"a page after changes that added and removed as many lines keeps its numbers",
			versions.Seen{Lines: r(9, 10)}, r(9, 10), nil},
		{"a page between them moves by what the first added",
			versions.Seen{Lines: r(4, 6)}, nil, r(5, 7)},
		{"lines known only as moved stay moved, even back at their number",
			versions.Seen{Moved: r(1, 2)}, nil, r(1, 2)},
		{"nothing shown carries nothing", versions.Seen{}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lines, moved := versions.Carry(tt.prev, hunks)
			if !slices.Equal(lines, tt.lines) || !slices.Equal(moved, tt.move) {
				t.Errorf("Carry = %v, %v; want %v, %v", lines, moved, tt.lines, tt.move)
			}
		})
	}
	for n, want := range map[int]string{1: "l1", 2: "l2", 5: "l4", 8: "l7", 9: "l9", 10: "l10"} {
		if cur.Line(n) != want {
			t.Fatalf("the test's new version: line %d is %q, want %q", n, cur.Line(n), want)
		}
	}
}

func TestLandingAndAmbiguous(t *testing.T) {
	cur := doc("top", "l1", "l2", "l3", "l4", "B5", "l6", "l7", "l8", "l9", "l10")
	edits := []hashline.Edit{
		replace(ref(base, 2), ref(base, 3), "x"),                     // both move down one
		{Op: hashline.OpInsertAfter, Start: ref(base, 5), Text: "y"}, // changed: a conflict
		replace(ref(base, 9), "", "z"),
	}
	_, err := versions.Rebase(base, cur, edits, h)
	var ce *versions.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	if got := versions.Landing(edits, h, nil, ce); !slices.Equal(got, []int{3, 4, 0, 10}) {
		t.Errorf("landing after the conflict = %v, want [3 4 0 10]", got)
	}
	ok := []hashline.Edit{edits[0], edits[2]}
	r, err := versions.Rebase(base, cur, ok, h)
	if err != nil {
		t.Fatal(err)
	}
	rebased := versions.Landing(ok, h, r, nil)
	if !slices.Equal(rebased, []int{3, 4, 10}) {
		t.Errorf("landing of the rebase = %v, want [3 4 10]", rebased)
	}
	asIs := versions.Landing(ok, h, nil, nil)
	if !slices.Equal(asIs, []int{2, 3, 9}) {
		t.Errorf("landing as it is = %v, want [2 3 9]", asIs)
	}
	if b := versions.Ambiguous(cur, ok, h, rebased, rebased, "v1"); b != nil {
		t.Errorf("one reading is ambiguous: %v", b)
	}
	if b := versions.Ambiguous(cur, ok, h, rebased, []int{0, 4, 10}, "v1"); b != nil {
		t.Errorf("readings that agree wherever both land are ambiguous: %v", b)
	}
	b := versions.Ambiguous(cur, ok, h, asIs, rebased, "v1")
	if b == nil || len(b.Problems) != 3 {
		t.Fatalf("problems = %+v, want one per reference", b)
	}
	p := b.Problems[2]
	var fresh []int
	for _, l := range p.Fresh {
		fresh = append(fresh, l.Number)
	}
	if p.Line != 9 || p.CurrentLine != ref(cur, 9)+"|l8" || !slices.Equal(fresh, []int{7, 8, 9, 10, 11}) ||
		!strings.Contains(p.Message, "v1") || !strings.Contains(p.Message, ref(cur, 10)) {
		t.Errorf("problem = %+v, fresh %v", p, fresh)
	}
}
