package grep

import (
	"bytes"
	"math"
	"unicode"
	"unicode/utf8"
)

// byteWeight is -4*log2 of each byte's frequency in Go's source tree (about
// 11k files of code, text and test data), the statistic the prefilter uses to
// pick the rarest byte of a literal to scan for. It need not be exact: a
// poor guess costs speed, never correctness.
var byteWeight = [256]uint8{
	18, 34, 36, 36, 38, 41, 39, 43, 40, 20, 21, 45, 43, 45, 41, 38, // 0x00
	40, 45, 46, 45, 45, 45, 45, 45, 44, 46, 48, 47, 47, 48, 48, 44, // 0x10
	12, 38, 28, 44, 39, 40, 39, 40, 26, 26, 36, 38, 23, 35, 25, 26, // 0x20
	20, 25, 27, 29, 28, 31, 29, 32, 30, 31, 28, 38, 39, 28, 40, 47, // 0x30
	41, 26, 32, 30, 31, 29, 33, 36, 33, 30, 41, 39, 32, 32, 33, 31, // 0x40
	31, 37, 30, 29, 29, 35, 33, 38, 33, 38, 41, 35, 31, 35, 47, 29, // 0x50
	42, 21, 28, 24, 25, 18, 24, 27, 28, 21, 41, 32, 24, 27, 21, 22, // 0x60
	26, 41, 21, 22, 19, 25, 30, 33, 23, 30, 38, 30, 38, 30, 49, 47, // 0x70
	42, 47, 47, 43, 44, 44, 48, 50, 47, 39, 50, 42, 47, 43, 46, 50, // 0x80
	46, 46, 49, 49, 46, 49, 51, 49, 49, 51, 50, 50, 50, 51, 50, 50, // 0x90
	47, 50, 51, 51, 50, 51, 51, 48, 48, 46, 45, 50, 50, 49, 51, 51, // 0xa0
	49, 50, 51, 51, 49, 50, 49, 47, 48, 47, 49, 51, 50, 51, 49, 49, // 0xb0
	42, 44, 45, 47, 47, 48, 46, 48, 47, 48, 49, 50, 48, 50, 49, 50, // 0xc0
	48, 49, 49, 49, 50, 48, 48, 50, 48, 48, 50, 49, 50, 51, 50, 50, // 0xd0
	45, 47, 47, 48, 49, 50, 50, 49, 44, 45, 50, 46, 48, 50, 50, 48, // 0xe0
	46, 49, 50, 46, 49, 50, 48, 48, 47, 45, 49, 49, 44, 46, 47, 33, // 0xf0
}

// byteBits is the information in one occurrence of b, in bits.
func byteBits(b byte) float64 { return float64(byteWeight[b]) / 4 }

// byteProb is how often b occurs.
func byteProb(b byte) float64 { return math.Exp2(-byteBits(b)) }

// foldByteBits is byteBits for an ASCII byte under case folding, where
// either case (and for k and s, a non-ASCII rune) will do.
func foldByteBits(b byte) float64 {
	p := 0.0
	for _, v := range foldVariants(rune(b)) {
		if len(v) == 1 {
			p += byteProb(v[0])
		}
	}
	return -math.Log2(p)
}

// foldVariants returns the UTF-8 encodings of every rune that r matches under
// simple case folding, r's included.
func foldVariants(r rune) [][]byte {
	out := [][]byte{utf8.AppendRune(nil, r)}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		out = append(out, utf8.AppendRune(nil, f))
	}
	return out
}

