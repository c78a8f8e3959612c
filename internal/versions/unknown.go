package versions

import (
	"fmt"
	"strings"

	"github.com/hashline/hashline/internal/hashline"
)

// maxRangeShown caps the lines inside one referenced range that
// UnknownBase shows after the range's start.
const maxRangeShown = 40

// UnknownBase checks a batch made against a base version whose content is
// not known (no snapshot of it is held, in memory or on disk) while the
// file is now another version, cur. Without the base no referenced line
// can be proven unchanged: a hash of a few hex digits names a line's
// content only up to collisions, so a line that moved can be mistaken for
// another with the same hash, and the lines strictly inside a range are
// not referenced at all, so a change to them cannot be seen. Every line
// reference of the batch is therefore reported as a stale reference
// against cur (Problem.Line is the number the reference gave, Fresh the
// current lines around it, all the lines of a range up to a bound: Around
// says which, for BatchError.SetContext), and
// the whole batch is refused; a retry from those current tags is checked
// against cur.
//
// It returns nil when the batch has no line reference: append and prepend
// add lines at an end of the file, and replaceText matches its exact old
// text in cur (once, unless all), so none of them reads a line of the base
// by number or changes text it did not name. They are resolved against cur
// exactly as Rebase resolves them with a known base. When some reference is
// malformed, only those are reported (INVALID_REF, as the planner would):
// rereading cannot fix them.
func UnknownBase(cur *hashline.Document, edits []hashline.Edit, h hashline.Hasher) *hashline.BatchError {
	refs, bad := batchRefs(edits, h)
	if len(bad) > 0 {
		return &hashline.BatchError{Problems: bad}
	}
	return staleRefs(cur, refs, h, func(r refAt, last int, now hashline.TaggedLine) string {
		if now.Number == 0 {
			return fmt.Sprintf("edit %d (%s): line %d (%s) was read from a version the server no longer holds, and the file now has %d lines; pick the line from the current lines and retry",
				r.edit, r.field, r.ref.Line, r.raw, last)
		}
		return fmt.Sprintf("edit %d (%s): line %d (%s) was read from a version the server no longer holds, so it cannot be checked; line %d is now %s",
			r.edit, r.field, r.ref.Line, r.raw, r.ref.Line, now.Tag())
	})
}

// refAt is one line reference of a batch; for a range's start, end is the
// range's last line (else 0).
type refAt struct {
	refField
	end int
}

// batchRefs returns the line references of edits, in batch order: the
// start and end of a replace or delete, the anchor of an insertion. A
// malformed reference (unparsable, or a hash of another length than h's)
// is reported as an INVALID_REF problem instead, as the planner would.
func batchRefs(edits []hashline.Edit, h hashline.Hasher) (refs []refAt, bad []hashline.Problem) {
	parse := func(edit int, field, raw string) (refAt, bool) {
		r, err := hashline.ParseRef(raw)
		switch {
		case err != nil:
			bad = append(bad, hashline.Problem{
				EditIndex: edit, Field: field, Reason: hashline.ReasonInvalidRef, Ref: raw,
				Message: fmt.Sprintf("edit %d (%s): %v", edit, field, err),
			})
			return refAt{}, false
		case len(r.Hash) != h.Len():
			bad = append(bad, hashline.Problem{
				EditIndex: edit, Field: field, Reason: hashline.ReasonInvalidRef, Ref: raw, Line: r.Line,
				Message: fmt.Sprintf("edit %d (%s): %q has a %d-digit hash but this file's tags have %d digits; copy the tag exactly from read output", edit, field, raw, len(r.Hash), h.Len()),
			})
			return refAt{}, false
		}
		return refAt{refField: refField{edit: edit, field: field, raw: raw, ref: r}}, true
	}
	for i, e := range edits {
		switch e.Op {
		case hashline.OpReplace, hashline.OpDelete:
			start, okS := parse(i, "start", e.Start)
			if strings.TrimSpace(e.End) == "" {
				refs = append(refs, start)
				continue
			}
			end, okE := parse(i, "end", e.End)
			if okS && okE && end.ref.Line > start.ref.Line {
				start.end = end.ref.Line
			}
			refs = append(refs, start, end)
		case hashline.OpInsertAfter, hashline.OpInsertBefore:
			anchor, _ := parse(i, "anchor", e.Start)
			refs = append(refs, anchor)
		}
	}
	return refs, bad
}

// staleRefs reports refs as stale references against cur: Problem.Line is
// the number the reference gave, Fresh the current lines around it (all
// the lines of a range, up to maxRangeShown), and the message is what msg
// says of it, given cur's length and the current line at that number (a
// zero TaggedLine past the end). It returns nil for no refs.
func staleRefs(cur *hashline.Document, refs []refAt, h hashline.Hasher, msg func(r refAt, last int, now hashline.TaggedLine) string) *hashline.BatchError {
	if len(refs) == 0 {
		return nil
	}
	problems := make([]hashline.Problem, len(refs))
	for k, r := range refs {
		n := r.ref.Line
		p := hashline.Problem{
			EditIndex: r.edit, Field: r.field, Reason: hashline.ReasonStaleRef, Ref: r.raw, Line: n,
			ExpectedHash: r.ref.Hash,
		}
		switch last := cur.Len(); {
		case n > last:
			p.Around = [2]int{last, last}
			p.Message = msg(r, last, hashline.TaggedLine{})
		default:
			now := hashline.TaggedLine{Number: n, Hash: cur.Hash(h, n), Content: cur.Line(n)}
			p.ActualHash, p.CurrentLine, p.Tags = now.Hash, now.String(), []int{n}
			p.Around = [2]int{n, n}
			if r.end > 0 {
				p.Around[1] = min(r.end, n+maxRangeShown)
			}
			p.Message = msg(r, last, now)
		}
		p.Fresh = hashline.FreshAround(cur, h, p.Around, hashline.StaleContext)
		problems[k] = p
	}
	return &hashline.BatchError{Problems: problems}
}
