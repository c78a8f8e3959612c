package grep

import (
	"math"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// lit is a string a match may have to contain.
type lit struct {
	s string
	// fold makes s match with Unicode simple case folding, as (?i) does.
	// It is false for strings without cased runes, so that they combine
	// freely with both kinds.
	fold bool
}

// Limits that keep literal sets cheap: every member of a set costs its own
// pass over the file.
const (
	maxLits       = 16
	maxClassRunes = 10
)

// litInfo is what analyze learns about a regexp node.
type litInfo struct {
	// exact, when hasExact, is every string the node can match.
	exact    []lit
	hasExact bool
	// pure reports that exact is all there is to the node: no zero-width
	// assertion (^, $, \b) was dropped on the way.
	pure bool
	// req, when not nil, is a set one of whose members every match of the
	// node contains.
	req []lit
}

// requiredLits returns a set of literals one of which every match of re
// contains (nil if none was found), and whether re matches exactly when one of
// them occurs, so that the regexp need not run at all.
func requiredLits(re *syntax.Regexp) (set []lit, pure bool) {
	info := analyze(re)
	// Being pure saves running the regexp on candidate lines, but not if the
	// exact set is a worse prefilter than a required part of it, as
	// Context[0-9] is than Context.
	set, exact := pick(info)
	return set, exact && info.pure
}

// analyze works bottom up over a simplified regexp. Every rule must be
// sound: a required set may be weak or missing, never one that a match can
// lack, and exact must hold every string the node can match.
func analyze(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return exactly(true, lit{})
	case syntax.OpLiteral:
		if slices.ContainsFunc(re.Rune, notLiteral) {
			return litInfo{} // see matchesInvalid
		}
		return exactly(true, newLit(string(re.Rune), re.Flags&syntax.FoldCase != 0))
	case syntax.OpCharClass:
		if matchesInvalid(re.Rune) {
			return litInfo{}
		}
		return analyzeClass(re)
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		// Zero width: neutral in a concatenation, but the line has to be
		// checked by the regexp.
		return exactly(false, lit{})
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpPlus:
		return litInfo{req: best(analyze(re.Sub[0]))}
	case syntax.OpQuest:
		sub := analyze(re.Sub[0])
		if !sub.hasExact || len(sub.exact) >= maxLits {
			return litInfo{}
		}
		return litInfo{exact: append(clip(sub.exact), lit{}), hasExact: true, pure: sub.pure}
	case syntax.OpRepeat:
		// Simplify has expanded counted repetitions; what is left is x{n,}.
		if re.Min >= 1 {
			return litInfo{req: best(analyze(re.Sub[0]))}
		}
		return litInfo{}
	case syntax.OpConcat:
		return analyzeConcat(re.Sub)
	case syntax.OpAlternate:
		return analyzeAlternate(re.Sub)
	}
	return litInfo{}
}

// matchesInvalid reports whether a class holds U+FFFD or a rune that is
// not a Unicode scalar value (a surrogate, U+D800 to U+DFFF). Go's regexp
// reads each byte that is not valid UTF-8 as U+FFFD, so such a class (or a
// literal U+FFFD) also matches bytes that are not its UTF-8 encoding; and a
// surrogate matches nothing, while its UTF-8 encoding in Go is that of
// U+FFFD. No literal can stand for either.
func matchesInvalid(ranges []rune) bool {
	for i := 0; i < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo <= utf8.RuneError && utf8.RuneError <= hi ||
			lo <= surrogateMax && surrogateMin <= hi || hi > utf8.MaxRune {
			return true
		}
	}
	return false
}

// The surrogates, which are runes but not Unicode scalar values.
const surrogateMin, surrogateMax = 0xD800, 0xDFFF

// notLiteral reports whether a rune of a literal has no UTF-8 encoding of
// its own that the regexp matches (see matchesInvalid).
func notLiteral(r rune) bool { return r == utf8.RuneError || !utf8.ValidRune(r) }

func exactly(pure bool, l lit) litInfo {
	return litInfo{exact: []lit{l}, hasExact: true, pure: pure}
}

// analyzeClass turns a small class such as [0-9] or [ab] into the set of its
// runes, and a class that is one rune in every case, as (?i)[s] is [Ssſ],
// into that rune folded.
func analyzeClass(re *syntax.Regexp) litInfo {
	if r, ok := foldClass(re.Rune); ok {
		return exactly(true, newLit(string(r), true))
	}
	n := 0
	for i := 0; i < len(re.Rune); i += 2 {
		n += int(re.Rune[i+1]-re.Rune[i]) + 1
		if n > maxClassRunes {
			return litInfo{}
		}
	}
	info := litInfo{hasExact: true, pure: true}
	for i := 0; i < len(re.Rune); i += 2 {
		for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
			info.exact = append(info.exact, lit{s: string(r)})
		}
	}
	return info
}

