package hashline

import (
	"sort"
	"strconv"
	"strings"
)

// lineEdit is a byte-offset edit of the old text, [Start, End) replaced
// by New, together with the old lines [from, to) it replaces.
type lineEdit struct {
	Start, End int
	New        string
	from, to   int
}

// unifiedDiff renders the unified diff of edits against d's text, which
// are in order and replace whole lines. Edits closer than twice the
// context share a hunk; edits that touch are one block of removed lines
// followed by the added ones, as diff tools write them (a last line
// without newline can then only come last). Zero-length sides are written
// the GNU way ("-5,0": after line 5).
func unifiedDiff(oldLabel, newLabel string, d *Document, edits []lineEdit, context int) string {
	if len(edits) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("--- " + oldLabel + "\n+++ " + newLabel + "\n")
	line := func(prefix byte, l string) {
		b.WriteByte(prefix)
		b.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
	shift := 0 // lines added minus lines removed by earlier hunks
	for i := 0; i < len(edits); {
		j, added, removed := i, 0, 0
		for ; j < len(edits) && (j == i || edits[j].from <= edits[j-1].to+2*context); j++ {
			added += lineCount(edits[j].New)
			removed += edits[j].to - edits[j].from
		}
		lo, hi := max(edits[i].from-context, 0), min(edits[j-1].to+context, d.Len())
		oldCount := hi - lo
		newCount := oldCount - removed + added
		b.WriteString("@@ -" + hunkRange(lo+1, oldCount) + " +" + hunkRange(lo+1+shift, newCount) + " @@\n")
		shift += newCount - oldCount
		n := lo
		for k := i; k < j; {
			// Edits that touch are one block: its removed lines, then its
			// added ones.
			l := k + 1
			for l < j && edits[l].from == edits[l-1].to {
				l++
			}
			for ; n < edits[k].from; n++ {
				line(' ', d.text[d.starts[n]:d.starts[n+1]])
			}
			for ; n < edits[l-1].to; n++ {
				line('-', d.text[d.starts[n]:d.starts[n+1]])
			}
			for _, e := range edits[k:l] {
				for s := e.New; s != ""; {
					c := strings.IndexByte(s, '\n') + 1
					if c == 0 {
						c = len(s)
					}
					line('+', s[:c])
					s = s[c:]
				}
			}
			k = l
		}
		for ; n < hi; n++ {
			line(' ', d.text[d.starts[n]:d.starts[n+1]])
		}
		i = j
	}
	return b.String()
}

// lineCount counts the lines of s, a last one without newline included.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// hunkRange formats one side of a hunk header.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start-1) + ",0"
	case 1:
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(count)
}

// diffEdits turns the segments into byte-offset edits of the old text,
// exactly what the batch changed, and reports which changes changed bytes
// and which old lines they replaced ([from, to) ranges). An untouched run
// can differ only in its last line's ending (gained when lines are appended
// after a last line without newline, lost when the lines after it are
// deleted), so only that line becomes an edit.
func diffEdits(d *Document, segs []segment, newText string) (edits []lineEdit, changed map[int]bool, replaced [][2]int) {
	changed = map[int]bool{}
	for _, s := range segs {
		if same(d, s, newText) {
			continue
		}
		oldStart, oldEnd := d.starts[s.start], d.starts[s.end]
		e := lineEdit{from: s.start, to: s.end}
		if s.change >= 0 {
			changed[s.change] = true
			// Leave lines the change rewrote identically out of the diff,
			// so it shows only what differs.
			pre, suf := commonLines(d.text[oldStart:oldEnd], newText[s.outStart:s.outEnd])
			oldStart, oldEnd = oldStart+pre, oldEnd-suf
			s.outStart, s.outEnd = s.outStart+pre, s.outEnd-suf
			e.from, e.to = sort.SearchInts(d.starts, oldStart), sort.SearchInts(d.starts, oldEnd)
			replaced = append(replaced, [2]int{e.from, e.to})
		} else {
			e.from = s.end - 1
			lastStart := d.starts[e.from]
			s.outStart += lastStart - oldStart
			oldStart = lastStart
		}
		e.Start, e.End, e.New = oldStart, oldEnd, newText[s.outStart:s.outEnd]
		if oldStart == len(d.text) && !d.FinalNewline() {
			// Lines added after a last line without newline start with
			// that line's new ending: show the line itself as changed,
			// as part of the edit that already rewrote it if there is one.
			if k := len(edits) - 1; k >= 0 && edits[k].End == len(d.text) {
				edits[k].New += e.New
				continue
			}
			e.from--
			e.Start = d.starts[e.from]
			e.New = d.text[e.Start:] + e.New
		}
		edits = append(edits, e)
	}
	return edits, changed, replaced
}

