package hashline

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/OneOfOne/xxhash"
)

// Hash lengths, in hex digits. Two digits keep tags short for models; longer
// hashes make accidental matches of a stale reference rarer at the cost of
// tokens, which is why the length is a server setting.
const (
	// DefaultHashLen is the length of the published hashline format.
	DefaultHashLen = 2
	// MinHashLen is the shortest hash a Hasher produces.
	MinHashLen = 2
	// MaxHashLen is the longest hash: all 32 bits of xxHash32.
	MaxHashLen = 8
)

// Hasher computes line hashes of a fixed length. The zero value uses
// DefaultHashLen, so a Hasher can be embedded in options without a constructor.
type Hasher struct {
	hexLen int
}

// NewHasher returns a Hasher that prints hexLen hex digits. It fails unless
// MinHashLen <= hexLen <= MaxHashLen.
func NewHasher(hexLen int) (Hasher, error) {
	if hexLen < MinHashLen || hexLen > MaxHashLen {
		return Hasher{}, fmt.Errorf("hash length %d is out of range; use %d to %d hex digits", hexLen, MinHashLen, MaxHashLen)
	}
	return Hasher{hexLen: hexLen}, nil
}

// Len reports the number of hex digits in the hashes h produces.
func (h Hasher) Len() int {
	if h.hexLen == 0 {
		return DefaultHashLen
	}
	return h.hexLen
}

// Sum returns the hash of one line's content as h.Len() lowercase hex digits.
func (h Hasher) Sum(content string) string {
	return h.format(Sum32(content))
}

// format prints the hash v of a line as Sum does.
func (h Hasher) format(v uint32) string {
	n := h.Len()
	if n == 2 {
		// Two-digit hashes are the common case; the table avoids an
		// allocation per line when building TaggedLine values.
		return hex2[v&0xff]
	}
	var buf [MaxHashLen]byte
	return string(appendHex(buf[:0], v, n))
}

const hexDigits = "0123456789abcdef"

// hex2 holds the 256 two-digit hashes so that Sum can return one without
// allocating.
var hex2 = func() (t [256]string) {
	for i := range t {
		t[i] = string([]byte{hexDigits[i>>4], hexDigits[i&0xf]})
	}
	return t
}()

// appendHex appends the low 4n bits of v as n zero-padded lowercase hex digits.
func appendHex(dst []byte, v uint32, n int) []byte {
	if n == 2 {
		return append(dst, hexDigits[v>>4&0xf], hexDigits[v&0xf])
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(v>>(4*uint(i)))&0xf])
	}
	return dst
}

// Byte classes for the whitespace scan. JavaScript's \s is ASCII space, \t,
// \n, \v, \f, \r plus U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
// U+205F, U+3000 and U+FEFF; in UTF-8 those multi-byte runes start with one
// of the lead bytes marked here, so other bytes can be skipped without
// decoding.
const (
	classKeep  = 0
	classSpace = 1
	classLead  = 2
)

var byteClass = func() (t [256]uint8) {
	for _, b := range []byte{' ', '\t', '\n', '\v', '\f', '\r'} {
		t[b] = classSpace
	}
	for _, b := range []byte{0xc2, 0xe1, 0xe2, 0xe3, 0xef} {
		t[b] = classLead
	}
	return t
}()

// unicodeSpaceLen reports the byte length of the JavaScript whitespace rune
// that starts s (whose first byte is a classLead byte), or 0 if s does not
// start with one. It matches encoded bytes rather than decoding runes so that
// invalid UTF-8 is hashed deterministically instead of being rejected.
func unicodeSpaceLen(s string) int {
	switch s[0] {
	case 0xc2: // U+00A0
		if len(s) >= 2 && s[1] == 0xa0 {
			return 2
		}
	case 0xe1: // U+1680
		if len(s) >= 3 && s[1] == 0x9a && s[2] == 0x80 {
			return 3
		}
	case 0xe2:
		if len(s) < 3 {
			return 0
		}
		switch s[1] {
		case 0x80: // U+2000-U+200A, U+2028, U+2029, U+202F
			if c := s[2]; c >= 0x80 && c <= 0x8a || c == 0xa8 || c == 0xa9 || c == 0xaf {
				return 3
			}
		case 0x81: // U+205F
			if s[2] == 0x9f {
				return 3
			}
		}
	case 0xe3: // U+3000
		if len(s) >= 3 && s[1] == 0x80 && s[2] == 0x80 {
			return 3
		}
	case 0xef: // U+FEFF
		if len(s) >= 3 && s[1] == 0xbb && s[2] == 0xbf {
			return 3
		}
	}
	return 0
}

