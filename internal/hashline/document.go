package hashline

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"
)

// utf8BOM is the byte order mark some editors put at the start of UTF-8
// files. It is kept on write but never shown as part of line 1.
const utf8BOM = "\xef\xbb\xbf"

// Document is an immutable text file split into lines. It keeps the original
// text and one offset per line, so parsing a large file costs two
// allocations however many lines it has, and every line, ending and byte is
// reproduced exactly by Bytes.
type Document struct {
	text   string // the file without its BOM
	bom    bool
	starts []int // starts[i] is the offset of line i (0-based); starts[Len()] == len(text)
	crlf   int   // number of "\r\n" endings
	lf     int   // number of bare "\n" endings
	// sums caches the lines' Sum32 in chunks of sumChunkLen lines, each
	// computed the first time one of its lines is tagged, or carried over
	// from the document an edit was applied to (carrySums). A document is
	// immutable and may be shared (the version cache keeps it), so a
	// file read again is tagged without hashing its lines again. A chunk
	// may be shared with another document, so the last one can hold
	// entries past Len() that are that document's; they are never read.
	sums []atomic.Pointer[sumChunk]
}

// sumChunkLen lines' hashes are computed together; a page of a large file
// hashes only the chunks it shows.
const sumChunkLen = 64

type sumChunk [sumChunkLen]uint32

// ParseDocument splits data into lines. The caller has checked that data is
// text (UTF-8); ParseDocument itself accepts any bytes and never fails, so
// that ParseDocument(b).Bytes() reproduces b exactly. Lines end at "\n"; a
// "\r" right before the "\n" belongs to the ending, any other "\r" is
// content. A leading UTF-8 BOM is remembered and is not part of line 1. An
// empty input has no lines and counts as ending with a newline. data is
// copied, so the caller may reuse it.
func ParseDocument(data []byte) *Document {
	return parseText(string(data))
}

// ParseText is ParseDocument for text already held as a string: the
// document shares s instead of copying it.
func ParseText(s string) *Document { return parseText(s) }

// parseText is ParseDocument without the copy, for text the package built.
func parseText(s string) *Document {
	d := &Document{}
	if strings.HasPrefix(s, utf8BOM) {
		d.bom = true
		s = s[len(utf8BOM):]
	}
	d.text = s
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	d.starts = make([]int, n+1)
	off := 0
	for i := range n {
		d.starts[i] = off
		j := strings.IndexByte(s[off:], '\n')
		if j < 0 {
			break // the last line has no ending
		}
		if j > 0 && s[off+j-1] == '\r' {
			d.crlf++
		} else {
			d.lf++
		}
		off += j + 1
	}
	d.starts[n] = len(s)
	d.sums = make([]atomic.Pointer[sumChunk], (n+sumChunkLen-1)/sumChunkLen)
	return d
}

// sum returns Sum32 of line n (1-based, in range), from the cache.
func (d *Document) sum(n int) uint32 {
	i := n - 1
	c := d.sums[i/sumChunkLen].Load()
	if c == nil {
		c = d.fillSums(i / sumChunkLen)
	}
	return c[i%sumChunkLen]
}

// fillSums computes chunk k. Two callers may race to do it; both compute
// the same values and the first one stored is kept.
func (d *Document) fillSums(k int) *sumChunk {
	c := new(sumChunk)
	first := k * sumChunkLen
	for i := first; i < min(first+sumChunkLen, d.Len()); i++ {
		c[i-first] = Sum32(d.Line(i + 1))
	}
	if !d.sums[k].CompareAndSwap(nil, c) {
		return d.sums[k].Load()
	}
	return c
}

// carrySums gives nd, the document Apply built from d and segs, the line
// sums d already had for the lines the batch copied, so that the windows
// shown after an edit and a later read do not hash those lines again. A
// chunk that sits in one run of copied lines moved by a whole number of
// chunks (or not moved: the run before the first change, and runs after
// changes that add as many lines as they remove) is shared as it is. Any
// other chunk that holds copied lines gets its sums copied line by line,
// and its new lines hashed, if d knew the sums of all its copied lines;
// otherwise, and for chunks of new lines only, it is left to be computed
// when first needed.
func carrySums(d, nd *Document, segs []segment) {
	si := 0
	for k := range nd.sums {
		first, last := k*sumChunkLen, min((k+1)*sumChunkLen, nd.Len()) // 0-based [first, last)
		for si < len(segs) && segs[si].newLine+segs[si].newLines <= first {
			si++
		}
		if si == len(segs) {
			return
		}
		if s := segs[si]; s.change < 0 && s.newLine <= first && last <= s.newLine+s.newLines {
			if off := s.start - s.newLine; off%sumChunkLen == 0 {
				nd.sums[k].Store(d.sums[k+off/sumChunkLen].Load())
				continue
			}
		}
		if !carried(d, segs[si:], first, last) {
			continue // hashed if and when its lines are shown
		}
		c := new(sumChunk)
		for i, sj := first, si; i < last; i++ {
			for segs[sj].newLine+segs[sj].newLines <= i {
				sj++
			}
			if s := segs[sj]; s.change < 0 {
				o := s.start + i - s.newLine
				c[i-first] = d.sums[o/sumChunkLen].Load()[o%sumChunkLen]
			} else {
				c[i-first] = Sum32(nd.Line(i + 1))
			}
		}
		nd.sums[k].Store(c)
	}
}

