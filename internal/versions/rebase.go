package versions

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashline/hashline/internal/hashline"
)

// Reasons of a Conflict: the names of the API's hashline.v1.StaleRefReason
// values (proto/hashline/v1/errors.proto) without their prefix, as the
// server sends them in StaleRef.reason. A server test fails if one here is
// not a name of the enum.
const (
	// ReasonChanged: the referenced line itself was changed since the base.
	ReasonChanged = "CHANGED"
	// ReasonDeleted: the referenced line was deleted since the base.
	ReasonDeleted = "DELETED"
	// ReasonConflict: the referenced line still stands, but a line inside
	// the referenced range, or the insertion point, was changed or
	// inserted into since the base.
	ReasonConflict = "CONFLICT"
)

// ErrNotBase is wrapped by the error Rebase returns when some reference
// does not match the base version, so the batch was not made against it.
var ErrNotBase = errors.New("the references were not made against the base version")

// Move is one reference that a rebase moved to another line.
type Move struct {
	// Ref is the reference as LINE:HASH with the base line number.
	Ref string
	// From is its line in the base, To its line in the current file.
	From, To int
}

// Rebased is the outcome of a successful rebase.
type Rebased struct {
	// Edits are the input edits with every reference rewritten to its line
	// in the current file; edits without references are unchanged.
	Edits []hashline.Edit
	// Moved lists the references whose line number changed, once each, in
	// the order they appear in the batch.
	Moved []Move
	// Refs counts the references that were mapped; 0 means the batch had
	// none and nothing was rebased.
	Refs int
}

// Conflict is one reference that cannot be carried from the base onto the
// current file.
type Conflict struct {
	// EditIndex is the index of the edit in the batch.
	EditIndex int
	// Field is the reference's field: "start", "end" or "anchor".
	Field string
	// Ref is the reference as the request gave it.
	Ref string
	// Line is the referenced line number in the base version.
	Line int
	// Reason is ReasonChanged, ReasonDeleted or ReasonConflict.
	Reason string
	// ExpectedHash is the hash the reference carried.
	ExpectedHash string
	// ActualHash is the hash of CurrentLine; "" when it is gone.
	ActualHash string
	// CurrentLine is the tagged current line that stands where the
	// referenced line was (for CONFLICT the referenced line itself, at its
	// current number); "" when it was deleted.
	CurrentLine string
	// Current is CurrentLine's number in the current file; 0 when the
	// line was deleted.
	Current int
	// Fresh are the current tagged lines around the change, to retry with:
	// the lines Around with hashline.StaleContext lines (or as many as
	// ConflictError.SetContext says) on each side.
	Fresh []hashline.TaggedLine
	// Around is the run of current lines, 1-based and inclusive, that
	// Fresh shows with context: the changed lines, or, when Around[0] is
	// Around[1]+1, the gap between two lines where lines were deleted.
	Around [2]int
	// Marked are the numbers, in the current file, of the lines of Fresh
	// that another change wrote since the base.
	Marked []int
	// Message says what happened, for a model.
	Message string
}

// ConflictError reports the references of a batch that other changes
// touched since the base. Nothing of the batch applies.
type ConflictError struct {
	// BaseVersion and CurrentVersion name the two versions; Rebase leaves
	// them empty and the caller fills them in for the message.
	BaseVersion, CurrentVersion string
	// Conflicts are the failing references, in batch order.
	Conflicts []Conflict
	// Moved are the references that did map, with their new numbers, so a
	// retry can fix every reference at once.
	Moved []Move
	// Held are the current line numbers of every reference that did map,
	// moved or not.
	Held []int
}

// SetContext shows n lines (n < 0: none) on each side of every conflict's
// lines in Fresh, taken from cur, the current file.
func (e *ConflictError) SetContext(cur *hashline.Document, h hashline.Hasher, n int) {
	for i := range e.Conflicts {
		c := &e.Conflicts[i]
		c.Fresh = hashline.FreshAround(cur, h, c.Around, n)
	}
}