// firstSpace returns the offset of the first whitespace byte sequence in s,
// or -1 if s has none.
func firstSpace(s string) int {
	for i := 0; i < len(s); i++ {
		switch byteClass[s[i]] {
		case classSpace:
			return i
		case classLead:
			if unicodeSpaceLen(s[i:]) > 0 {
				return i
			}
		}
	}
	return -1
}

// appendStripped appends s without whitespace to dst; from is the offset of
// the first whitespace in s (everything before it is copied as is). It is
// the inner loop of every read, so it works eight bytes at a time: a word of
// ASCII bytes is classified with SWAR arithmetic and compacted in a
// register, and only words with non-ASCII bytes take the byte-wise path
// that recognises Unicode whitespace.
func appendStripped(dst []byte, s string, from int) []byte {
	dst = append(dst, s[:from]...)
	j := len(dst)
	t := s[from:]
	// Eight bytes of slack let the last, partial word be stored whole.
	dst = slices.Grow(dst, len(t)+8)[:j+len(t)+8]
	i := 0
	for i < len(t) {
		var w uint64
		n := len(t) - i
		switch {
		case n >= 8:
			n = 8
			w = load64(t, i)
		case len(t) >= 8:
			// The last partial word: load the eight bytes that end the
			// text and shift out the ones already done. The zero bytes
			// shifted in are never whitespace, and j advances only past
			// the n real bytes.
			w = load64(t, len(t)-8) >> (8 * (8 - n))
		default:
			for k := range n {
				w |= uint64(t[i+k]) << (8 * k)
			}
		}
		if w&hiBits != 0 {
			j, i = stripBytes(dst, j, t, i, i+n)
			continue
		}
		// With every byte below 0x80 these sums cannot carry across bytes:
		// the high bit of each byte of ge9 is set iff the byte is >= 9, of
		// ge14 iff it is >= 14, and of ne32 iff it is not a space.
		ge9 := w + 0x7777777777777777
		ge14 := w + 0x7272727272727272
		x := w ^ 0x2020202020202020
		ne32 := x + 0x7f7f7f7f7f7f7f7f | x
		ws := (ge9&^ge14 | ^ne32) & hiBits
		// Remove the whitespace bytes from the highest down, so lower
		// positions stay valid, by shifting the bytes above each one down.
		for m := ws; m != 0; {
			hb := 63 - bits.LeadingZeros64(m)
			low := uint64(1)<<(hb&^7) - 1
			w = w&low | w>>8&^low
			m &^= 1 << hb
		}
		// j <= i, so the 8-byte store stays inside dst and its slack.
		binary.LittleEndian.PutUint64(dst[j:j+8], w)
		j += n - bits.OnesCount64(ws)
		i += n
	}
	return dst[:j]
}

const hiBits = 0x8080808080808080

// load64 reads the eight bytes of s at i as a little-endian word.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// stripBytes copies the bytes of t[i:end] that are not whitespace to
// dst[j:], one at a time, and returns the new j and i. A whitespace rune
// that starts before end is skipped whole, so i may end past end.
func stripBytes(dst []byte, j int, t string, i, end int) (int, int) {
	for i < end {
		c := t[i]
		switch byteClass[c] {
		case classSpace:
			i++
			continue
		case classLead:
			if k := unicodeSpaceLen(t[i:]); k > 0 {
				i += k
				continue
			}
		}
		dst[j] = c
		j++
		i++
	}
	return j, i
}

// stackStrip is the longest line stripped into a stack buffer; longer lines
// borrow a pooled buffer. Nearly all source lines fit.
const stackStrip = 512

var stripPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Sum32 returns the raw xxHash32 (seed 0) of content with all whitespace
// removed; Hasher.Sum prints its low bits. Dropping one trailing "\r", as the
// format specifies, is implied by removing every "\r". Sum32 does not
// allocate.
func Sum32(content string) uint32 {
	i := firstSpace(content)
	if i < 0 {
		// The hasher only reads its input, so hashing the string's bytes in
		// place is safe and saves a copy.
		return xxhash.Checksum32(unsafe.Slice(unsafe.StringData(content), len(content)))
	}
	// Stack buffers are zeroed on every call, so typical short lines get a
	// small one.
	if len(content) <= 64 {
		var buf [64 + 8]byte
		return xxhash.Checksum32(appendStripped(buf[:0], content, i))
	}
	if len(content) <= stackStrip {
		var buf [stackStrip + 8]byte
		return xxhash.Checksum32(appendStripped(buf[:0], content, i))
	}
	bp := stripPool.Get().(*[]byte)
	b := appendStripped((*bp)[:0], content, i)
	v := xxhash.Checksum32(b)
	if cap(b) <= 1<<20 {
		// Keep the grown buffer unless a giant line would pin it forever.
		*bp = b[:0]
		stripPool.Put(bp)
	}
	return v
}
