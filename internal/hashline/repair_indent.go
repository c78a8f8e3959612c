package hashline

import (
	"fmt"
	"strconv"
	"strings"
)

// indent restores the indentation a replacement lost. It applies only when
// every non-blank replaced line is indented and the text's first non-blank
// line is not: then every non-blank line of the text gets the indentation
// of the first non-blank replaced line in front of its own, which keeps
// the text's relative indentation. When every non-blank line of the text
// is at column 0 that is the whole evidence needed. When some are
// indented (a dedented snippet, or on purpose a dedent to the top level, as
// in Python) the lines after the range decide: if the block goes on (the
// next non-blank line is indented at least as deep as the range, or is a
// closing bracket) code at column 0 cannot be meant there, and the
// indentation is restored; if the range ends its block, or the text's
// nested lines indent with other characters than the file's (tabs for
// spaces), the edit is refused with both readings. A text that is the
// replaced lines with only their indentation changed is applied as sent:
// re-indenting is then the whole point of the edit. A first line that
// starts with "+" or "-" may be a diff's (one the markers rule left as
// sent), so its column says nothing of indentation. Two more shapes are
// restored on their own evidence: a text whose first line is indented but
// which lost the same indentation from every line (indentShifted), and a
// text at column 0 that replaces blank lines, which show no indentation of
// their own (indentBlank).
func (r *resolver) indent(i int, lines []string, s span) ([]string, bool) {
	if s.op != OpReplace {
		return lines, false
	}
	base, firstOld := "", 0
	for n := s.at + 1; n <= s.end; n++ {
		o := r.d.Line(n)
		if blank(o) {
			continue
		}
		l := lead(o)
		if l == "" {
			return lines, false
		}
		if base == "" {
			base, firstOld = l, n
		}
	}
	if base == "" {
		return r.indentBlank(i, lines, s)
	}
	firstNew, nested, foreign := -1, false, false
	for k, l := range lines {
		if blank(l) {
			continue
		}
		ld := lead(l)
		if firstNew < 0 {
			if ld != "" {
				return r.indentShifted(i, lines, s)
			}
			if l[0] == '+' || l[0] == '-' {
				return lines, false
			}
			firstNew = k
		}
		if ld != "" {
			nested = true
			if strings.Trim(ld, base[:1]) != "" || strings.Trim(base, base[:1]) != "" {
				foreign = true
			}
		}
	}
	if firstNew < 0 || len(lines) == s.end-s.at && sameBarIndent(lines, r.old(s)) {
		return lines, false
	}
	restored := make([]string, len(lines))
	for k, l := range lines {
		if blank(l) {
			restored[k] = l
		} else {
			restored[k] = base + l
		}
	}
	// Flush-left lines that replace as many lines take those lines'
	// indentation line for line: the text is the old block, changed, with
	// every line's indentation lost, nesting included.
	if old := r.old(s); !nested && len(old) == len(lines) && len(old) > 1 {
		each := true
		for k, l := range lines {
			if !blank(l) && blank(old[k]) {
				each = false
			}
		}
		if each {
			for k, l := range lines {
				if !blank(l) {
					restored[k] = lead(old[k]) + l
				}
			}
			r.repair(i, RepairIndentRestored, firstOld, "the text had lost its indentation; each line got the indentation of the line it replaces (%s) — send lines indented as in the file", lineRange(s.at+1, s.end))
			return restored, false
		}
	}
	if nested {
		why := ""
		switch {
		case foreign:
			why = "its indented lines use other indentation characters than the file's"
		case !r.blockGoesOn(s, base):
			why = "the range ends its block, so a dedent may be meant"
		}
		if why != "" {
			r.refuse(i, s, fmt.Sprintf(`the text starts at column 0 where every replaced line is indented (line %d with %s), and %s; resend the text indented as it should be, or set strict to write it as sent`, firstOld, strconv.Quote(base), why),
				reading{"as sent", lines}, reading{"with the indentation restored", restored})
			return nil, true
		}
	}
	r.repair(i, RepairIndentRestored, firstOld, "the text had lost its indentation; its lines got the indentation %s of line %d in front of their own — send lines indented as in the file", strconv.Quote(base), firstOld)
	return restored, false
}

// sameBarIndent reports whether lines are the old lines with other
// indentation: a text that changes nothing else changes the indentation
// on purpose.
func sameBarIndent(lines, old []string) bool {
	if len(lines) != len(old) {
		return false
	}
	for k := range lines {
		if strings.TrimSpace(lines[k]) != strings.TrimSpace(old[k]) {
			return false
		}
	}
	return true
}

// blockGoesOn reports whether the first non-blank line after the span is
// indented at least as deep as base or closes a bracket.
func (r *resolver) blockGoesOn(s span, base string) bool {
	for n := s.end + 1; n <= r.d.Len(); n++ {
		l := r.d.Line(n)
		if blank(l) {
			continue
		}
		t := strings.TrimSpace(l)
		return len(lead(l)) >= len(base) || strings.ContainsRune("})]", rune(t[0]))
	}
	return false
}