// foldEq reports whether a and b match each other under simple case folding.
func foldEq(a, b rune) bool {
	if a == b {
		return true
	}
	if a < utf8.RuneSelf && b < utf8.RuneSelf {
		return lowerASCII(byte(a)) == lowerASCII(byte(b))
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// needle finds one literal. It scans for the literal's rarest byte (for a
// case-folded literal, every encoding of its rarest rune) with the vectorised
// bytes.IndexByte, and checks the literal around each hit. This beats
// bytes.Index, which scans for the first byte of the literal, however common.
type needle struct {
	lit  string
	fold bool
	// runes is lit decoded, for fold.
	runes []rune
	// anchor is the byte offset (case-sensitive) or rune index (fold) in lit
	// of the part that is scanned for.
	anchor int
	// variants are the byte strings scanned for: the anchor byte, or every
	// encoding of the anchor rune.
	variants [][]byte
	// minBefore is the fewest bytes of text that can precede an anchor hit
	// within an occurrence.
	minBefore int
}

func newNeedle(l lit) *needle {
	n := &needle{lit: l.s, fold: l.fold}
	if !l.fold {
		best := -1.0
		for i := 0; i < len(l.s); i++ {
			if b := byteBits(l.s[i]); b > best {
				best, n.anchor = b, i
			}
		}
		n.variants = [][]byte{{l.s[n.anchor]}}
		n.minBefore = n.anchor
		return n
	}
	n.runes = []rune(l.s)
	best := math.Inf(1)
	for i, r := range n.runes {
		vs := foldVariants(r)
		cost := 0.0
		for _, v := range vs {
			if len(v) == 1 {
				cost += byteProb(v[0])
			} else {
				// A multi-byte scan is a slower bytes.Index; count it so.
				cost += 4 * byteProb(v[len(v)-1])
			}
		}
		if cost < best {
			best, n.anchor, n.variants = cost, i, vs
		}
	}
	n.minBefore = n.anchor
	return n
}

// verify reports whether the literal occurs in data with variant v of its
// anchor at h, and where.
func (n *needle) verify(data []byte, h int, v []byte) (start, end int, ok bool) {
	if !n.fold {
		start, end = h-n.anchor, h-n.anchor+len(n.lit)
		if start < 0 || end > len(data) || string(data[start:end]) != n.lit {
			return 0, 0, false
		}
		return start, end, true
	}
	end = h + len(v)
	for _, r := range n.runes[n.anchor+1:] {
		if end >= len(data) {
			return 0, 0, false
		}
		c, size := rune(data[end]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeRune(data[end:])
		}
		if !foldEq(r, c) {
			return 0, 0, false
		}
		end += size
	}
	start = h
	for i := n.anchor - 1; i >= 0; i-- {
		if start <= 0 {
			return 0, 0, false
		}
		c, size := rune(data[start-1]), 1
		if c >= utf8.RuneSelf {
			c, size = utf8.DecodeLastRune(data[:start])
		}
		if !foldEq(n.runes[i], c) {
			return 0, 0, false
		}
		start -= size
	}
	return start, end, true
}

// stream is one byte string being scanned for, with its next hit cached so
// that a set of needles costs one pass per stream over a file, not one per
// candidate line.
type stream struct {
	n *needle
	v []byte
	// pos is the first hit at or after lo that has not been rejected yet,
	// or -1 if there is none.
	pos int
	lo  int
}

// finder locates the earliest occurrence of any of a set of literals. It
// keeps state between calls and belongs to one worker.
type finder struct {
	streams []stream
	// single, for one case-sensitive literal, is the same search without
	// the bookkeeping of streams, which showed in profiles: the anchor of a
	// typical literal occurs every hundred bytes or so.
	single *needle
}

func newFinder(needles []*needle) *finder {
	f := &finder{}
	if len(needles) == 1 && !needles[0].fold {
		f.single = needles[0]
	}
	for _, n := range needles {
		for _, v := range n.variants {
			f.streams = append(f.streams, stream{n: n, v: v})
		}
	}
	return f
}

// reset prepares f for a new text.
func (f *finder) reset() {
	for i := range f.streams {
		f.streams[i].lo, f.streams[i].pos = math.MaxInt, -1
	}
}

// next returns an occurrence that starts at or after from, if any. Hits are
// tried in the order of their anchors, so of the occurrences that lie within a
// line (the only ones that can be part of a match) one in the earliest such
// line comes first. from must not decrease between calls after a reset.
func (f *finder) next(data []byte, from int) (start, end int, ok bool) {
	if f.single != nil {
		return f.single.next(data, from)
	}
	for {
		bi := -1
		for i := range f.streams {
			s := &f.streams[i]
			lo := from + s.n.minBefore
			if s.lo > lo || (s.pos >= 0 && s.pos < lo) {
				s.lo = lo
				s.search(data, lo)
			}
			if s.pos >= 0 && (bi < 0 || s.pos < f.streams[bi].pos) {
				bi = i
			}
		}
		if bi < 0 {
			return 0, 0, false
		}
		s := &f.streams[bi]
		if start, end, ok := s.n.verify(data, s.pos, s.v); ok && start >= from {
			return start, end, true
		}
		s.search(data, s.pos+1)
	}
}

// search sets pos to the first hit at or after lo.
func (s *stream) search(data []byte, lo int) {
	s.pos = -1
	if lo >= len(data) {
		return
	}
	var i int
	if len(s.v) == 1 {
		i = bytes.IndexByte(data[lo:], s.v[0])
	} else {
		i = bytes.Index(data[lo:], s.v)
	}
	if i >= 0 {
		s.pos = lo + i
	}
}

// next is finder.next for a finder of this one case-sensitive needle.
func (n *needle) next(data []byte, from int) (start, end int, ok bool) {
	b := n.lit[n.anchor]
	for i := from + n.anchor; i < len(data); {
		k := bytes.IndexByte(data[i:], b)
		if k < 0 {
			break
		}
		start = i + k - n.anchor
		end = start + len(n.lit)
		if end <= len(data) && string(data[start:end]) == n.lit {
			return start, end, true
		}
		i += k + 1
	}
	return 0, 0, false
}