// Error renders the conflicts for a model as a stale-reference error does:
// the header and the current lines around every conflict, changed lines
// marked ">>> ". A reference that was deleted or conflicts without having
// changed itself adds a sentence saying so, and the references that did
// map are listed with their new numbers, so one retry can fix them all.
func (e *ConflictError) Error() string {
	var b strings.Builder
	refs := map[int]bool{}
	marked := map[int]bool{}
	lines := map[int]hashline.TaggedLine{}
	for _, c := range e.Conflicts {
		refs[c.Line] = true
		for _, n := range c.Marked {
			marked[n] = true
		}
		for _, t := range c.Fresh {
			lines[t.Number] = t
		}
	}
	hashline.WriteStaleView(&b, len(refs), lines, marked)
	for _, c := range e.Conflicts {
		if c.Reason != ReasonChanged {
			b.WriteString(c.Message)
			b.WriteByte('\n')
		}
	}
	if len(e.Moved) > 0 {
		b.WriteString("these references still hold and moved: ")
		for i, m := range e.Moved {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s is now line %d", m.Ref, m.To)
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// refField is one reference of one edit.
type refField struct {
	edit  int
	field string
	raw   string
	ref   hashline.Ref
}

// Rebase carries the references of edits, made against base, onto cur (see
// the package documentation for the exact rules). It returns an error
// wrapping ErrNotBase if some reference does not match base (unparseable,
// past its end, or another hash), and a *ConflictError listing every
// reference that other changes touched. Edits without references are passed
// through for the caller to resolve against cur.
func Rebase(base, cur *hashline.Document, edits []hashline.Edit, h hashline.Hasher) (*Rebased, error) {
	var refs []refField
	for i, e := range edits {
		switch e.Op {
		case hashline.OpReplace, hashline.OpDelete:
			refs = append(refs, refField{edit: i, field: "start", raw: e.Start})
			if strings.TrimSpace(e.End) != "" {
				refs = append(refs, refField{edit: i, field: "end", raw: e.End})
			}
		case hashline.OpInsertAfter, hashline.OpInsertBefore:
			refs = append(refs, refField{edit: i, field: "anchor", raw: e.Start})
		}
	}
	for k := range refs {
		r, err := hashline.ParseRef(refs[k].raw)
		if err != nil {
			return nil, fmt.Errorf("%w: edit %d (%s): %v", ErrNotBase, refs[k].edit, refs[k].field, err)
		}
		if len(r.Hash) != h.Len() || r.Line > base.Len() || h.Sum(base.Line(r.Line)) != r.Hash {
			return nil, fmt.Errorf("%w: edit %d (%s): %s is not a line of that version", ErrNotBase, refs[k].edit, refs[k].field, r)
		}
		refs[k].ref = r
	}
	out := &Rebased{Edits: slices.Clone(edits), Refs: len(refs)}
	if len(refs) == 0 {
		return out, nil
	}
	rb := &rebaser{base: base, cur: cur, h: h, m: lineMap{hunks: Diff(base, cur)}}
	newLine := make([]int, len(refs))
	for k := 0; k < len(refs); {
		// The references of one edit are consecutive.
		j := k + 1
		for j < len(refs) && refs[j].edit == refs[k].edit {
			j++
		}
		rb.edit(edits[refs[k].edit].Op, refs[k:j], newLine[k:j])
		k = j
	}
	rb.meetings(edits, refs, newLine)
	seen := map[string]bool{}
	for k, r := range refs {
		if newLine[k] == 0 || newLine[k] == r.ref.Line || seen[r.ref.String()] {
			continue
		}
		seen[r.ref.String()] = true
		out.Moved = append(out.Moved, Move{Ref: r.ref.String(), From: r.ref.Line, To: newLine[k]})
	}
	if len(rb.conflicts) > 0 {
		var held []int
		for _, n := range newLine {
			if n > 0 {
				held = append(held, n)
			}
		}
		ce := &ConflictError{Conflicts: rb.conflicts, Moved: out.Moved, Held: held}
		ce.SetContext(cur, h, hashline.StaleContext)
		return nil, ce
	}
	for k, r := range refs {
		e := &out.Edits[r.edit]
		nr := hashline.Ref{Line: newLine[k], Hash: r.ref.Hash}.String()
		switch r.field {
		case "start", "anchor":
			e.Start = nr
		case "end":
			e.End = nr
		}
	}
	return out, nil
}

// rebaser checks and maps the references of one batch.
type rebaser struct {
	base, cur *hashline.Document
	h         hashline.Hasher
	m         lineMap
	conflicts []Conflict
}

// edit checks the references of one edit and stores their current line
// numbers in to (0 where a reference does not map).
func (r *rebaser) edit(op hashline.Op, refs []refField, to []int) {
	ok := true
	for k, f := range refs {
		i := f.ref.Line - 1
		if hk, changed := r.m.changed(i); changed {
			r.lineConflict(f, hk)
			ok = false
			continue
		}
		to[k] = r.m.to(i) + 1
	}
	if !ok {
		clear(to) // a failing edit moves none of its references
		return
	}
	first := refs[0]
	switch op {
	case hashline.OpInsertAfter, hashline.OpInsertBefore:
		gap := first.ref.Line // the gap after the anchor
		where := "right after"
		if op == hashline.OpInsertBefore {
			gap--
			where = "right before"
		}
		if hk, ins := r.m.insertedAt(gap, op == hashline.OpInsertAfter); ins {
			r.pointConflict(first, to[0], hk, fmt.Sprintf(
				"edit %d (anchor): another change inserted lines %s line %d (%s), where this edit inserts too; the order of the two is unknown, so merge your text with the marked lines and retry",
				first.edit, where, first.ref.Line, first.raw))
			clear(to)
		}
	case hashline.OpReplace, hashline.OpDelete:
		start, end := first.ref.Line, first.ref.Line
		if len(refs) > 1 {
			end = refs[1].ref.Line
		}
		if end <= start {
			return // a single line, or a backwards range the planner reports
		}
		if hk, touched := r.m.touched(start-1, end); touched {
			r.pointConflict(first, to[0], hk, fmt.Sprintf(
				"edit %d (start): lines %d-%d still start and end as you read them, but another change rewrote lines inside the range since; %s them from the marked lines and retry",
				first.edit, start, end, op))
			clear(to)
		}
	}
}

// point is one insertion of a batch: its gap in the base and in the current
// file; ref indexes the batch's references (-1 for append and prepend).
type point struct {
	edit, ref int
	base, cur int
}

// meetings reports insertions of the batch that were at different points
// of the base but meet at one point of the current file, because another
// change deleted every line between them: the planner would refuse them as
// one point, and only the agent can say how the two texts go together.
func (r *rebaser) meetings(edits []hashline.Edit, refs []refField, to []int) {
	var pts []point
	for k, f := range refs {
		if f.field != "anchor" || to[k] == 0 {
			continue
		}
		p := point{edit: f.edit, ref: k, base: f.ref.Line, cur: to[k]} // insertAfter: the gap after the anchor
		if edits[f.edit].Op == hashline.OpInsertBefore {
			p.base, p.cur = p.base-1, p.cur-1
		}
		pts = append(pts, p)
	}
	if len(pts) == 0 {
		return
	}
	for i, e := range edits {
		switch e.Op {
		case hashline.OpPrepend:
			pts = append(pts, point{edit: i, ref: -1, base: 0, cur: 0})
		case hashline.OpAppend:
			pts = append(pts, point{edit: i, ref: -1, base: r.base.Len(), cur: r.cur.Len()})
		}
	}
	slices.SortStableFunc(pts, func(a, b point) int { return a.base - b.base })
	for i := 1; i < len(pts); i++ {
		x, y := pts[i], pts[i-1]
		if x.base == y.base || x.cur != y.cur {
			continue
		}
		if x.ref < 0 {
			x, y = y, x
		}
		if x.ref < 0 {
			continue // append and prepend alone: the planner knows that case
		}
		f := refs[x.ref]
		now := r.tagged(to[x.ref])
		r.conflicts = append(r.conflicts, Conflict{
			EditIndex: f.edit, Field: f.field, Ref: f.raw, Line: f.ref.Line,
			Reason: ReasonConflict, ExpectedHash: f.ref.Hash,
			ActualHash: now.Hash, CurrentLine: now.String(), Current: now.Number,
			Around: [2]int{x.cur + 1, x.cur},
			Message: fmt.Sprintf("edit %d (anchor): another change deleted every line between this insertion and edit %d's, so both now insert at one point; put both texts into one edit and retry",
				f.edit, y.edit),
		})
		for k := range refs {
			if refs[k].edit == f.edit {
				to[k] = 0
			}
		}
	}
}

// lineConflict reports a referenced line that hunk hk replaced or deleted.
func (r *rebaser) lineConflict(f refField, hk Hunk) {
	c := Conflict{
		EditIndex: f.edit, Field: f.field, Ref: f.raw, Line: f.ref.Line,
		ExpectedHash: f.ref.Hash,
	}
	if hk.B0 == hk.B1 {
		c.Reason = ReasonDeleted
		// Show the lines on both sides of where it was.
		c.Around = [2]int{hk.B0 + 1, hk.B0}
		c.Message = fmt.Sprintf("edit %d (%s): line %d (%s) was deleted by another change since you read the file; pick another line from the current lines and retry",
			f.edit, f.field, f.ref.Line, f.raw)
		r.conflicts = append(r.conflicts, c)
		return
	}
	c.Reason = ReasonChanged
	// The current line at the same offset into the block, or its last line.
	at := hk.B0 + min(f.ref.Line-1-hk.A0, hk.B1-hk.B0-1) + 1
	now := r.tagged(at)
	c.CurrentLine, c.ActualHash, c.Current = now.String(), now.Hash, now.Number
	c.Around, c.Marked = r.window(hk, at)
	c.Message = fmt.Sprintf("edit %d (%s): line %d (%s) was changed by another change since you read the file; it is now %s",
		f.edit, f.field, f.ref.Line, f.raw, now.Tag())
	r.conflicts = append(r.conflicts, c)
}

// pointConflict reports a reference whose own line stands (now at line
// cur) but whose range or insertion point hunk hk touched.
func (r *rebaser) pointConflict(f refField, cur int, hk Hunk, msg string) {
	now := r.tagged(cur)
	c := Conflict{
		EditIndex: f.edit, Field: f.field, Ref: f.raw, Line: f.ref.Line,
		Reason: ReasonConflict, ExpectedHash: f.ref.Hash,
		ActualHash: now.Hash, CurrentLine: now.String(), Current: now.Number, Message: msg,
	}
	if hk.B0 == hk.B1 {
		c.Around = [2]int{hk.B0 + 1, hk.B0}
	} else {
		c.Around, c.Marked = r.window(hk, hk.B0+1)
	}
	r.conflicts = append(r.conflicts, c)
}

// maxMarked caps the changed lines one conflict shows.
const maxMarked = 10

// window returns the run of current lines of hunk hk around line at
// (1-based) that a conflict shows, at most maxMarked of them, and their
// numbers, all of them changed.
func (r *rebaser) window(hk Hunk, at int) ([2]int, []int) {
	from := max(hk.B0+1, at-maxMarked/2)
	to := min(hk.B1, from+maxMarked-1)
	var marked []int
	for n := from; n <= to; n++ {
		marked = append(marked, n)
	}
	return [2]int{from, to}, marked
}

func (r *rebaser) tagged(n int) hashline.TaggedLine {
	c := r.cur.Line(n)
	return hashline.TaggedLine{Number: n, Hash: r.h.Sum(c), Content: c}
}
