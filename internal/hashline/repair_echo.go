package hashline

import (
	"fmt"
	"strings"
	"unicode"
)

// balance is the net count of opening minus closing brackets of each kind.
type balance struct{ paren, square, curly int }

func (b balance) add(l string) balance {
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '(':
			b.paren++
		case ')':
			b.paren--
		case '[':
			b.square++
		case ']':
			b.square--
		case '{':
			b.curly++
		case '}':
			b.curly--
		}
	}
	return b
}

func balanceOf(lines []string) balance {
	var b balance
	for _, l := range lines {
		b = b.add(l)
	}
	return b
}

// closers is the net count of the openings and closings that are not
// brackets but pair up as brackets do: block comments ("/*" against "*/")
// and tags ("<" before a name against the "/>" or "</" that closes it).
// They decide only what brackets leave open: a lone "*/" or "/>" echoed
// after a range closes nothing in the text, while a tag's "<" also opens
// generics and a comment's marks also appear in strings and globs, so
// they are weaker evidence than brackets.
type closers struct{ comment, tag int }

func (c closers) add(l string) closers {
	for i := 0; i+1 < len(l); i++ {
		switch a, b := l[i], l[i+1]; {
		case a == '/' && b == '*':
			c.comment++
			i++
		case a == '*' && b == '/':
			c.comment--
			i++
		case a == '/' && b == '>', a == '<' && b == '/':
			c.tag--
			i++
		case a == '<' && ('a' <= b|0x20 && b|0x20 <= 'z'):
			c.tag++
		}
	}
	return c
}

func closersOf(lines []string) closers {
	var c closers
	for _, l := range lines {
		c = c.add(l)
	}
	return c
}

// echo is a line of the text that repeats the line beside the span.
type echo struct {
	index int  // in the text
	line  int  // the 1-based document line it repeats
	first bool // the text's first line, repeating the line before
	// dropDefault: with nothing else to go by, the line is dropped. True
	// for a line with a letter or digit when dropping it is supported by
	// the text's length: an insert's echo, or a replacement longer than
	// its range.
	dropDefault bool
}

// sameLine reports whether text, a line of an edit, repeats file, a line
// of the document: the same non-blank content, and the same indentation or
// none (a line can lose its indentation, but one indented differently is
// another line, such as a closing tag one level out).
func sameLine(text, file string) bool {
	t := strings.TrimSpace(text)
	if t == "" || t != strings.TrimSpace(file) {
		return false
	}
	l := lead(text)
	return l == "" || l == lead(file)
}

func hasWord(l string) bool {
	return strings.IndexFunc(l, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) >= 0
}

// echoes drops a replacement's first or last line that repeats the
// unchanged line just before or after the range, and an insert's line that
// repeats its anchor. A candidate is never blank (two blank lines in a row
// are common and harmless), never the same as the replaced line at the
// same end (then the text keeps that line), and never all of the text.
//
// Which candidates are echoes is decided on evidence, in this order:
//
//  1. Brackets. A well-formed edit keeps the bracket balance of the lines
//     it replaces (an insert's lines balance to zero). Of the readings (each
//     subset of the candidates dropped), those that keep it decide every
//     candidate they agree on; "func f() {" or a lone "}" repeated by
//     mistake unbalances the text, repeated on purpose it does not.
//     Where brackets leave a candidate open, block comments and tags
//     are counted the same way: "*/" or "/>" repeated after the line
//     that closes a comment or a tag closes nothing in the text.
//  2. Words. A candidate the brackets leave open that has a letter or a
//     digit is dropped if the text is longer than its range (an insert
//     always is): a repeated statement is an echo far more often than it
//     is meant.
//  3. Anything still open (a lone "*/" or "---", a statement in a text no
//     longer than its range) is a guess: the edit is refused with both
//     readings.
func (r *resolver) echoes(i int, lines []string, s span) ([]string, bool) {
	n := len(lines)
	if n < 2 || s.op == OpAppend || s.op == OpPrepend {
		return lines, false
	}
	olds := s.end - s.at // the number of replaced lines
	kind := RepairBoundaryEchoDropped
	var cands []echo
	grows := len(lines) > olds
	first := s.op == OpReplace || s.op == OpInsertAfter
	last := s.op == OpReplace || s.op == OpInsertBefore
	if s.op != OpReplace {
		kind, grows = RepairAnchorEchoDropped, true
	}
	// A line that repeats both its neighbour and the range's own line at
	// that end is an echo of the one or the other kept with lines added
	// beside it: nothing tells which.
	if s.op == OpReplace && grows {
		if b := s.at; b >= 1 && !r.touchedByOther(i, b) && sameLine(lines[0], r.d.Line(b)) && sameLine(lines[0], r.d.Line(s.at+1)) {
			r.refuse(i, s, fmt.Sprintf("its first line %s repeats both line %d, just before the range, and line %d, the range's first; resend the text without the repeated line if it echoes line %d, or with strict to write it as sent", quoteLine(lines[0]), b, s.at+1, b),
				reading{"keeping the repeated line", lines}, reading{"dropping it", lines[1:]})
			return nil, true
		}
		if a := s.end + 1; a <= r.d.Len() && !r.touchedByOther(i, a) && sameLine(lines[n-1], r.d.Line(a)) && sameLine(lines[n-1], r.d.Line(s.end)) {
			r.refuse(i, s, fmt.Sprintf("its last line %s repeats both line %d, just after the range, and line %d, the range's last; resend the text without the repeated line if it echoes line %d, or with strict to write it as sent", quoteLine(lines[n-1]), a, s.end, a),
				reading{"keeping the repeated line", lines}, reading{"dropping it", lines[:n-1]})
			return nil, true
		}
	}
	if b := s.at; first && b >= 1 && !r.touchedByOther(i, b) && sameLine(lines[0], r.d.Line(b)) && (olds == 0 || !sameLine(lines[0], r.d.Line(s.at+1))) {
		cands = append(cands, echo{index: 0, line: b, first: true, dropDefault: grows && hasWord(lines[0])})
	}
	if a := s.end + 1; last && a <= r.d.Len() && !r.touchedByOther(i, a) && sameLine(lines[n-1], r.d.Line(a)) && (olds == 0 || !sameLine(lines[n-1], r.d.Line(s.end))) {
		cands = append(cands, echo{index: n - 1, line: a, dropDefault: grows && hasWord(lines[n-1])})
	}
	if len(cands) == 0 {
		return lines, false
	}
	// Every line a candidate: the text is the two lines around a one-line
	// range, say "a\nc" for the "b" of "a b c". One of them is the new
	// line, and only brackets, comments or tags can tell which; the length
	// of the text says nothing, and writing both would keep an echo.
	whole := len(cands) >= n
	drop, open := decideEchoes(lines, cands, r.old(s), whole)
	if whole && len(open) > 0 {
		var rs []reading
		for k, c := range cands {
			which := "last"
			if c.first {
				which = "first"
			}
			rs = append(rs, reading{fmt.Sprintf("dropping the %s line, repeating line %d", which, c.line), without(lines, cands, drop|1<<k)})
		}
		r.refuse(i, s, fmt.Sprintf("every line of the text repeats a line beside the range (lines %d and %d), so one of them is an echo, and nothing tells which; resend the text with only the new line, or set strict to write the text as sent", cands[0].line, cands[len(cands)-1].line), rs...)
		return nil, true
	}
	if len(open) > 0 {
		kept := without(lines, cands, drop)
		dropped := without(lines, cands, drop|open.mask())
		r.refuse(i, s, echoQuestion(lines, cands, open, s),
			reading{"keeping the repeated line", kept}, reading{"dropping it", dropped})
		return nil, true
	}
	if drop == 0 {
		return lines, false
	}
	for k, c := range cands {
		if drop&(1<<k) == 0 {
			continue
		}
		which, where := "last", "just after"
		if c.first {
			which, where = "first", "just before"
		}
		if kind == RepairAnchorEchoDropped {
			where = "its anchor"
		} else {
			where += " " + lineRange(s.at+1, s.end)
		}
		r.repair(i, kind, c.line, "dropped the text's %s line %s, which repeats line %d (%s) — send only the new lines", which, quoteLine(lines[c.index]), c.line, where)
	}
	return without(lines, cands, drop), false
}

