package hashline

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// checkTagged checks res.TaggedDiff and res.Shifts against the documents:
// the diff applied to the old lines gives the new ones (a removed line
// where the diff puts it, an unchanged line equal on both sides), every
// ref it shows is the new document's, it shows the context asked for, and
// the shifts say where every line the diff leaves alone went.
func checkTagged(t testing.TB, d *Document, res *Result, opts ApplyOptions) {
	t.Helper()
	if err := verifyTagged(d, res, opts); err != nil {
		t.Fatalf("%v\ntagged diff:\n%s\nshifts: %+v", err, res.TaggedDiff, res.Shifts)
	}
}

func verifyTagged(d *Document, res *Result, opts ApplyOptions) error {
	nd := res.Doc
	cut := func(s string) string { return CutLine(s, opts.MaxLineBytes) }
	if res.TaggedDiff == "" {
		return fmt.Errorf("no tagged diff for a batch that changed the file")
	}
	// newOf[o] is the new number of old line o when the diff leaves it
	// alone (0: removed).
	newOf := make([]int, d.Len()+1)
	oldPos, newPos := 1, 1 // next old and new line to account for
	copyTo := func(n int) error {
		for ; newPos < n; newPos, oldPos = newPos+1, oldPos+1 {
			if oldPos > d.Len() || cut(d.Line(oldPos)) != cut(nd.Line(newPos)) {
				return fmt.Errorf("new line %d is not shown and is not old line %d", newPos, oldPos)
			}
			newOf[oldPos] = newPos
		}
		return nil
	}
	ctx := max(opts.Context, 0)
	prevLast := 0 // the last new line the previous hunk showed
	for h, hunk := range strings.Split(res.TaggedDiff, "\n...\n") {
		lines := strings.Split(hunk, "\n")
		first := 0 // the hunk's first shown new line
		for _, l := range lines {
			if l != "" && l[0] != '-' {
				n, _, _ := strings.Cut(l[1:], ":")
				first, _ = strconv.Atoi(n)
				break
			}
		}
		if first == 0 {
			if nd.Len() != 0 {
				return fmt.Errorf("hunk %d shows no line of the new file", h)
			}
			first = 1
		}
		if h > 0 && first <= prevLast+1 {
			return fmt.Errorf("hunk %d starts at line %d, next to the previous one, which ends at %d", h, first, prevLast)
		}
		if err := copyTo(first); err != nil {
			return err
		}
		// kinds is the hunk's lines as ' ', '-' and '+'.
		var kinds []byte
		for i, l := range lines {
			if l == "" {
				return fmt.Errorf("hunk %d line %d is empty", h, i)
			}
			switch l[0] {
			case '-':
				if oldPos > d.Len() || l[1:] != cut(d.Line(oldPos)) {
					return fmt.Errorf("removed line %q is not old line %d", l, oldPos)
				}
				oldPos++
			case ' ', '+':
				tag, content, ok := strings.Cut(l[1:], "|")
				r, err := ParseRef(tag)
				if !ok || err != nil {
					return fmt.Errorf("line %q has no tag", l)
				}
				if r.Line != newPos || newPos > nd.Len() || r.Hash != nd.Hash(opts.Hasher, newPos) || content != cut(nd.Line(newPos)) {
					return fmt.Errorf("line %q is not new line %d", l, newPos)
				}
				if l[0] == ' ' {
					if oldPos > d.Len() || cut(d.Line(oldPos)) != content {
						return fmt.Errorf("unchanged line %q is not old line %d", l, oldPos)
					}
					newOf[oldPos] = newPos
					oldPos++
				}
				prevLast = newPos
				newPos++
			default:
				return fmt.Errorf("line %q has no prefix", l)
			}
			kinds = append(kinds, l[0])
		}
		// Context: ctx lines on each side of the changes, or all there
		// are; at least one around a deletion.
		k := string(kinds)
		lead := len(k) - len(strings.TrimLeft(k, " "))
		trail := len(k) - len(strings.TrimRight(k, " "))
		if lead == len(k) {
			return fmt.Errorf("hunk %d changes nothing", h)
		}
		// A deletion's one line on each side can also stand beside an
		// insertion at the same gap, so with no context asked for a hunk
		// that removes lines may show one on either side.
		ok := func(got, avail int) bool {
			if ctx == 0 && strings.Contains(k, "-") {
				return got == 0 || got == min(1, avail)
			}
			return got == min(ctx, avail)
		}
		if firstChange := first + lead; !ok(lead, firstChange-1) {
			return fmt.Errorf("hunk %d shows %d lines before its first change (context %d)", h, lead, ctx)
		}
		if lastChange := newPos - 1 - trail; !ok(trail, nd.Len()-lastChange) {
			return fmt.Errorf("hunk %d shows %d lines after its last change (context %d)", h, trail, ctx)
		}
	}
	if err := copyTo(nd.Len() + 1); err != nil {
		return err
	}
	if oldPos != d.Len()+1 {
		return fmt.Errorf("the diff accounts for %d old lines, the file had %d", oldPos-1, d.Len())
	}
	// Every line the diff leaves alone moved as the shifts say.
	for i, s := range res.Shifts {
		if s.From > s.To || s.From < 1 || s.To > d.Len() || newOf[s.From] == 0 || newOf[s.To] == 0 ||
			i > 0 && (s.From <= res.Shifts[i-1].To || s.By == res.Shifts[i-1].By) || i == 0 && s.By == 0 {
			return fmt.Errorf("shift %d %+v is not a run of untouched lines of its own", i, s)
		}
	}
	k := 0
	for o := 1; o <= d.Len(); o++ {
		for k < len(res.Shifts) && o > res.Shifts[k].To {
			k++
		}
		if newOf[o] == 0 {
			continue
		}
		by := 0
		switch {
		case k < len(res.Shifts) && o >= res.Shifts[k].From:
			by = res.Shifts[k].By
		case k > 0:
			return fmt.Errorf("old line %d, now %d, is in no shift", o, newOf[o])
		}
		if newOf[o] != o+by {
			return fmt.Errorf("old line %d is now line %d, the shifts say %d", o, newOf[o], o+by)
		}
	}
	return nil
}