// analyzeConcat multiplies out adjacent exact sets ("a" [bc] "d" is {abd,
// acd}) as long as they stay small; every product and every required set
// found inside is a candidate for the node's required set.
func analyzeConcat(subs []*syntax.Regexp) litInfo {
	var cands [][]lit
	cur, curPure, all := []lit{{}}, true, true
	for _, sub := range subs {
		si := analyze(sub)
		if si.req != nil {
			cands = append(cands, si.req)
		}
		if si.hasExact {
			if prod, ok := cross(cur, si.exact); ok {
				if len(prod) > len(cur) && usable(cur) {
					cands = append(cands, cur)
				}
				cur, curPure = prod, curPure && si.pure
				continue
			}
		}
		all = false
		if usable(cur) {
			cands = append(cands, cur)
		}
		cur, curPure = []lit{{}}, true
		if si.hasExact {
			cur, curPure = si.exact, si.pure
		}
	}
	if usable(cur) {
		cands = append(cands, cur)
	}
	info := litInfo{req: bestOf(cands)}
	if all {
		info.exact, info.hasExact, info.pure = cur, true, curPure
	}
	return info
}

// analyzeAlternate unions the alternatives: exact if every one is, and
// required if every one has a required set.
func analyzeAlternate(subs []*syntax.Regexp) litInfo {
	info := litInfo{hasExact: true, pure: true}
	reqOK := true
	for _, sub := range subs {
		si := analyze(sub)
		if info.hasExact && si.hasExact && len(info.exact)+len(si.exact) <= maxLits {
			info.exact = append(info.exact, si.exact...)
			info.pure = info.pure && si.pure
		} else {
			info.exact, info.hasExact, info.pure = nil, false, false
		}
		if r := best(si); reqOK && r != nil && len(info.req)+len(r) <= maxLits {
			info.req = append(info.req, r...)
		} else {
			reqOK, info.req = false, nil
		}
	}
	return info
}

// foldClass reports whether ranges are exactly the runes that one rune
// matches under simple case folding, and that rune.
func foldClass(ranges []rune) (rune, bool) {
	if len(ranges) == 0 || len(ranges) > 8 {
		return 0, false
	}
	r := ranges[0]
	var orbit []rune
	for f := r; ; {
		orbit = append(orbit, f, f)
		if f = unicode.SimpleFold(f); f == r {
			break
		}
	}
	if len(orbit) < 4 {
		return 0, false
	}
	// Orbits are short; compare as sets of single-rune ranges.
	slices.Sort(orbit)
	var flat []rune
	for i := 0; i < len(ranges); i += 2 {
		for c := ranges[i]; c <= ranges[i+1]; c++ {
			flat = append(flat, c, c)
		}
		if len(flat) > len(orbit) {
			return 0, false
		}
	}
	return r, slices.Equal(flat, orbit)
}

// cross returns every concatenation of a member of a with a member of b, or
// false if there would be too many or a case-sensitive cased string would
// have to join a case-folded one.
func cross(a, b []lit) ([]lit, bool) {
	if len(a)*len(b) > maxLits {
		return nil, false
	}
	out := make([]lit, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if x.s != "" && y.s != "" && x.fold != y.fold {
				return nil, false
			}
			out = append(out, lit{s: x.s + y.s, fold: x.fold || y.fold})
		}
	}
	return out, true
}

// newLit builds a lit, dropping fold when it makes no difference.
func newLit(s string, fold bool) lit {
	return lit{s: s, fold: fold && hasCase(s)}
}

func hasCase(s string) bool {
	for _, r := range s {
		if unicode.SimpleFold(r) != r {
			return true
		}
	}
	return false
}

// usable reports whether set can serve as a prefilter: small, and with no
// empty member (which every line contains).
func usable(set []lit) bool {
	if len(set) == 0 || len(set) > maxLits {
		return false
	}
	for _, l := range set {
		if l.s == "" {
			return false
		}
	}
	return true
}

// best picks the better of a node's exact set and its required set.
func best(info litInfo) []lit {
	set, _ := pick(info)
	return set
}

// pick is best, also reporting whether the exact set was picked.
func pick(info litInfo) (set []lit, exact bool) {
	if !info.hasExact || !usable(info.exact) {
		return info.req, false
	}
	if usable(info.req) && setScore(info.req) > setScore(info.exact) {
		return info.req, false
	}
	return info.exact, true
}

// bestOf returns the candidate a prefilter would find fewest false
// positives with, or nil.
func bestOf(cands [][]lit) []lit {
	var out []lit
	score := math.Inf(-1)
	for _, c := range cands {
		if !usable(c) {
			continue
		}
		if s := setScore(c); s > score {
			out, score = c, s
		}
	}
	return out
}

// setScore estimates, in bits, how unlikely a set is to occur at a given
// position of a typical source file: the rarer, the better a prefilter.
// Every extra member costs a little too, since it is one more pass.
func setScore(set []lit) float64 {
	p := 0.0
	for _, l := range set {
		p += math.Exp2(-litBits(l))
	}
	return -math.Log2(p) - 0.5*float64(len(set)-1)
}

// litBits estimates the information in a literal from byte frequencies.
func litBits(l lit) float64 {
	bits := 0.0
	for i := 0; i < len(l.s); {
		r, size := utf8.DecodeRuneInString(l.s[i:])
		if l.fold && r < utf8.RuneSelf {
			bits += foldByteBits(byte(r))
		} else {
			for _, b := range []byte(l.s[i : i+size]) {
				bits += byteBits(b)
			}
		}
		i += size
	}
	return bits
}

func clip(s []lit) []lit { return s[:len(s):len(s)] }
