package versions

import (
	"fmt"

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