// same reports whether segment s left its old bytes as they were. An
// untouched run is a byte-for-byte copy that only the stripping of the
// final ending can shorten, so its length decides without reading it: on a
// large file, the runs between the changes are nearly all of it.
func same(d *Document, s segment, newText string) bool {
	old := d.text[d.starts[s.start]:d.starts[s.end]]
	if s.change < 0 {
		return len(old) == s.outEnd-s.outStart
	}
	return old == newText[s.outStart:s.outEnd]
}

// unchanged reports whether newText is d's text. Segment by segment is not
// enough (a deletion and an insertion of the same line are two segments
// that changed and a text that did not), but the runs before the first
// segment that changed and after the last one are the same bytes in both
// texts, so only the span between them is compared: on a large file, a
// few lines instead of all of it.
func unchanged(d *Document, segs []segment, newText string) bool {
	if len(newText) != len(d.text) {
		return false
	}
	first, last := -1, -1
	for i, s := range segs {
		if !same(d, s, newText) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return true
	}
	// With equal lengths, the span has the same offsets in both texts.
	from, to := d.starts[segs[first].start], d.starts[segs[last].end]
	return d.text[from:to] == newText[from:to]
}

// endings counts the CRLF and bare LF endings of newText from d's counts
// and the segments that changed. Every "\r\n" in either text lies inside
// one segment: old segments start at line starts, and a new one is empty or
// starts at a line start or with the whole ending that closes the line
// before it.
func endings(d *Document, segs []segment, newText string) (crlf, lf int) {
	crlf, nl := d.crlf, d.crlf+d.lf
	for _, s := range segs {
		if same(d, s, newText) {
			continue
		}
		old, neu := d.text[d.starts[s.start]:d.starts[s.end]], newText[s.outStart:s.outEnd]
		crlf += strings.Count(neu, "\r\n") - strings.Count(old, "\r\n")
		nl += strings.Count(neu, "\n") - strings.Count(old, "\n")
	}
	return crlf, nl - crlf
}

// commonLines returns the byte lengths of the whole lines a and b share at
// their start and, in what remains, at their end.
func commonLines(a, b string) (pre, suf int) {
	for {
		i := strings.IndexByte(a[pre:], '\n')
		if i < 0 || i >= len(b)-pre || a[pre:pre+i+1] != b[pre:pre+i+1] {
			break
		}
		pre += i + 1
	}
	a, b = a[pre:], b[pre:]
	for len(a) > 0 && len(b) > 0 {
		// The last line of each, with its ending if it has one.
		la := lastLine(a)
		if !strings.HasSuffix(b, la) || len(b) > len(la) && b[len(b)-len(la)-1] != '\n' {
			break
		}
		a, b = a[:len(a)-len(la)], b[:len(b)-len(la)]
		suf += len(la)
	}
	return pre, suf
}

// lastLine returns the last line of s including its ending, if any.
func lastLine(s string) string {
	i := strings.LastIndexByte(strings.TrimSuffix(s, "\n"), '\n')
	return s[i+1:]
}

// Shift says how the numbers of lines the batch did not touch changed: the
// lines From..To of the file before the batch (1-based, inclusive) are now
// By lines further down (By < 0: up), so a reference "N:HASH" to one of them
// is now "N+By:HASH". A run may span lines the batch replaced or deleted;
// those have no reference any more.
type Shift struct {
	From, To, By int
}

