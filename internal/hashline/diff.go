package hashline

import (
	"sort"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// lineEdit is a byte-offset edit of the old text together with the old
// lines [from, to) it replaces.
type lineEdit struct {
	udiff.Edit
	from, to int
}

// unifiedDiff renders the unified diff of edits against d's text.
//
// go-udiff groups the edits into hunks with context, but it splits the whole
// text into lines first, which dominates an edit of a large file; so edits
// are first clustered (edits closer than twice the context always share a
// cluster, as they would share a hunk) and each cluster is diffed on just
// its lines. Its hunk headers also do not count context lines between two
// edits of one hunk on the new side (v0.4.1), so the new side is recomputed
// here from the old side and the lines added or removed before it.
// Zero-length sides are written the GNU way ("-5,0": after line 5).
func unifiedDiff(oldLabel, newLabel string, d *Document, edits []lineEdit, context int) (string, error) {
	var hunks []*udiff.Hunk
	for i := 0; i < len(edits); {
		j, end := i+1, edits[i].to
		for j < len(edits) && edits[j].from <= end+2*context+1 {
			end = max(end, edits[j].to)
			j++
		}
		lo, hi := max(edits[i].from-context, 0), min(end+context, d.Len())
		base := d.starts[lo]
		part := make([]udiff.Edit, 0, j-i)
		for _, e := range edits[i:j] {
			part = append(part, udiff.Edit{Start: e.Start - base, End: e.End - base, New: e.New})
		}
		u, err := udiff.ToUnifiedDiff(oldLabel, newLabel, d.text[base:d.starts[hi]], part, context)
		if err != nil {
			return "", err
		}
		for _, h := range u.Hunks {
			h.FromLine += lo
			hunks = append(hunks, h)
		}
		i = j
	}
	if len(hunks) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString("--- " + oldLabel + "\n+++ " + newLabel + "\n")
	shift := 0 // lines added minus lines removed by earlier hunks
	for _, h := range hunks {
		fromCount, toCount := 0, 0
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				fromCount++
			case udiff.Insert:
				toCount++
			default:
				fromCount++
				toCount++
			}
		}
		b.WriteString("@@ -" + hunkRange(h.FromLine, fromCount) + " +" + hunkRange(h.FromLine+shift, toCount) + " @@\n")
		shift += toCount - fromCount
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				b.WriteByte('-')
			case udiff.Insert:
				b.WriteByte('+')
			default:
				b.WriteByte(' ')
			}
			b.WriteString(l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return b.String(), nil
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
		e.Edit = udiff.Edit{Start: oldStart, End: oldEnd, New: newText[s.outStart:s.outEnd]}
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