// openEchoes are the candidates (by index into cands) that no evidence
// decides.
type openEchoes []int

func (o openEchoes) mask() int {
	m := 0
	for _, k := range o {
		m |= 1 << k
	}
	return m
}

// decideEchoes returns the candidates to drop, as a bit mask over cands,
// and those no evidence decides (see echoes). old are the replaced lines;
// whole says that every line of the text is a candidate, so that at least
// one must be kept and their words decide nothing.
func decideEchoes(lines []string, cands []echo, old []string, whole bool) (drop int, open openEchoes) {
	all := 1 << len(cands)
	var readings []int
	for m := range all {
		if !whole || m != all-1 {
			readings = append(readings, m)
		}
	}
	pool := filter(readings, func(m int) bool { return balanceOf(without(lines, cands, m)) == balanceOf(old) })
	if len(pool) == 0 {
		pool = readings
	}
	if kept := filter(pool, func(m int) bool { return closersOf(without(lines, cands, m)) == closersOf(old) }); len(kept) > 0 {
		pool = kept
	}
	for k, c := range cands {
		if c.dropDefault && !whole && !agreed(pool, k) {
			pool = filter(pool, func(m int) bool { return m&(1<<k) != 0 })
		}
	}
	for k := range cands {
		if !agreed(pool, k) {
			open = append(open, k)
			continue
		}
		drop |= pool[0] & (1 << k)
	}
	return drop, open
}

// agreed reports whether every reading of pool drops candidate k, or none
// does.
func agreed(pool []int, k int) bool {
	for _, m := range pool[1:] {
		if (m^pool[0])&(1<<k) != 0 {
			return false
		}
	}
	return true
}

func filter(pool []int, keep func(int) bool) []int {
	var out []int
	for _, m := range pool {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// without returns lines without the candidates in mask.
func without(lines []string, cands []echo, mask int) []string {
	skip := map[int]bool{}
	for k, c := range cands {
		if mask&(1<<k) != 0 {
			skip[c.index] = true
		}
	}
	out := make([]string, 0, len(lines))
	for j, l := range lines {
		if !skip[j] {
			out = append(out, l)
		}
	}
	return out
}

// echoQuestion says why the open candidates are a guess.
func echoQuestion(lines []string, cands []echo, open openEchoes, s span) string {
	var parts []string
	for _, k := range open {
		c := cands[k]
		which, side := "last", "after"
		if c.first {
			which, side = "first", "before"
		}
		point := "the insertion point"
		if s.op == OpReplace {
			point = "the range"
		}
		why := "its brackets do not tell whether it is an echo of that line or meant twice"
		if hasWord(lines[c.index]) {
			why = "the text is no longer than the range it replaces, so it may be meant twice"
		}
		parts = append(parts, fmt.Sprintf("its %s line %s repeats line %d, just %s %s, and %s", which, quoteLine(lines[c.index]), c.line, side, point, why))
	}
	return strings.Join(parts, "; ") + `; resend the text without the repeated line to drop it, or set strict to write the text as sent`
}
