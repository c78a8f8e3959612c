package grep

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
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
	// cost is the work of running the regexp over one byte of input: the
	// size of its program, since RE2 takes time linear in the product of
	// the input's length and the program's.
	cost int
}

// MaxPatternInsts bounds the compiled program of a pattern. A short
// pattern can compile to a large one ("[^a]{1000}" is a thousand
// instructions), and both the memory of every matcher that runs it and the
// time it takes per byte of input grow with it. Patterns people write,
// counted repetitions and long literals included, stay far below it.
const MaxPatternInsts = 1 << 16

// Work, counted in bytes of input times the cost of what reads them (see
// matcher.cost), between checks of the search's context: small enough that
// a cancelled search stops promptly even inside a file, large enough that
// checking costs nothing measurable.
const checkWork = 1 << 24

// spanWork bounds the work of finding the submatches of one matching line,
// which regexp cannot interrupt: of a line that would take more, only the
// first spanWork/cost bytes are searched for them.
const spanWork = 1 << 28

func compile(opts Options) (*matcher, error) {
	expr := opts.Pattern
	if opts.Literal {
		expr = regexp.QuoteMeta(expr)
	}
	if opts.CaseInsensitive {
		expr = "(?i)" + expr
	}
	// regexp.Compile parses with syntax.Perl too; its program is the one
	// syntax.Compile makes of the simplified parse, measured here before
	// any matcher is built.
	sre, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPattern, err)
	}
	simple := sre.Simplify()
	prog, err := syntax.Compile(simple)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPattern, err)
	}
	if n := len(prog.Inst); n > MaxPatternInsts {
		return nil, fmt.Errorf("%w: the pattern compiles to %d instructions, over the limit of %d; use smaller repetition counts ({n,m}) or fewer alternatives",
			ErrBadPattern, n, MaxPatternInsts)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadPattern, err)
	}
	m := &matcher{re: re, empty: onlyEmpty(simple), cost: max(len(prog.Inst), 1)}
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
// is the worker's finder for m's needles. It stops early, with what it has,
// once ctx is done; the caller checks ctx.
func (m *matcher) scan(ctx context.Context, f *finder, data []byte, limit int, out []match) []match {
	mt := meter{ctx: ctx}
	if f == nil {
		num := 1
		for ls := 0; ls < len(data) && len(out) < limit; num++ {
			le := lineEnd(data, ls)
			cs, ce := lineBounds(data, ls, le)
			if m.match(ctx, data[cs:ce]) {
				out = append(out, match{num, cs, ce})
			}
			if mt.add((le - ls + 1) * m.cost) {
				return out
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
		work := le + 1 - from
		if m.pure && cs <= start && end <= ce {
			out = append(out, match{num, cs, ce})
		} else {
			if m.match(ctx, data[cs:ce]) {
				out = append(out, match{num, cs, ce})
			}
			work += (ce - cs) * m.cost
		}
		if mt.add(work) {
			return out
		}
		from = le + 1
	}
	return out
}

// meter counts work and checks a context every checkWork of it.
type meter struct {
	ctx     context.Context
	work    int
	stopped bool
}

// add counts n units of work and reports whether ctx is done (checking it
// only every checkWork units).
func (mt *meter) add(n int) bool {
	mt.work += n
	if mt.work >= checkWork {
		mt.work = 0
		mt.stopped = mt.ctx.Err() != nil
	}
	return mt.stopped
}

// match reports whether line matches. A line whose run of the regexp would
// take more than checkWork is read through a lineReader, which ends it
// early once ctx is done (the answer is then meaningless, and the caller,
// which checks ctx, drops it).
func (m *matcher) match(ctx context.Context, line []byte) bool {
	if len(line)*m.cost <= checkWork {
		return m.re.Match(line)
	}
	return m.re.MatchReader(&lineReader{ctx: ctx, b: line, every: max(checkWork/m.cost, 1)})
}

// lineReader reads a line rune by rune, as regexp reads its []byte input
// (an invalid byte is utf8.RuneError of width 1), and reports the end of
// the line early once ctx is done, checked every every bytes: the only way
// to stop a regexp that has started on a long line.
type lineReader struct {
	ctx   context.Context
	b     []byte
	i     int
	next  int // where ctx is checked next
	every int
}

func (r *lineReader) ReadRune() (rune, int, error) {
	if r.i >= len(r.b) {
		return 0, 0, io.EOF
	}
	if r.i >= r.next {
		if err := r.ctx.Err(); err != nil {
			return 0, 0, err
		}
		r.next = r.i + r.every
	}
	if c := r.b[r.i]; c < utf8.RuneSelf {
		r.i++
		return rune(c), 1, nil
	}
	c, n := utf8.DecodeRune(r.b[r.i:])
	r.i += n
	return c, n, nil
}

// buildLines returns the lines of ms with before and after lines of context,
// merged, each line once. Context stops short of line stop (0: no stop), the
// first match that was cut off by the limit, so that a matching line is never
// shown as context. It stops early, with what it has, once ctx is done; the
// caller checks ctx.
func (m *matcher) buildLines(ctx context.Context, data []byte, ms []match, before, after, stop int) []Line {
	mt := meter{ctx: ctx}
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
			mt.add(min(ce-cs, spanWork/m.cost) * m.cost)
		}
		lines = append(lines, l)
		next, nextAt = num+1, le+1
		return le + 1
	}
	for i, m := range ms {
		if mt.stopped {
			break
		}
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

// spans returns the non-empty matches of the pattern in a matching line,
// in its first spanWork/cost bytes (see spanWork).
func (m *matcher) spans(line []byte) []Span {
	if m.empty {
		return nil
	}
	if n := spanWork / m.cost; len(line) > n {
		for n > 0 && !utf8.RuneStart(line[n]) {
			n--
		}
		line = line[:n]
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