// indentShifted restores the indentation of a text whose first line is
// indented but which lost, line for line, the same leading indentation
// from every line it replaces: as many lines as the range, each non-blank
// one indented as the replaced line at its place less one common prefix
// (the block's indentation dropped, its nesting kept, as when a model
// copies a nested block out of its context). At least two lines must show
// the shift, at two depths, or one line dedented is as likely meant. When
// the range ends its block, a dedent may be meant, and the edit is refused
// with both readings.
func (r *resolver) indentShifted(i int, lines []string, s span) ([]string, bool) {
	old := r.old(s)
	if len(old) != len(lines) || sameBarIndent(lines, old) {
		return lines, false
	}
	shift, pairs, depths := "", 0, map[string]bool{}
	for k, l := range lines {
		if blank(l) || blank(old[k]) {
			continue
		}
		lo, ln := lead(old[k]), lead(l)
		if len(lo) <= len(ln) || !strings.HasSuffix(lo, ln) {
			return lines, false
		}
		p := lo[:len(lo)-len(ln)]
		if shift != "" && p != shift {
			return lines, false
		}
		shift = p
		pairs++
		depths[ln] = true
	}
	if pairs < 2 || len(depths) < 2 {
		return lines, false
	}
	restored := make([]string, len(lines))
	for k, l := range lines {
		if blank(l) {
			restored[k] = l
		} else {
			restored[k] = shift + l
		}
	}
	shallowest := ""
	for k, o := range old {
		if !blank(o) && (shallowest == "" || len(lead(o)) < len(shallowest)) && !blank(lines[k]) {
			shallowest = lead(o)
		}
	}
	if !r.blockGoesOn(s, shallowest) {
		r.refuse(i, s, fmt.Sprintf(`every line of the text is indented %s less than the line it replaces (%s), and the range ends its block, so a dedent may be meant; resend the text indented as it should be, or set strict to write it as sent`, strconv.Quote(shift), lineRange(s.at+1, s.end)),
			reading{"as sent", lines}, reading{"with the indentation restored", restored})
		return nil, true
	}
	r.repair(i, RepairIndentRestored, s.at+1, "the text had lost the indentation %s of every line it replaces (%s); it was put back in front of each line, keeping the text's nesting — send lines indented as in the file", strconv.Quote(shift), lineRange(s.at+1, s.end))
	return restored, false
}

// indentBlank restores the indentation of a text at column 0 that
// replaces blank lines only, from the nearest non-blank lines around the
// range, since the replaced lines show none: when both are indented alike,
// the text takes that indentation; when they differ, brackets decide (a
// line ending with an opening bracket or ":" and a deeper line after it:
// the text is inside, as deep as the line after; a line after that starts
// with a closing bracket, under a deeper line: as deep as the line
// before). A neighbour at column 0 or none at all (the start or end of the
// file) makes column 0 as likely meant, and the text is applied as sent;
// two indented neighbours that disagree with nothing to decide are a
// guess, and the edit is refused with the readings.
func (r *resolver) indentBlank(i int, lines []string, s span) ([]string, bool) {
	if s.end <= s.at {
		return lines, false
	}
	first := -1
	for k, l := range lines {
		if !blank(l) {
			first = k
			break
		}
	}
	if first < 0 || lead(lines[first]) != "" || lines[first][0] == '+' || lines[first][0] == '-' {
		return lines, false
	}
	before, after := 0, 0
	for n := s.at; n >= 1; n-- {
		if !blank(r.d.Line(n)) {
			before = n
			break
		}
	}
	for n := s.end + 1; n <= r.d.Len(); n++ {
		if !blank(r.d.Line(n)) {
			after = n
			break
		}
	}
	if before == 0 || after == 0 {
		return lines, false
	}
	lb, la := lead(r.d.Line(before)), lead(r.d.Line(after))
	tb, ta := strings.TrimSpace(r.d.Line(before)), strings.TrimSpace(r.d.Line(after))
	base := ""
	switch {
	case lb == la:
		base = lb
	case strings.ContainsRune("{([:", rune(tb[len(tb)-1])) && len(la) > len(lb) && strings.HasPrefix(la, lb):
		base = la
	case strings.ContainsRune("})]", rune(ta[0])) && len(lb) > len(la) && strings.HasPrefix(lb, la):
		base = lb
	}
	with := func(ind string) []string {
		out := make([]string, len(lines))
		for k, l := range lines {
			if blank(l) {
				out[k] = l
			} else {
				out[k] = ind + l
			}
		}
		return out
	}
	if base == "" && (lb == "" || la == "") {
		return lines, false
	}
	if base == "" {
		r.refuse(i, s, fmt.Sprintf(`the text starts at column 0 where it replaces blank lines, and the lines around them are indented differently (line %d with %s, line %d with %s); resend the text indented as it should be, or set strict to write it as sent`, before, strconv.Quote(lb), after, strconv.Quote(la)),
			reading{"as sent", lines}, reading{fmt.Sprintf("indented as line %d", before), with(lb)}, reading{fmt.Sprintf("indented as line %d", after), with(la)})
		return nil, true
	}
	for _, l := range lines {
		if ld := lead(l); ld != "" && strings.Trim(ld, base[:1]) != "" {
			r.refuse(i, s, fmt.Sprintf(`the text starts at column 0 where it replaces blank lines between lines indented with %s, and its indented lines use other indentation characters than the file's; resend the text indented as it should be, or set strict to write it as sent`, strconv.Quote(base)),
				reading{"as sent", lines}, reading{"with the indentation restored", with(base)})
			return nil, true
		}
	}
	r.repair(i, RepairIndentRestored, s.at+1, "the text had lost its indentation; it replaces blank lines, so its lines got the indentation %s of the lines around them (%d and %d) in front of their own — send lines indented as in the file", strconv.Quote(base), before, after)
	return with(base), false
}
