package grep

import (
	"bytes"
	"fmt"
	"regexp"
	"regexp/syntax"
)

// matcher is a compiled pattern: the regexp and the literals that prefilter
// it. It is shared by all workers.
type matcher struct {
	re *regexp.Regexp
	// needles is the required literal set; nil means every line is
	// regexp-checked.
	needles []*needle
	// pure means a line matches exactly when it contains one of the needles.
	pure bool
	// empty means every match is empty (as of "^" or ""): no line has
	// submatches, and looking for them would find one at every position.
	empty bool
}

func compile(opts Options) (*matcher, error) {
	expr := opts.Pattern
	if opts.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if opts.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPattern, err)
	}
	// regexp.Compile parses with syntax.Perl too, so this cannot fail.
	sre, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPattern, err)
	}
	simple := sre.Simplify()
	m := &matcher{re: re, empty: onlyEmpty(simple)}
	set, pure := requiredLits(simple)
	for _, l := range set {
		m.needles = append(m.needles, newNeedle(l))
	}
	m.pure = pure && len(set) > 0
	return m, nil
}

// match is a matching line: its number and the bounds of its content.
type match struct {
	num        int
	start, end int
}

var bom = []byte("\uFEFF")

// lineBounds returns the content of the line that starts at ls and ends at
// le (the index of its "\n", or len(data)).
func lineBounds(data []byte, ls, le int) (cs, ce int) {
	cs, ce = ls, le
	if ls == 0 && bytes.HasPrefix(data, bom) {
		cs = len(bom)
	}
	if le < len(data) && ce > cs && data[ce-1] == '\r' {
		ce--
	}
	return cs, ce
}

func lineEnd(data []byte, from int) int {
	if i := bytes.IndexByte(data[from:], '\n'); i >= 0 {
		return from + i
	}
	return len(data)
}

// scan appends to out the matching lines of data, at most limit of them. f
// is the worker's finder for m's needles.
func (m *matcher) scan(f *finder, data []byte, limit int, out []match) []match {
	if f == nil {
		num := 1
		for ls := 0; ls < len(data) && len(out) < limit; num++ {
			le := lineEnd(data, ls)
			cs, ce := lineBounds(data, ls, le)
			if m.re.Match(data[cs:ce]) {
				out = append(out, match{num, cs, ce})
			}
			ls = le + 1
		}
		return out
	}
	f.reset()
	// num is the number of the line that starts at numAt.
	from, num, numAt := 0, 1, 0
	for from < len(data) && len(out) < limit {
		start, end, ok := f.next(data, from)
		if !ok {
			break
		}
		ls := from + bytes.LastIndexByte(data[from:start], '\n') + 1
		le := lineEnd(data, start)
		cs, ce := lineBounds(data, ls, le)
		num += bytes.Count(data[numAt:ls], []byte{'\n'})
		numAt = ls
		if (m.pure && cs <= start && end <= ce) || m.re.Match(data[cs:ce]) {
			out = append(out, match{num, cs, ce})
		}
		from = le + 1
	}
	return out
}

// buildLines returns the lines of ms with before and after lines of context,
// merged, each line once. Context stops short of line stop (0: no stop), the
// first match that was cut off by the limit, so that a matching line is never
// shown as context.
func (m *matcher) buildLines(data []byte, ms []match, before, after, stop int) []Line {
	// A capacity hint only: before and after come from the request and may
	// be huge; the lines themselves are bounded by the file.
	lines := make([]Line, 0, len(ms)*(1+min(before+after, 16)))
	// next is the first line not yet emitted, starting at nextAt.
	next, nextAt := 1, 0
	add := func(num, ls int, isMatch bool) int {
		le := lineEnd(data, ls)
		cs, ce := lineBounds(data, ls, le)
		l := Line{Number: num, Content: string(data[cs:ce]), Match: isMatch}
		if isMatch {
			l.Submatches = m.spans(data[cs:ce])
		}
		lines = append(lines, l)
		next, nextAt = num+1, le+1
		return le + 1
	}
	for i, m := range ms {
		first := max(next, m.num-before)
		ls := nextAt
		if first > next {
			// Walk back from the match to the start of line first.
			ls = m.start
			for n := m.num; n > first; n-- {
				ls = bytes.LastIndexByte(data[:ls-1], '\n') + 1
			}
		}
		for n := first; n < m.num; n++ {
			ls = add(n, ls, false)
		}
		ls = add(m.num, ls, true)
		limit := m.num + after
		if i+1 < len(ms) {
			limit = min(limit, ms[i+1].num-1)
		} else if stop > 0 {
			limit = min(limit, stop-1)
		}
		for n := m.num + 1; n <= limit && ls < len(data); n++ {
			ls = add(n, ls, false)
		}
	}
	return lines
}

// spans returns the non-empty matches of the pattern in a matching line.
func (m *matcher) spans(line []byte) []Span {
	if m.empty {
		return nil
	}
	var out []Span
	for _, loc := range m.re.FindAllIndex(line, -1) {
		if loc[1] > loc[0] {
			out = append(out, Span{loc[0], loc[1]})
		}
	}
	return out
}

// onlyEmpty reports whether re can only match the empty string. It may say
// false when true would be right, never the reverse.
func onlyEmpty(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat, syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !onlyEmpty(sub) {
				return false
			}
		}
		return true
	}
	return false
}
