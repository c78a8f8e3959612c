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
// sent), so its column says nothing of indentation.
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
		return lines, false
	}
	firstNew, nested, foreign := -1, false, false
	for k, l := range lines {
		if blank(l) {
			continue
		}
		ld := lead(l)
		if firstNew < 0 {
			if ld != "" || l[0] == '+' || l[0] == '-' {
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
