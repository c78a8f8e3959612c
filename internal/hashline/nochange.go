package hashline

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// A refused no-op is the failure models hit most: they send again a change
// that is already made, often many times over. The refusal therefore shows
// what a model needs to stop: the lines it targeted as they are now, with
// tags to edit from, and where the text it sent already stands.

// LineSpan is a run of lines, 1-based and inclusive.
type LineSpan struct {
	Start, End int
}

// String names the span for messages: "line 5" or "lines 5-7".
func (s LineSpan) String() string { return lineRange(s.Start, s.End) }

const (
	// noChangeShown is the most lines of one target a NO_CHANGE problem
	// shows: a longer target is shown by its first and last half of that,
	// which carry the refs a retry needs.
	noChangeShown = 10
	// noChangeNear is how far from the target another place holding the
	// sent text is called nearby, with its distance.
	noChangeNear = 20
	// noChangeOthers is the most other places named.
	noChangeOthers = 3
)

// noChange is the error for a batch that would not change the file: one
// NO_CHANGE problem per edit, each with the lines the edit targeted as they
// are now (Fresh) and the places the text it sent already stands (TextAt).
func (p *Plan) noChange(d *Document, opts ApplyOptions) error {
	byEdit := map[int][]Change{}
	for _, c := range p.Changes {
		for _, i := range c.EditIndex {
			byEdit[i] = append(byEdit[i], c)
		}
	}
	e := &BatchError{}
	for i := range max(p.editCount(), 1) {
		e.Problems = append(e.Problems, p.noChangeProblem(d, opts, i, byEdit[i]))
	}
	return e
}

// noChangeProblem explains why edit i, whose changes are cs, changes
// nothing.
func (p *Plan) noChangeProblem(d *Document, opts ApplyOptions, i int, cs []Change) Problem {
	pr := Problem{EditIndex: i, Field: "edits", Reason: ReasonNoChange}
	head := fmt.Sprintf("edit %d (%s) leaves the file unchanged%s", i, p.editName(i), p.repairNote(i))
	if len(cs) == 0 {
		pr.Message = head + "; nothing was written — re-read the file if you expected a difference"
		return pr
	}
	var targets, at []LineSpan
	same := true // every change writes exactly what its lines hold now
	for _, c := range cs {
		targets = append(targets, changeSpan(d, c))
		if c.End-c.Start == len(c.Lines) && len(c.Lines) > 0 && linesAt(d, c.Start, c.Lines) {
			at = append(at, LineSpan{c.Start + 1, c.End})
		} else {
			same = false
		}
	}
	var others []LineSpan
	more := 0
	if c := cs[0]; same && len(cs) == 1 && searchable(c.Lines) {
		others, more = occurrences(d, c.Lines, c.Start)
	}
	pr.TextAt = slices.Concat(at, others)
	var b strings.Builder
	b.WriteString(head)
	if same {
		verb := "hold"
		if len(at) == 1 && at[0].Start == at[0].End {
			verb = "holds"
		}
		fmt.Fprintf(&b, ": %s already %s the text you sent, so nothing was written; the change may already be made.", joinSpans(at), verb)
	} else {
		b.WriteString(": together with the batch's other edits it leaves the file byte-identical, so nothing was written.")
	}
	if len(others) > 0 {
		fmt.Fprintf(&b, " It also stands at %s.", describePlaces(others, more, cs[0].Start+1))
	}
	pr.Fresh = targetLines(d, opts, targets)
	if len(pr.Fresh) > 0 {
		pr.Line = pr.Fresh[0].Number
		pr.ShowsTags = true
		b.WriteString(" Do not send it again; for a different change, edit from these lines:")
	}
	pr.Message = b.String()
	return pr
}

// changeSpan is the lines a change targets: its range, or for an insertion
// the lines on either side of the point.
func changeSpan(d *Document, c Change) LineSpan {
	if c.End > c.Start {
		return LineSpan{c.Start + 1, c.End}
	}
	from, to, _ := d.clamp(c.Start, c.Start+1)
	return LineSpan{from, to}
}

// linesAt reports whether lines stand in d from the 0-based line start on.
func linesAt(d *Document, start int, lines []string) bool {
	if start < 0 || start+len(lines) > d.Len() {
		return false
	}
	for k, l := range lines {
		if d.Line(start+1+k) != l {
			return false
		}
	}
	return true
}

// searchable reports whether a text is worth looking for elsewhere: one of
// only blank lines and punctuation (a closing brace) stands everywhere.
func searchable(lines []string) bool {
	for _, l := range lines {
		if strings.IndexFunc(l, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			return true
		}
	}
	return false
}

// occurrences returns the places other than the 0-based line target where
// lines stand in d, nearest to it first, at most noChangeOthers of them,
// and how many more there are.
func occurrences(d *Document, lines []string, target int) ([]LineSpan, int) {
	var found []int
	for s := 0; s+len(lines) <= d.Len(); s++ {
		if s != target && d.Line(s+1) == lines[0] && linesAt(d, s, lines) {
			found = append(found, s)
		}
	}
	slices.SortStableFunc(found, func(a, b int) int { return abs(a-target) - abs(b-target) })
	more := max(len(found)-noChangeOthers, 0)
	found = found[:len(found)-more]
	spans := make([]LineSpan, len(found))
	for k, s := range found {
		spans[k] = LineSpan{s + 1, s + len(lines)}
	}
	return spans, more
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// joinSpans names spans for a sentence: "line 3", "lines 3-5 and line 9".
func joinSpans(spans []LineSpan) string {
	names := make([]string, len(spans))
	for k, s := range spans {
		names[k] = s.String()
	}
	return joinWords(names)
}

// describePlaces names other places of a text, with the distance of the
// nearby ones from line target, and counts more places not named:
// "lines 40-42 (3 lines below), line 90 and 2 more places".
func describePlaces(spans []LineSpan, more, target int) string {
	names := make([]string, len(spans))
	for k, s := range spans {
		names[k] = s.String()
		switch dist := s.Start - target; {
		case dist > 0 && dist <= noChangeNear:
			names[k] += fmt.Sprintf(" (%s below)", plural(dist, "line"))
		case dist < 0 && -dist <= noChangeNear:
			names[k] += fmt.Sprintf(" (%s above)", plural(-dist, "line"))
		}
	}
	if more > 0 {
		names = append(names, plural(more, "more place"))
	}
	return joinWords(names)
}

// joinWords joins "a", "b", "c" as "a, b and c".
func joinWords(ws []string) string {
	if len(ws) <= 1 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

// targetLines returns the tagged lines of the targets, merged, each target
// longer than noChangeShown shown by its first and last lines.
func targetLines(d *Document, opts ApplyOptions, targets []LineSpan) []TaggedLine {
	seen := map[int]bool{}
	var out []TaggedLine
	add := func(from, to int) {
		for _, t := range d.Tagged(opts.Hasher, from, to) {
			if !seen[t.Number] {
				seen[t.Number] = true
				t.Content = CutLine(t.Content, opts.MaxLineBytes)
				out = append(out, t)
			}
		}
	}
	for _, t := range targets {
		if t.End-t.Start+1 <= noChangeShown {
			add(t.Start, t.End)
			continue
		}
		add(t.Start, t.Start+noChangeShown/2-1)
		add(t.End-noChangeShown/2+1, t.End)
	}
	slices.SortFunc(out, func(a, b TaggedLine) int { return a.Number - b.Number })
	return out
}