// carried reports whether the new lines [first, last) include copied lines
// and d has the sums of all of them. segs starts at the segment holding
// line first.
func carried(d *Document, segs []segment, first, last int) bool {
	copied := false
	for _, s := range segs {
		if s.newLine >= last {
			break
		}
		if s.change >= 0 || s.newLines == 0 {
			continue
		}
		from, to := max(first, s.newLine), min(last, s.newLine+s.newLines) // new lines, 0-based
		if from >= to {
			continue
		}
		for c := (s.start + from - s.newLine) / sumChunkLen; c <= (s.start+to-1-s.newLine)/sumChunkLen; c++ {
			if d.sums[c].Load() == nil {
				return false
			}
		}
		copied = true
	}
	return copied
}

// Hash returns the hash of line n (1-based, in range) as h formats it.
func (d *Document) Hash(h Hasher, n int) string { return h.format(d.sum(n)) }

// newDocument is a document of text (without its BOM) whose line starts
// are already known: starts[i] is where line i begins and the last entry
// is len(text). crlf and lf count its CRLF and bare LF endings.
func newDocument(text string, bom bool, starts []int, crlf, lf int) *Document {
	d := &Document{text: text, bom: bom, starts: starts, crlf: crlf, lf: lf}
	d.sums = make([]atomic.Pointer[sumChunk], (d.Len()+sumChunkLen-1)/sumChunkLen)
	return d
}

// Len returns the number of lines.
func (d *Document) Len() int { return len(d.starts) - 1 }

// raw returns line n (1-based) with its ending.
func (d *Document) raw(n int) string {
	return d.text[d.starts[n-1]:d.starts[n]]
}

// Line returns the content of line n (1-based) without its ending. It panics
// if n is not in [1, Len()].
func (d *Document) Line(n int) string {
	start, end := d.starts[n-1], d.starts[n]
	// Written out rather than with eolLen: this runs once per line read.
	if end > start && d.text[end-1] == '\n' {
		end--
		if end > start && d.text[end-1] == '\r' {
			end--
		}
	}
	return d.text[start:end]
}

// EOL returns the ending of line n (1-based): "\n", "\r\n", or "" for a last
// line without a final newline. It panics if n is not in [1, Len()].
func (d *Document) EOL(n int) string {
	s := d.raw(n)
	return s[len(s)-eolLen(s):]
}

// eolLen returns the length of the line ending that closes s.
func eolLen(s string) int {
	switch {
	case strings.HasSuffix(s, "\r\n"):
		return 2
	case strings.HasSuffix(s, "\n"):
		return 1
	}
	return 0
}

// BOM reports whether the file starts with a UTF-8 byte order mark.
func (d *Document) BOM() bool { return d.bom }

// FinalNewline reports whether the last line ends with a line ending. It is
// true for an empty document, so that lines added to it get endings.
func (d *Document) FinalNewline() bool {
	return d.text == "" || d.text[len(d.text)-1] == '\n'
}

// DominantEOL returns the ending that lines added by an edit get: "\r\n" if
// CRLF endings outnumber LF ones, else "\n".
func (d *Document) DominantEOL() string {
	if d.crlf > d.lf {
		return "\r\n"
	}
	return "\n"
}

// EOLStyle describes the file's endings: "lf", "crlf" or "mixed". A file
// without any ending is "lf".
func (d *Document) EOLStyle() string {
	switch {
	case d.crlf == 0:
		return "lf"
	case d.lf == 0:
		return "crlf"
	}
	return "mixed"
}

// Bytes returns the exact file contents, BOM included, in a new slice.
func (d *Document) Bytes() []byte {
	b := make([]byte, 0, len(utf8BOM)+len(d.text))
	if d.bom {
		b = append(b, utf8BOM...)
	}
	return append(b, d.text...)
}

// View returns the exact file contents, BOM included, like Bytes, but
// without copying when the document has no BOM. The result may share the
// document's memory, which is immutable: the caller must not modify it.
func (d *Document) View() []byte {
	if d.bom {
		return d.Bytes()
	}
	return unsafe.Slice(unsafe.StringData(d.text), len(d.text))
}