func TestTaggedDiff(t *testing.T) {
	h := Hasher{}
	tests := []struct {
		name    string
		in      string
		edits   []Edit
		context int
		want    string
		shifts  []Shift
	}{
		{"a replaced line shows its new ref between its context", "a\nb\nc\nd\ne\n",
			[]Edit{{Op: OpReplace, Start: "@3", Text: "C"}}, 1,
			" 2:" + h.Sum("b") + "|b\n-c\n+3:" + h.Sum("C") + "|C\n 4:" + h.Sum("d") + "|d", nil},
		{"an insertion moves the lines after it down", "a\nb\nc\n",
			[]Edit{{Op: OpInsertAfter, Start: "@1", Text: "x\ny"}}, 0,
			"+2:" + h.Sum("x") + "|x\n+3:" + h.Sum("y") + "|y", []Shift{{From: 2, To: 3, By: 2}}},
		{"a deletion shows a line on each side even without context", "a\nb\nc\nd\n",
			[]Edit{{Op: OpDelete, Start: "@2", End: "@3"}}, 0,
			" 1:" + h.Sum("a") + "|a\n-b\n-c\n 2:" + h.Sum("d") + "|d", []Shift{{From: 4, To: 4, By: -2}}},
		{"lines rewritten as they were are context", "a\nb\nc\nd\n",
			[]Edit{{Op: OpReplace, Start: "@1", End: "@4", Text: "a\nB\nc\nd"}}, 0,
			"-b\n+2:" + h.Sum("B") + "|B", nil},
		{"changes whose context meets share a hunk", "1\n2\n3\n4\n5\n6\n",
			[]Edit{{Op: OpReplace, Start: "@2", Text: "two"}, {Op: OpReplace, Start: "@5", Text: "five"}}, 1,
			" 1:" + h.Sum("1") + "|1\n-2\n+2:" + h.Sum("two") + "|two\n 3:" + h.Sum("3") + "|3\n 4:" + h.Sum("4") + "|4\n-5\n+5:" + h.Sum("five") + "|five\n 6:" + h.Sum("6") + "|6", nil},
		{"changes apart are separated by ...", "1\n2\n3\n4\n5\n6\n7\n",
			[]Edit{{Op: OpReplace, Start: "@1", Text: "one"}, {Op: OpDelete, Start: "@7"}}, 0,
			"-1\n+1:" + h.Sum("one") + "|one\n...\n 6:" + h.Sum("6") + "|6\n-7", nil},
		{"runs that move differently are one shift each", "1\n2\n3\n4\n5\n6\n7\n8\n",
			[]Edit{{Op: OpInsertAfter, Start: "@2", Text: "x"}, {Op: OpDelete, Start: "@5", End: "@6"}}, 0,
			"+3:" + h.Sum("x") + "|x\n...\n 5:" + h.Sum("4") + "|4\n-5\n-6\n 6:" + h.Sum("7") + "|7",
			[]Shift{{From: 3, To: 4, By: 1}, {From: 7, To: 8, By: -1}}},
		{"a shift back to the old numbers is said too", "1\n2\n3\n4\n5\n6\n",
			[]Edit{{Op: OpInsertBefore, Start: "@2", Text: "x"}, {Op: OpDelete, Start: "@4"}}, 0,
			"+2:" + h.Sum("x") + "|x\n...\n 4:" + h.Sum("3") + "|3\n-4\n 5:" + h.Sum("5") + "|5",
			[]Shift{{From: 2, To: 3, By: 1}, {From: 5, To: 6, By: 0}}},
		{"moves alike across a change are one shift", "1\n2\n3\n4\n5\n",
			[]Edit{{Op: OpPrepend, Text: "0"}, {Op: OpReplace, Start: "@3", Text: "three"}}, 0,
			"+1:" + h.Sum("0") + "|0\n...\n-3\n+4:" + h.Sum("three") + "|three",
			[]Shift{{From: 1, To: 5, By: 1}}},
		{"deleting every line shows only removed lines", "a\nb\n",
			[]Edit{{Op: OpDelete, Start: "@1", End: "@2"}}, 3, "-a\n-b", nil},
		{"an ending alone is no change: appending after a last line without newline", "a\nb",
			[]Edit{{Op: OpAppend, Text: "c"}}, 1,
			" 2:" + h.Sum("b") + "|b\n+3:" + h.Sum("c") + "|c", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ParseText(tt.in)
			opts := ApplyOptions{Hasher: h, Context: tt.context}
			res, err := ApplyEdits(d, resolveEdits(d, h, tt.edits), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.TaggedDiff != tt.want {
				t.Errorf("tagged diff\n%s\nwant\n%s", res.TaggedDiff, tt.want)
			}
			if fmt.Sprint(res.Shifts) != fmt.Sprint(tt.shifts) {
				t.Errorf("shifts %+v, want %+v", res.Shifts, tt.shifts)
			}
			checkTagged(t, d, res, opts)
		})
	}
}
