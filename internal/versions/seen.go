package versions

import (
	"fmt"
	"math"

	"github.com/hashline/hashline/internal/hashline"
)

// ReasonNotShown is the StaleRef reason of a reference that matches no line
// the agent was shown (Unshown).
const ReasonNotShown = "NOT_SHOWN"

// Check reports whether every line reference of edits names a line of doc
// by number and hash, and one that shown has (nil: any line): the start and
// end of a replace or delete, the anchor of an insertion. The lines
// strictly inside a range need not have been shown: a rebase from doc
// checks that nobody changed them, and the agent chose the range by its
// ends. A batch without line references passes; one with a malformed
// reference does not.
func Check(doc *hashline.Document, edits []hashline.Edit, h hashline.Hasher, shown func(line int) bool) bool {
	refs, bad := batchRefs(edits, h)
	if len(bad) > 0 {
		return false
	}
	for _, r := range refs {
		if !holds(doc, r, h, shown) {
			return false
		}
	}
	return true
}

// HasLineRefs reports whether edits hold a line reference (well formed or
// not): append, prepend and replaceText hold none.
func HasLineRefs(edits []hashline.Edit) bool {
	for _, e := range edits {
		switch e.Op {
		case hashline.OpReplace, hashline.OpDelete, hashline.OpInsertAfter, hashline.OpInsertBefore:
			return true
		}
	}
	return false
}

// holds reports whether r names line r.ref.Line of doc, by hash, and shown
// has that line.
func holds(doc *hashline.Document, r refAt, h hashline.Hasher, shown func(int) bool) bool {
	n := r.ref.Line
	return n <= doc.Len() && doc.Hash(h, n) == r.ref.Hash && (shown == nil || shown(n))
}

// Unshown reports the line references of edits that do not name a line of
// cur the agent was shown (shown), by number and hash, when they match no
// version the agent saw either: the agent never saw the line its number
// names now, and a hash of a few hex digits matching there proves nothing
// (a collision, or a number from before lines moved). Each is a stale
// reference with the current lines around it, as UnknownBase reports them.
// It returns nil when every reference holds; malformed references are
// reported alone, as INVALID_REF.
func Unshown(cur *hashline.Document, edits []hashline.Edit, h hashline.Hasher, shown func(line int) bool) *hashline.BatchError {
	refs, bad := batchRefs(edits, h)
	if len(bad) > 0 {
		return &hashline.BatchError{Problems: bad}
	}
	var failing []refAt
	for _, r := range refs {
		if !holds(cur, r, h, shown) {
			failing = append(failing, r)
		}
	}
	return staleRefs(cur, failing, h, func(r refAt, last int, now hashline.TaggedLine) string {
		switch {
		case now.Number == 0:
			return fmt.Sprintf("edit %d (%s): %s matches no line you were shown, in this file as it is now or in a version of it you read before, and the file now has %d lines; pick the line from the current lines and retry",
				r.edit, r.field, r.raw, last)
		case now.Hash == r.ref.Hash:
			return fmt.Sprintf("edit %d (%s): you were never shown line %d of this file as it is now, and %s matches no line you were shown in a version you read before; line %d is now %s: check that it is the line you mean and retry with its tag",
				r.edit, r.field, r.ref.Line, r.raw, r.ref.Line, now.Tag())
		}
		return fmt.Sprintf("edit %d (%s): %s matches no line you were shown, in this file as it is now or in a version of it you read before; line %d is now %s",
			r.edit, r.field, r.raw, r.ref.Line, now.Tag())
	})
}

// WellFormed reports whether every line reference of edits parses, with a
// hash of h's length.
func WellFormed(edits []hashline.Edit, h hashline.Hasher) bool {
	_, bad := batchRefs(edits, h)
	return len(bad) == 0
}

// RefLines returns the line numbers the well-formed line references of
// edits name, in batch order.
func RefLines(edits []hashline.Edit, h hashline.Hasher) []int {
	refs, _ := batchRefs(edits, h)
	out := make([]int, 0, len(refs))
	for _, r := range refs {
		if r.ref.Line > 0 {
			out = append(out, r.ref.Line)
		}
	}
	return out
}