// Size returns the length of the file contents, BOM included, as Bytes
// would return them.
func (d *Document) Size() int {
	if d.bom {
		return len(utf8BOM) + len(d.text)
	}
	return len(d.text)
}

// Equal reports whether b is exactly the document's contents, BOM
// included, as Bytes would return them, without copying.
func (d *Document) Equal(b []byte) bool {
	if d.bom {
		if !bytes.HasPrefix(b, []byte(utf8BOM)) {
			return false
		}
		b = b[len(utf8BOM):]
	}
	return string(b) == d.text
}

// Text returns the file contents after the BOM without copying.
func (d *Document) Text() string { return d.text }

// clamp limits the 1-based inclusive range [from, to] to the document and
// reports whether anything is left.
func (d *Document) clamp(from, to int) (int, int, bool) {
	from = max(from, 1)
	to = min(to, d.Len())
	return from, to, from <= to
}

// Tagged returns lines from..to (1-based, inclusive, clamped to the document)
// with their hashes.
func (d *Document) Tagged(h Hasher, from, to int) []TaggedLine {
	from, to, ok := d.clamp(from, to)
	if !ok {
		return nil
	}
	out := make([]TaggedLine, 0, to-from+1)
	for n := from; n <= to; n++ {
		out = append(out, TaggedLine{Number: n, Hash: d.Hash(h, n), Content: d.Line(n)})
	}
	return out
}

// AppendTagged appends the read text of lines from..to (1-based, inclusive,
// clamped) to dst: tagged lines "LINE:HASH|CONTENT" joined by "\n", without a
// trailing newline. Content longer than maxLineBytes (when > 0) is cut as by
// CutLine, but its hash covers the whole line. This is the hot path of every
// read, so it grows dst once and allocates nothing per line.
func AppendTagged(dst []byte, h Hasher, d *Document, from, to int, maxLineBytes int) []byte {
	dst, _ = AppendTaggedPage(dst, h, d, from, to, maxLineBytes, 0, nil)
	return dst
}

// AppendTaggedPage is AppendTagged for a page of a read: it stops before the
// first line that would take len(dst) over budget bytes (budget <= 0: no
// limit), though the first line is always appended, and it calls each (when
// not nil) for every line it appends with the line's number, its hash (as
// h.Sum returns it) and its whole content, uncut. Every line is hashed once,
// for the text and the callback alike. It returns dst and the number of the
// last line appended (from-1, from clamped to 1, when there is none).
func AppendTaggedPage(dst []byte, h Hasher, d *Document, from, to, maxLineBytes, budget int, each func(n int, hash, content string)) ([]byte, int) {
	from, to, ok := d.clamp(from, to)
	if !ok {
		return dst, from - 1
	}
	hl := h.Len()
	var num lineCounter
	num.set(from)
	// Content plus per-line overhead: number, ':', hash, '|', '\n'.
	size := d.starts[to] - d.starts[from-1] + (to-from+1)*(decimalLen(to)+hl+3)
	if budget > 0 {
		size = min(size, max(budget-len(dst), 0)+64)
	}
	dst = slices.Grow(dst, size)
	for n := from; n <= to; n++ {
		before := len(dst)
		if n > from {
			dst = append(dst, '\n')
			num.inc()
		}
		c := d.Line(n)
		v := d.sum(n)
		dst = append(dst, num.digits()...)
		dst = append(dst, ':')
		dst = appendHex(dst, v, hl)
		dst = append(dst, '|')
		if maxLineBytes > 0 && len(c) > maxLineBytes {
			dst = append(dst, c[:cutPoint(c, maxLineBytes)]...)
			dst = appendCutMarker(dst, len(c))
		} else {
			dst = append(dst, c...)
		}
		if budget > 0 && len(dst) > budget && n > from {
			return dst[:before], n - 1
		}
		if each != nil {
			each(n, h.format(v), c)
		}
	}
	return dst, to
}

// lineCounter formats consecutive line numbers by incrementing decimal
// digits in place, which is cheaper than formatting every number anew.
type lineCounter struct {
	buf [20]byte
	pos int // digits are buf[pos:]
}

func (c *lineCounter) set(n int) {
	b := strconv.AppendInt(c.buf[:0], int64(n), 10)
	c.pos = len(c.buf) - len(b)
	copy(c.buf[c.pos:], b)
}

func (c *lineCounter) inc() {
	for i := len(c.buf) - 1; i >= c.pos; i-- {
		if c.buf[i] < '9' {
			c.buf[i]++
			return
		}
		c.buf[i] = '0'
	}
	c.pos--
	c.buf[c.pos] = '1'
}

func (c *lineCounter) digits() []byte { return c.buf[c.pos:] }

// decimalLen returns the number of decimal digits of n > 0.
func decimalLen(n int) int {
	l := 1
	for n >= 10 {
		n /= 10
		l++
	}
	return l
}