// taggedDiff renders the changes for a model to act on (Result.TaggedDiff)
// and says where the lines it leaves alone went (Result.Shifts). Each
// changed segment is reduced to the lines that differ in content: a line
// rewritten with the same content is an unchanged line, which may have
// moved, as is a line whose ending alone changed. Hunks whose context
// touches are joined.
func taggedDiff(d, nd *Document, segs []segment, changed map[int]bool, opts ApplyOptions, ctx int) (string, []Shift) {
	type core struct {
		oldFrom, oldTo int // removed old lines, 1-based [oldFrom, oldTo)
		newFrom, newTo int // added new lines, 1-based [newFrom, newTo)
		from, to       int // the hunk's new lines with context, inclusive
	}
	cores := make([]core, 0, len(segs)/2+1)
	for _, s := range segs {
		if s.change < 0 || !changed[s.change] {
			continue
		}
		c := core{oldFrom: s.start + 1, oldTo: s.end + 1, newFrom: s.newLine + 1, newTo: s.newLine + s.newLines + 1}
		for c.oldFrom < c.oldTo && c.newFrom < c.newTo && d.Line(c.oldFrom) == nd.Line(c.newFrom) {
			c.oldFrom++
			c.newFrom++
		}
		for c.oldFrom < c.oldTo && c.newFrom < c.newTo && d.Line(c.oldTo-1) == nd.Line(c.newTo-1) {
			c.oldTo--
			c.newTo--
		}
		if c.oldFrom == c.oldTo && c.newFrom == c.newTo {
			continue // only endings changed
		}
		n := ctx
		if c.newFrom == c.newTo {
			// A deletion adds no line: a line on each side says where.
			n = max(ctx, 1)
		}
		c.from, c.to = max(c.newFrom-n, 1), min(c.newTo-1+n, nd.Len())
		cores = append(cores, c)
	}
	// The lines between two cores moved by what the cores before them
	// added and removed. Neighbouring runs that moved alike are one Shift,
	// and the lines before the first that moved keep their numbers, so
	// nothing is said of them: a batch whose changes each keep their line
	// count has no Shift at all.
	var moved []Shift
	for i, c := range cores {
		from, to := c.oldTo, d.Len() // the untouched run after c
		if i+1 < len(cores) {
			to = cores[i+1].oldFrom - 1
		}
		by := c.newTo - c.oldTo
		switch k := len(moved) - 1; {
		case from > to, k < 0 && by == 0:
		case k >= 0 && moved[k].By == by:
			moved[k].To = to
		default:
			moved = append(moved, Shift{From: from, To: to, By: by})
		}
	}
	// Written into one buffer, number and hash appended in place: this
	// runs on every edit.
	hl := opts.Hasher.Len()
	size := 0
	for _, c := range cores {
		// What the lines hold, plus prefix, number, ':', hash and '|'.
		size += nd.starts[c.to] - nd.starts[c.from-1] + (c.to-c.from+1)*(decimalLen(c.to)+hl+3)
		size += d.starts[c.oldTo-1] - d.starts[c.oldFrom-1] + c.oldTo - c.oldFrom + len("...\n")
	}
	b := make([]byte, 0, size)
	line := func(c string) {
		if opts.MaxLineBytes > 0 && len(c) > opts.MaxLineBytes {
			b = append(b, c[:cutPoint(c, opts.MaxLineBytes)]...)
			b = appendCutMarker(b, len(c))
		} else {
			b = append(b, c...)
		}
		b = append(b, '\n')
	}
	tagged := func(prefix byte, n int) {
		b = append(b, prefix)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ':')
		b = appendHex(b, nd.sum(n), hl)
		b = append(b, '|')
		line(nd.Line(n))
	}
	for i := 0; i < len(cores); {
		// The cores of one hunk: those whose context touches the previous.
		j, to := i+1, cores[i].to
		for j < len(cores) && cores[j].from <= to+1 {
			to = max(to, cores[j].to)
			j++
		}
		if i > 0 {
			b = append(b, "...\n"...)
		}
		n := cores[i].from
		for _, c := range cores[i:j] {
			for ; n < c.newFrom; n++ {
				tagged(' ', n)
			}
			for o := c.oldFrom; o < c.oldTo; o++ {
				b = append(b, '-')
				line(d.Line(o))
			}
			for ; n < c.newTo; n++ {
				tagged('+', n)
			}
		}
		for ; n <= to; n++ {
			tagged(' ', n)
		}
		i = j
	}
	if len(b) > 0 {
		b = b[:len(b)-1] // the last line's "\n"
	}
	return string(b), moved
}
