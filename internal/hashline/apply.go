package hashline

import (
	"fmt"
	"slices"
	"strings"
)

// ApplyOptions controls what Apply reports besides the new document.
type ApplyOptions struct {
	// Hasher tags the lines of windows and Replaced.
	Hasher Hasher
	// Context is the number of unchanged lines around each change, in the
	// diffs and in windows. Negative means 0.
	Context int
	// OldLabel and NewLabel name the two sides of the diff, such as
	// "a/x.go" and "b/x.go".
	OldLabel, NewLabel string
	// MaxLineBytes cuts long lines in windows and Replaced (see CutLine);
	// 0 means no limit.
	MaxLineBytes int
}

// Window is a run of fresh tagged lines of the new file around one or more
// changes, so a model can chain edits without reading the file again.
type Window struct {
	// Start and End are 1-based inclusive line numbers in the new file.
	Start, End int
	// Lines are the tagged lines Start..End.
	Lines []TaggedLine
}

// Result is the outcome of applying a plan.
type Result struct {
	// Doc is the new document.
	Doc *Document
	// Diff is the unified diff from the old document to the new one.
	Diff string
	// TaggedDiff is the changes as a model reads them, the fresh refs
	// included: each change with Context unchanged lines around it, one
	// line each,
	//
	//	 LINE:HASH|CONTENT   an unchanged line
	//	-CONTENT             a removed line (it has no reference any more)
	//	+LINE:HASH|CONTENT   an added line
	//
	// where LINE:HASH is the line's reference in the new document, and
	// "..." between changes whose context does not meet. A removed line
	// stands before the line that now follows it; a deletion shows at
	// least one line on each side. Lines are compared and shown without
	// their endings (Diff has those) and cut as in windows; the text has
	// no final newline.
	TaggedDiff string
	// Shifts say how the numbers of the lines the batch did not touch
	// changed; empty when none did.
	Shifts []Shift
	// Windows hold fresh tags around each change in the new file; windows
	// that overlap or touch are merged.
	Windows []Window
	// Replaced are the lines removed or overwritten with different content,
	// with their old numbers and hashes: the "-" lines of Diff, except a
	// last line that only gained or lost its ending.
	Replaced []TaggedLine
	// Warnings are the plan's warnings plus a note for every edit that
	// changed nothing in a batch that changed something.
	Warnings []string
	// Repairs are the plan's repairs of the edits' texts.
	Repairs []Repair
	// Hunks are the runs of old lines the batch's changes replaced and
	// the new lines that took their place, in order; every other line was
	// copied as it was (at most its ending changed). A change that rewrote
	// a line with the same content counts as replacing it.
	Hunks []Hunk
}

// Hunk is one change of a batch: old lines [OldStart, OldEnd) became new
// lines [NewStart, NewEnd), all 0-based.
type Hunk struct {
	OldStart, OldEnd, NewStart, NewEnd int
}

// segment is a run of the output: either old lines copied as they are or
// the lines of one change.
type segment struct {
	change     int // index into Plan.Changes, or -1 for untouched lines
	start, end int // old 0-based line range
	outStart   int // byte offset in the output (without BOM)
	outEnd     int
	newLine    int // 0-based line number in the new file of the first line
	newLines   int // number of lines emitted
}

// emitter builds the new text and remembers, for line endings, what the last
// emitted line looks like.
type emitter struct {
	// out is a strings.Builder, grown once to the most the batch can
	// write (see Apply), for its allocation: a Builder's buffer is not
	// zeroed first, and on a large file zeroing costs as much as the copy.
	out       strings.Builder
	starts    []int // offset in out of each emitted line
	lines     int
	openLast  bool // the last emitted line has no ending yet
	lastEOL   int  // length of the last emitted line's ending
	lastEmpty bool // the last emitted line has no content
	lastCR    bool // the last emitted line's content ends in "\r"
	dom       string
}

// line writes one line. A previous line left without an ending (the old
// last line of a file without a final newline) gets the dominant ending
// first, because it is no longer last.
func (e *emitter) line(content, eol string) {
	if e.openLast {
		e.close(e.dom)
	}
	e.starts = append(e.starts, e.out.Len())
	e.out.WriteString(content)
	e.lines++
	e.openLast, e.lastEOL = true, 0
	e.lastEmpty, e.lastCR = content == "", strings.HasSuffix(content, "\r")
	if eol != "" {
		e.close(eol)
	}
}

// close ends the last emitted line with eol. A line whose content ends in
// "\r" gets "\r\n" instead of "\n", since "\r" + "\n" would read back as a
// CRLF ending and the "\r" would vanish from the content.
func (e *emitter) close(eol string) {
	if eol == "\n" && e.lastCR {
		eol = "\r\n"
	}
	e.out.WriteString(eol)
	e.openLast, e.lastEOL = false, len(eol)
}

