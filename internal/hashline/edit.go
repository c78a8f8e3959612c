package hashline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Op is the kind of an edit.
type Op int

// The edit operations of the API. The zero value is invalid so that a
// forgotten op is reported instead of silently meaning "replace".
const (
	// OpReplace replaces lines Start..End (inclusive) with Text; an empty
	// Text deletes them.
	OpReplace Op = iota + 1
	// OpInsertAfter inserts Text after the line Start anchors.
	OpInsertAfter
	// OpInsertBefore inserts Text before the line Start anchors.
	OpInsertBefore
	// OpDelete deletes lines Start..End (inclusive).
	OpDelete
	// OpAppend adds Text at the end of the file; it needs no reference.
	OpAppend
	// OpPrepend adds Text at the start of the file; it needs no reference.
	OpPrepend
	// OpReplaceText replaces an exact occurrence of OldText with NewText,
	// for clients that have no tags.
	OpReplaceText
)

var opNames = [...]string{
	OpReplace:      "replace",
	OpInsertAfter:  "insertAfter",
	OpInsertBefore: "insertBefore",
	OpDelete:       "delete",
	OpAppend:       "append",
	OpPrepend:      "prepend",
	OpReplaceText:  "replaceText",
}

// String returns the op's API name, such as "insertAfter".
func (o Op) String() string {
	if o >= OpReplace && o <= OpReplaceText {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// ParseOp returns the Op with the given API name (as returned by String).
func ParseOp(name string) (Op, error) {
	for o := OpReplace; o <= OpReplaceText; o++ {
		if opNames[o] == name {
			return o, nil
		}
	}
	return 0, fmt.Errorf("unknown edit op %q; use one of %s", name, strings.Join(opNames[1:], ", "))
}

// Edit is one edit of a batch as the client sent it. References are raw
// strings so that problems can quote them exactly.
type Edit struct {
	// Op selects the operation.
	Op Op
	// Start is the first line of a replace or delete, or the anchor of an
	// insertAfter or insertBefore, as "LINE:HASH".
	Start string
	// End is the last line of a replace or delete; "" means Start.
	End string
	// Text is the new content of replace, insert, append and prepend, split
	// with SplitText.
	Text string
	// OldText is the exact text replaceText looks for.
	OldText string
	// NewText replaces OldText.
	NewText string
	// All makes replaceText replace every occurrence instead of requiring
	// exactly one.
	All bool
}

// Change is one resolved edit against the document it was planned on.
type Change struct {
	// EditIndex lists the edits that produced the change; identical
	// duplicate edits are merged into one change.
	EditIndex []int
	// Start and End are the 0-based half-open range of lines replaced.
	// Start == End is an insertion before line index Start; Start == Len()
	// appends.
	Start, End int
	// Lines are the new line contents, without endings.
	Lines []string
}

func (c Change) insertion() bool { return c.Start == c.End }

// Plan is a validated batch, ready to apply to the document it was planned on.
type Plan struct {
	// Changes are sorted by Start, an insertion before a replacement that
	// starts at the same line. No two changes overlap.
	Changes []Change
	// Warnings are notes for the client, such as an edit that changed
	// nothing; every repair is one of them too.
	Warnings []string
	// Repairs are the changes made to the edits' texts (see RepairKind),
	// in edit order.
	Repairs []Repair

	edits []string // a short description per edit, for NO_CHANGE messages
}

// planned is a change before duplicates are merged; field is the edit field
// named when the change overlaps another.
type planned struct {
	Change
	field string
	order int // -1 prepend, +1 append: on an empty file both insert at 0
}

// PlanEdits resolves edits against d. It checks every reference of every
// edit and returns a *BatchError with all problems found, so a model can fix
// a batch in one round trip; a batch is never planned partially. Unless
// planned with Strict, the edits' texts are repaired where a model's slip
// is unambiguous (see RepairKind), and refused where a repair would be a
// guess.
func PlanEdits(d *Document, edits []Edit, h Hasher, opts ...PlanOption) (*Plan, error) {
	if len(edits) == 0 {
		return nil, &BatchError{Problems: []Problem{{
			EditIndex: -1, Field: "edits", Reason: ReasonEmptyEdits,
			Message: "edits: the batch is empty; send at least one edit",
		}}}
	}
	var cfg planConfig
	for _, o := range opts {
		o(&cfg)
	}
	r := &resolver{d: d, h: h, plan: &Plan{}, strict: cfg.strict, touched: touchedLines(edits)}
	for i, e := range edits {
		r.plan.edits = append(r.plan.edits, describeEdit(e))
		r.resolve(i, e)
	}
	r.mergeAndCheckOverlaps()
	if len(r.problems) > 0 {
		// Overlaps are found in line order; report in edit order.
		slices.SortStableFunc(r.problems, func(a, b Problem) int { return a.EditIndex - b.EditIndex })
		return nil, &BatchError{Problems: r.problems}
	}
	return r.plan, nil
}

// describeEdit names an edit the way messages refer to it: "replace 3:ab".
func describeEdit(e Edit) string {
	s := e.Op.String()
	switch e.Op {
	case OpReplace, OpDelete, OpInsertAfter, OpInsertBefore:
		s += " " + strings.TrimSpace(e.Start)
		if end := strings.TrimSpace(e.End); end != "" && (e.Op == OpReplace || e.Op == OpDelete) {
			s += ".." + end
		}
	case OpReplaceText:
		old := e.OldText
		if len(old) > 40 {
			old = old[:cutPoint(old, 40)] + "…"
		}
		s += " " + strconv.Quote(old)
	}
	return s
}

// resolver accumulates the changes and problems of one PlanEdits call.
type resolver struct {
	d        *Document
	h        Hasher
	plan     *Plan
	changes  []planned
	problems []Problem
	joined   *joinedText // built on the first replaceText
	strict   bool        // no repairs
	// What the repairs learn of the whole document, on first need:
	// 0 not yet known, 1 yes, 2 no.
	tabbed int
	// touched lists, per edit, the lines its references name (a range's
	// start to end, an insert's anchor): a line another edit of the batch
	// touches is not an unchanged neighbour a text can echo.
	touched []lineSpan
}

// lineSpan is the lines first..last (1-based, inclusive) that an edit's
// references name; zero for an edit that names none or cannot be parsed.
type lineSpan struct{ first, last int }

// touchedLines returns the lines each edit's references name, as written
// (before any rebase or check: an edit whose references are wrong fails on
// its own).
func touchedLines(edits []Edit) []lineSpan {
	out := make([]lineSpan, len(edits))
	for i, e := range edits {
		switch e.Op {
		case OpReplace, OpDelete, OpInsertAfter, OpInsertBefore:
		default:
			continue
		}
		start, err := ParseRef(e.Start)
		if err != nil {
			continue
		}
		out[i] = lineSpan{start.Line, start.Line}
		if e.Op == OpReplace || e.Op == OpDelete {
			if end, err := ParseRef(e.End); err == nil && end.Line > start.Line {
				out[i].last = end.Line
			}
		}
	}
	return out
}

// touchedByOther reports whether an edit other than i names line n.
func (r *resolver) touchedByOther(i, n int) bool {
	for j, t := range r.touched {
		if j != i && t.first <= n && n <= t.last {
			return true
		}
	}
	return false
}

func (r *resolver) problem(p Problem) {
	r.problems = append(r.problems, p)
}

func (r *resolver) warn(format string, args ...any) {
	r.plan.Warnings = append(r.plan.Warnings, fmt.Sprintf(format, args...))
}

func (r *resolver) add(i int, field string, start, end int, lines []string) {
	r.changes = append(r.changes, planned{Change: Change{EditIndex: []int{i}, Start: start, End: end, Lines: lines}, field: field})
}

func (r *resolver) resolve(i int, e Edit) {
	switch e.Op {
	case OpReplace, OpDelete:
		start, okS := r.ref(i, "start", e.Start)
		end, okE := start, okS
		if strings.TrimSpace(e.End) != "" {
			end, okE = r.ref(i, "end", e.End)
		}
		if okS && okE && end < start {
			r.problem(Problem{
				EditIndex: i, Field: "end", Reason: ReasonLineOutOfRange, Ref: e.End, Line: end,
				Message: fmt.Sprintf("edit %d (end): range ends at line %d before it starts at line %d; end must not precede start", i, end, start),
			})
			okE = false
		}
		var lines []string
		okT := true
		if e.Op == OpReplace {
			lines, okT = r.editText(i, e.Text, span{op: e.Op, at: start - 1, end: end, line: start}, okS && okE)
		} else if e.Text != "" {
			r.warn("edit %d: delete ignores text; use replace to put new lines in place of old ones", i)
		}
		if okS && okE && okT {
			r.add(i, "start", start-1, end, lines)
		}
	case OpInsertAfter, OpInsertBefore:
		anchor, ok := r.ref(i, "anchor", e.Start)
		at := anchor
		if e.Op == OpInsertBefore {
			at--
		}
		lines, okR := r.editText(i, e.Text, span{op: e.Op, at: at, end: at, line: anchor}, ok)
		okT := okR && r.needText(i, e.Op, lines)
		if ok && okT {
			r.add(i, "anchor", at, at, lines)
		}
	case OpAppend, OpPrepend:
		at, order := 0, -1
		if e.Op == OpAppend {
			at, order = r.d.Len(), 1
		}
		lines, ok := r.editText(i, e.Text, span{op: e.Op, at: at, end: at}, true)
		if ok && r.needText(i, e.Op, lines) {
			r.add(i, "text", at, at, lines)
			r.changes[len(r.changes)-1].order = order
		}
	case OpReplaceText:
		r.replaceText(i, e)
	default:
		r.problem(Problem{
			EditIndex: i, Field: "op", Reason: ReasonInvalidEdit,
			Message: fmt.Sprintf("edit %d (op): unknown op %s; use one of %s", i, e.Op, strings.Join(opNames[1:], ", ")),
		})
	}
}

// needText reports an insert without lines: it would change nothing, and a
// model that sends one almost certainly lost its text.
func (r *resolver) needText(i int, op Op, lines []string) bool {
	if len(lines) > 0 {
		return true
	}
	r.problem(Problem{
		EditIndex: i, Field: "text", Reason: ReasonInvalidEdit,
		Message: fmt.Sprintf(`edit %d (text): %s needs text; "" inserts nothing (send "\n" for one empty line)`, i, op),
	})
	return false
}

// ref parses and checks one reference; it records a problem and returns
// false if the reference is unusable.
func (r *resolver) ref(i int, field, raw string) (int, bool) {
	ref, err := ParseRef(raw)
	if err != nil {
		r.problem(Problem{
			EditIndex: i, Field: field, Reason: ReasonInvalidRef, Ref: raw,
			Message: fmt.Sprintf("edit %d (%s): %v", i, field, err),
		})
		return 0, false
	}
	if len(ref.Hash) != r.h.Len() {
		r.problem(Problem{
			EditIndex: i, Field: field, Reason: ReasonInvalidRef, Ref: raw, Line: ref.Line,
			Message: fmt.Sprintf("edit %d (%s): %q has a %d-digit hash but this file's tags have %d digits; copy the tag exactly from read output", i, field, raw, len(ref.Hash), r.h.Len()),
		})
		return 0, false
	}
	n := r.d.Len()
	if ref.Line > n {
		r.problem(Problem{
			EditIndex: i, Field: field, Reason: ReasonLineOutOfRange, Ref: raw, Line: ref.Line,
			ExpectedHash: ref.Hash, Fresh: r.d.Tagged(r.h, n-2, n),
			Message: fmt.Sprintf("edit %d (%s): line %d is past the end of the file, which has %s; re-read the file for current refs", i, field, ref.Line, plural(n, "line")),
		})
		return 0, false
	}
	cur := r.d.Line(ref.Line)
	if actual := r.d.Hash(r.h, ref.Line); actual != ref.Hash {
		tl := TaggedLine{Number: ref.Line, Hash: actual, Content: cur}
		r.problem(Problem{
			EditIndex: i, Field: field, Reason: ReasonStaleRef, Ref: raw, Line: ref.Line,
			ExpectedHash: ref.Hash, ActualHash: actual, CurrentLine: tl.String(), Tags: []int{ref.Line},
			Fresh: FreshAround(r.d, r.h, [2]int{ref.Line, ref.Line}, StaleContext), Around: [2]int{ref.Line, ref.Line},
			Message: fmt.Sprintf("edit %d (%s): line %d changed since last read (ref %s, now %s); use the fresh refs", i, field, ref.Line, ref, tl.Tag()),
		})
		return 0, false
	}
	return ref.Line, true
}

// mergeAndCheckOverlaps sorts the changes, merges identical duplicates and
// records a problem for every change that collides with an earlier one.
func (r *resolver) mergeAndCheckOverlaps() {
	cs := r.changes
	slices.SortStableFunc(cs, func(a, b planned) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if ai, bi := a.insertion(), b.insertion(); ai != bi {
			if ai {
				return -1
			}
			return 1
		}
		if a.End != b.End {
			return a.End - b.End
		}
		return a.order - b.order
	})
	out := make([]planned, 0, len(cs))
	cover := -1 // index in out of the replacement reaching furthest down
	for _, c := range cs {
		dup := false
		for j := len(out) - 1; j >= 0 && out[j].Start == c.Start && out[j].End == c.End; j-- {
			if slices.Equal(out[j].Lines, c.Lines) {
				r.warn("edit %d repeats edit %d; applied once", c.EditIndex[0], out[j].EditIndex[0])
				out[j].EditIndex = append(out[j].EditIndex, c.EditIndex...)
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if c.insertion() {
			if k := len(out) - 1; k >= 0 && out[k].insertion() && out[k].Start == c.Start && !(out[k].order < 0 && c.order > 0) {
				r.overlap(c, fmt.Sprintf("inserts at the same point as edit %d (%s); put both texts into one edit", out[k].EditIndex[0], r.pointName(c.Start)))
			} else if cover >= 0 && out[cover].Start < c.Start && c.Start < out[cover].End {
				r.overlap(c, fmt.Sprintf("inserts inside %s, which edit %d replaces; put the new lines into edit %d's text instead", lineRange(out[cover].Start+1, out[cover].End), out[cover].EditIndex[0], out[cover].EditIndex[0]))
			}
		} else if cover >= 0 && out[cover].End > c.Start {
			o := out[cover]
			r.overlap(c, fmt.Sprintf("overlaps edit %d: both change %s; merge them into one edit", o.EditIndex[0], lineRange(c.Start+1, min(c.End, o.End))))
		}
		out = append(out, c)
		if !c.insertion() && (cover < 0 || c.End > out[cover].End) {
			cover = len(out) - 1
		}
	}
	r.plan.Changes = make([]Change, len(out))
	for i, c := range out {
		r.plan.Changes[i] = c.Change
	}
}

func (r *resolver) overlap(c planned, what string) {
	i := c.EditIndex[0]
	r.problem(Problem{
		EditIndex: i, Field: c.field, Reason: ReasonOverlappingEdits,
		Message: fmt.Sprintf("edit %d (%s) %s", i, c.field, what),
	})
}

// plural returns "1 line", "3 lines".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// lineRange names 1-based lines from..to for messages.
func lineRange(from, to int) string {
	if from == to {
		return "line " + strconv.Itoa(from)
	}
	return "lines " + strconv.Itoa(from) + "-" + strconv.Itoa(to)
}

// pointName describes an insertion point for messages.
func (r *resolver) pointName(at int) string {
	switch {
	case at == 0:
		return "the start of the file"
	case at == r.d.Len():
		return "the end of the file"
	}
	return "after line " + strconv.Itoa(at)
}