// Carry returns the lines of a version made from prev's by the changes
// hunks (Diff of the two) that the agent was shown in prev and the changes
// left alone: at the same number in lines, at another in moved (with the
// lines of prev.Moved the changes left alone, wherever they are now). The
// agent's own edit made the new version, and its reply says how the lines
// it left alone moved.
func Carry(prev Seen, hunks []Hunk) (lines, moved Lines) {
	type run struct{ from, to, by int } // 1-based old lines from..to, now at +by
	var runs []run
	from, by := 1, 0
	for _, h := range hunks {
		if h.A0 >= from {
			runs = append(runs, run{from, h.A0, by})
		}
		from, by = h.A1+1, h.B1-h.A1
	}
	runs = append(runs, run{from, math.MaxInt - max(by, 0), by})
	place := func(l Lines, moving bool) {
		for _, s := range l {
			for _, r := range runs {
				lo, hi := max(s.Start, r.from), min(s.End, r.to)
				if lo > hi {
					continue
				}
				sp := Span{lo + r.by, hi + r.by}
				if r.by == 0 && !moving {
					lines = append(lines, sp)
				} else {
					moved = append(moved, sp)
				}
			}
		}
	}
	place(prev.Lines, false)
	place(prev.Moved, true)
	return merge(lines), merge(moved)
}

// Landing returns, for each line reference of edits in batch order, the
// line of the current file it lands on under one reading: read against the
// current file itself (r and ce nil: its own number), rebased onto it (r),
// or refused by a conflict (ce: the references of a failing edit land
// nowhere, 0; the others where the conflict says they moved, or at their
// own number).
func Landing(edits []hashline.Edit, h hashline.Hasher, r *Rebased, ce *ConflictError) []int {
	if r != nil {
		edits = r.Edits
	}
	refs, _ := batchRefs(edits, h)
	out := make([]int, len(refs))
	failed := map[int]bool{}
	moved := map[string]int{}
	if ce != nil {
		for _, c := range ce.Conflicts {
			failed[c.EditIndex] = true
		}
		for _, m := range ce.Moved {
			moved[m.Ref] = m.To
		}
	}
	for k, ref := range refs {
		switch to, ok := moved[ref.ref.String()]; {
		case failed[ref.edit]:
		case ok:
			out[k] = to
		default:
			out[k] = ref.ref.Line
		}
	}
	return out
}

// Ambiguous reports the line references of edits that two readings of the
// batch (Landing) land on different lines of cur: the reference names a
// line the agent was shown in both versions, but not the same line, and
// nothing says which the agent meant (a short hash that matches in both is
// a collision in one of them). Each is a stale reference with the current
// lines around both places. It returns nil when the readings agree
// wherever both land.
func Ambiguous(cur *hashline.Document, edits []hashline.Edit, h hashline.Hasher, a, b []int, other string) *hashline.BatchError {
	refs, _ := batchRefs(edits, h)
	var problems []hashline.Problem
	for k, r := range refs {
		if k >= len(a) || k >= len(b) || a[k] == 0 || b[k] == 0 || a[k] == b[k] {
			continue
		}
		now := hashline.TaggedLine{Number: a[k], Hash: cur.Hash(h, a[k]), Content: cur.Line(a[k])}
		there := hashline.TaggedLine{Number: b[k], Hash: cur.Hash(h, b[k]), Content: cur.Line(b[k])}
		fresh := cur.Tagged(h, min(a[k], b[k])-2, min(a[k], b[k])+2)
		for _, t := range cur.Tagged(h, max(a[k], b[k])-2, max(a[k], b[k])+2) {
			if t.Number > fresh[len(fresh)-1].Number {
				fresh = append(fresh, t)
			}
		}
		problems = append(problems, hashline.Problem{
			EditIndex: r.edit, Field: r.field, Reason: hashline.ReasonStaleRef, Ref: r.raw, Line: r.ref.Line,
			ExpectedHash: r.ref.Hash, ActualHash: now.Hash, CurrentLine: now.String(), Tags: []int{a[k]}, Fresh: fresh,
			Message: fmt.Sprintf("edit %d (%s): %s names two different lines you were shown: the one now at %s, and line %d of version %s you read before, now %s; retry with the tag of the one you mean",
				r.edit, r.field, r.raw, now.Tag(), r.ref.Line, other, there.Tag()),
		})
	}
	if len(problems) == 0 {
		return nil
	}
	return &hashline.BatchError{Problems: problems}
}