// Apply applies the plan to d, the document it was planned on. Every change
// refers to the original line numbers, so the new text is built in memory in
// one pass, copying runs of untouched lines byte for byte; nothing is
// written anywhere. If the result equals d it returns a *BatchError with one
// NO_CHANGE problem per edit.
//
// Endings follow the file: the last line of a replacement keeps the ending
// of the last line it replaces, other lines that take the place of old lines
// keep those lines' endings, and lines beyond that take DominantEOL. Whether
// the file ends with a newline is kept, except that an empty last line keeps
// (or gets) an ending, since without one it would not exist; a file without
// lines keeps only its BOM.
func (p *Plan) Apply(d *Document, opts ApplyOptions) (*Result, error) {
	if err := p.check(d); err != nil {
		return nil, err
	}
	n := d.Len()
	em := &emitter{starts: make([]int, 0, n+p.addedLines()+1), dom: d.DominantEOL()}
	// The old text, the new lines with endings, and the ending that may
	// close an old last line without one.
	em.out.Grow(len(d.text) + p.addedBytes() + len("\r\n"))
	segs := make([]segment, 0, 2*len(p.Changes)+1)
	copyLines := func(from, to int) {
		if from >= to {
			return
		}
		s := segment{change: -1, start: from, end: to, outStart: em.out.Len(), newLine: em.lines, newLines: to - from}
		// No line can be open here: only the old last line, or a change
		// ending at it, lacks an ending, and no untouched line follows them.
		// The copied lines' starts move by the same amount as their text.
		shift := em.out.Len() - d.starts[from]
		k := len(em.starts)
		em.starts = append(em.starts, d.starts[from:to]...)
		if shift != 0 {
			moved := em.starts[k:]
			for i := range moved {
				moved[i] += shift
			}
		}
		em.out.WriteString(d.text[d.starts[from]:d.starts[to]])
		em.lines += to - from
		last := d.EOL(to)
		em.openLast, em.lastEOL = last == "", len(last)
		em.lastEmpty, em.lastCR = d.Line(to) == "", strings.HasSuffix(d.Line(to), "\r")
		segs = append(segs, s)
	}
	prev := 0
	for ci, c := range p.Changes {
		copyLines(prev, c.Start)
		s := segment{change: ci, start: c.Start, end: c.End, outStart: em.out.Len(), newLine: em.lines, newLines: len(c.Lines)}
		k := c.End - c.Start
		for i, l := range c.Lines {
			eol := em.dom
			switch {
			case i == len(c.Lines)-1 && k > 0:
				eol = d.EOL(c.End)
			case i < k-1:
				eol = d.EOL(c.Start + i + 1)
			}
			em.line(l, eol)
		}
		segs = append(segs, s)
		prev = c.End
	}
	copyLines(prev, n)
	strip := 0
	switch {
	case em.lines == 0:
	case em.openLast && em.lastEmpty:
		// An empty last line without an ending would not be a line at all.
		em.close(em.dom)
	case !d.FinalNewline() && !em.openLast && !em.lastEmpty:
		// The old file had no final newline; the new one must not gain
		// one, unless that would make an empty last line vanish.
		strip = em.lastEOL
	}
	// em.out is never written again, so the new document shares it.
	newText := em.out.String()
	newText = newText[:len(newText)-strip]
	for i := range segs {
		if i+1 < len(segs) {
			segs[i].outEnd = segs[i+1].outStart
		} else {
			segs[i].outEnd = len(newText)
		}
		// Stripping the final ending may cut into earlier, empty-output
		// segments' bounds.
		segs[i].outStart = min(segs[i].outStart, len(newText))
		segs[i].outEnd = min(segs[i].outEnd, len(newText))
	}
	if unchanged(d, segs, newText) {
		return nil, p.noChange(d, opts)
	}
	if !d.bom && strings.HasPrefix(newText, utf8BOM) {
		// On disk the result would start with a byte order mark, which
		// every reader (this one too) takes as a BOM, not as content:
		// the first line would silently lose a character.
		return nil, &BatchError{Problems: []Problem{{
			EditIndex: -1, Field: "edits", Reason: ReasonInvalidEdit,
			Message: "the batch would leave U+FEFF (a byte order mark) as the first character of a file that has no BOM, where it would be read as a BOM rather than as text; remove U+FEFF from the text, or keep a line before it",
		}}}
	}
	res := &Result{}
	for _, s := range segs {
		if s.change >= 0 {
			res.Hunks = append(res.Hunks, Hunk{OldStart: s.start, OldEnd: s.end, NewStart: s.newLine, NewEnd: s.newLine + s.newLines})
		}
	}
	// The new document's lines are where the emitter put them, and its
	// endings are the old ones plus what the changed runs changed: no
	// second pass over the text.
	crlf, lf := endings(d, segs, newText)
	res.Doc = newDocument(newText, d.bom, append(em.starts, len(newText)), crlf, lf)
	carrySums(d, res.Doc, segs)
	ctx := max(opts.Context, 0)
	edits, changed, replaced := diffEdits(d, segs, newText)
	oldLabel, newLabel := opts.OldLabel, opts.NewLabel
	if oldLabel == "" && newLabel == "" {
		oldLabel, newLabel = "old", "new"
	}
	res.Diff = unifiedDiff(oldLabel, newLabel, d, edits, ctx)
	res.TaggedDiff, res.Shifts = taggedDiff(d, res.Doc, segs, changed, opts, ctx)
	res.Windows = windows(res.Doc, segs, changed, opts, ctx)
	for _, r := range replaced {
		for _, t := range d.Tagged(opts.Hasher, r[0]+1, r[1]) {
			t.Content = CutLine(t.Content, opts.MaxLineBytes)
			res.Replaced = append(res.Replaced, t)
		}
	}
	res.Warnings = append(slices.Clone(p.Warnings), p.noopWarnings(changed)...)
	res.Repairs = slices.Clone(p.Repairs)
	return res, nil
}

// ApplyEdits plans edits against d and applies them.
func ApplyEdits(d *Document, edits []Edit, opts ApplyOptions, popts ...PlanOption) (*Result, error) {
	p, err := PlanEdits(d, edits, opts.Hasher, popts...)
	if err != nil {
		return nil, err
	}
	return p.Apply(d, opts)
}

// check refuses a plan that does not fit d, which only a caller building
// Plan values by hand or mixing documents can produce.
func (p *Plan) check(d *Document) error {
	prevEnd := 0
	for i, c := range p.Changes {
		if c.Start < 0 || c.End < c.Start || c.End > d.Len() {
			return fmt.Errorf("hashline: change %d (lines %d-%d) is outside the document's %d lines", i, c.Start, c.End, d.Len())
		}
		// Insertions at one point are applied in order; PlanEdits only
		// produces them for prepend and append on an empty file.
		if c.Start < prevEnd {
			return fmt.Errorf("hashline: change %d overlaps the previous one or is out of order", i)
		}
		prevEnd = c.End
	}
	return nil
}

func (p *Plan) addedBytes() int {
	n := 0
	for _, c := range p.Changes {
		for _, l := range c.Lines {
			n += len(l) + 2
		}
	}
	return n
}

// addedLines is how many lines the plan's changes emit.
func (p *Plan) addedLines() int {
	n := 0
	for _, c := range p.Changes {
		n += len(c.Lines)
	}
	return n
}

// windows returns the merged windows of fresh tags around every change that
// changed bytes. A
// deletion leaves no new lines, so its window shows at least one line on
// each side of the gap.
func windows(nd *Document, segs []segment, changed map[int]bool, opts ApplyOptions, ctx int) []Window {
	var ws []Window
	for _, s := range segs {
		if s.change < 0 || !changed[s.change] {
			continue // untouched, or rewritten identically
		}
		var from, to int // 1-based inclusive
		if s.newLines > 0 {
			from, to = s.newLine+1-ctx, s.newLine+s.newLines+ctx
		} else {
			c := max(ctx, 1)
			from, to = s.newLine+1-c, s.newLine+c
		}
		from, to, ok := nd.clamp(from, to)
		if !ok {
			continue
		}
		if k := len(ws) - 1; k >= 0 && from <= ws[k].End+1 {
			ws[k].End = max(ws[k].End, to)
			continue
		}
		ws = append(ws, Window{Start: from, End: to})
	}
	for i := range ws {
		ws[i].Lines = nd.Tagged(opts.Hasher, ws[i].Start, ws[i].End)
		for j := range ws[i].Lines {
			ws[i].Lines[j].Content = CutLine(ws[i].Lines[j].Content, opts.MaxLineBytes)
		}
	}
	return ws
}

// editCount is the number of edits the plan was made from.
func (p *Plan) editCount() int {
	if p.edits != nil {
		return len(p.edits)
	}
	n := 0
	for _, c := range p.Changes {
		for _, i := range c.EditIndex {
			n = max(n, i+1)
		}
	}
	return n
}

func (p *Plan) editName(i int) string {
	if i < len(p.edits) {
		return p.edits[i]
	}
	return "change"
}

// noopWarnings names each edit none of whose changes changed a byte.
func (p *Plan) noopWarnings(changed map[int]bool) []string {
	did := map[int]bool{}
	for ci, c := range p.Changes {
		if changed[ci] {
			for _, i := range c.EditIndex {
				did[i] = true
			}
		}
	}
	var ws []string
	for i := range p.editCount() {
		if !did[i] {
			ws = append(ws, fmt.Sprintf("edit %d changed nothing: %s leaves those lines as they were", i, p.editName(i)))
		}
	}
	return ws
}

// repairNote tells, in a NO_CHANGE message, what was repaired in edit i's
// text, since the repair may be why it changes nothing.
func (p *Plan) repairNote(i int) string {
	var kinds []string
	for _, r := range p.Repairs {
		if r.EditIndex == i && !slices.Contains(kinds, string(r.Kind)) {
			kinds = append(kinds, string(r.Kind))
		}
	}
	if len(kinds) == 0 {
		return ""
	}
	return fmt.Sprintf(" (after its text was repaired: %s; set strict to apply the text exactly as sent)", strings.Join(kinds, ", "))
}
