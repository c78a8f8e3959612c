package history

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sync"
	"time"
)

// A record is a frame and a body. The frame is four little-endian uint32:
// the body's length, the head's length (the head is the body's first
// part), the CRC-32C of the frame's first 8 bytes and the head, and the
// CRC-32C of the rest of the body, the tail. The head is the change
// without its lines: the sequence number, time (Unix nanoseconds), kind,
// flags, agent, request id, reverted sequence number, and per file its
// paths, versions and hunks' numbers; the tail is every hunk's removed and
// added lines, in order. Numbers are varints, strings a length and bytes.
// The two checksums let a query read and trust a head without the lines,
// which are most of a record's bytes.
const frameLen = 16

const (
	flagLinesOmitted = 1 << iota
	flagHunksMerged
	flagsAll = flagLinesOmitted | flagHunksMerged
)

// Version tags: a version of the form v2-<32 hex digits> is kept as its 16
// bytes, any other as a string.
const (
	verNone = iota
	verV2
	verRaw
)

var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// appendRecord appends the record of c, with sequence number seq and time
// t, to buf and returns it and the head's length.
func appendRecord(buf []byte, c *Change, seq uint64, t int64) ([]byte, int) {
	start := len(buf)
	buf = append(buf, make([]byte, frameLen)...)
	buf = binary.AppendUvarint(buf, seq)
	buf = binary.AppendVarint(buf, t)
	var flags byte
	if c.LinesOmitted {
		flags |= flagLinesOmitted
	}
	if c.HunksMerged {
		flags |= flagHunksMerged
	}
	buf = append(buf, byte(c.Kind), flags)
	buf = appendString(buf, c.Agent)
	buf = appendString(buf, c.RequestID)
	buf = binary.AppendUvarint(buf, c.Reverts.seq)
	buf = binary.AppendUvarint(buf, uint64(len(c.Files)))
	for i := range c.Files {
		f := &c.Files[i]
		buf = appendString(buf, f.Path)
		buf = appendString(buf, f.From)
		buf = appendVersion(buf, f.Before)
		buf = appendVersion(buf, f.After)
		buf = binary.AppendUvarint(buf, uint64(len(f.Hunks)))
		prev := 0
		for _, h := range f.Hunks {
			buf = binary.AppendUvarint(buf, uint64(h.A0-prev))
			buf = binary.AppendUvarint(buf, uint64(h.A1-h.A0))
			buf = binary.AppendUvarint(buf, uint64(h.B1-h.B0))
			prev = h.A1
		}
	}
	head := len(buf) - start - frameLen
	if !c.LinesOmitted {
		for i := range c.Files {
			for _, h := range c.Files[i].Hunks {
				for _, s := range h.Removed {
					buf = appendString(buf, s)
				}
				for _, s := range h.Added {
					buf = appendString(buf, s)
				}
			}
		}
	}
	fr := buf[start : start+frameLen]
	binary.LittleEndian.PutUint32(fr[0:], uint32(len(buf)-start-frameLen))
	binary.LittleEndian.PutUint32(fr[4:], uint32(head))
	hc := crc32.Update(crc32.Checksum(fr[:8], castagnoli()), castagnoli(), buf[start+frameLen:start+frameLen+head])
	binary.LittleEndian.PutUint32(fr[8:], hc)
	binary.LittleEndian.PutUint32(fr[12:], crc32.Checksum(buf[start+frameLen+head:], castagnoli()))
	return buf, head
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendVersion(buf []byte, v string) []byte {
	switch {
	case v == "":
		return append(buf, verNone)
	case len(v) == 35 && v[:3] == "v2-" && isLowerHex(v[3:]):
		buf = append(buf, verV2)
		buf, _ = hex.AppendDecode(buf, []byte(v[3:])) // checked hex above
		return buf
	}
	buf = append(buf, verRaw)
	return appendString(buf, v)
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// frame is a record's frame, decoded.
type frame struct {
	body, head       uint32
	headSum, tailSum uint32
}

var errDamaged = errors.New("damaged record")

func parseFrame(b []byte) (frame, error) {
	if len(b) < frameLen {
		return frame{}, fmt.Errorf("%w: a frame of %d bytes", errDamaged, len(b))
	}
	f := frame{
		body: binary.LittleEndian.Uint32(b[0:]), head: binary.LittleEndian.Uint32(b[4:]),
		headSum: binary.LittleEndian.Uint32(b[8:]), tailSum: binary.LittleEndian.Uint32(b[12:]),
	}
	if f.head == 0 || f.head > f.body {
		return frame{}, fmt.Errorf("%w: a head of %d bytes in a body of %d", errDamaged, f.head, f.body)
	}
	return f, nil
}

// checkHead checks the head's checksum; b is the frame and the head.
func (f frame) checkHead(b []byte) error {
	if crc32.Update(crc32.Checksum(b[:8], castagnoli()), castagnoli(), b[frameLen:frameLen+int(f.head)]) != f.headSum {
		return fmt.Errorf("%w: head checksum mismatch", errDamaged)
	}
	return nil
}

func (f frame) checkTail(tail []byte) error {
	if crc32.Checksum(tail, castagnoli()) != f.tailSum {
		return fmt.Errorf("%w: tail checksum mismatch", errDamaged)
	}
	return nil
}

// decodeRecord decodes the record at the start of b, checking both
// checksums, and returns the change (its ID without the log's number) and
// the record's length.
func decodeRecord(b []byte) (Change, int, error) {
	f, err := parseFrame(b)
	if err != nil {
		return Change{}, 0, err
	}
	if uint64(len(b)-frameLen) < uint64(f.body) {
		return Change{}, 0, fmt.Errorf("%w: a body of %d bytes, %d there", errDamaged, f.body, len(b)-frameLen)
	}
	n := frameLen + int(f.body)
	if err := f.checkHead(b); err != nil {
		return Change{}, 0, err
	}
	tail := b[frameLen+int(f.head) : n]
	if err := f.checkTail(tail); err != nil {
		return Change{}, 0, err
	}
	c, err := decodeHead(b[frameLen : frameLen+int(f.head)])
	if err != nil {
		return Change{}, 0, err
	}
	if err := decodeTail(&c, tail); err != nil {
		return Change{}, 0, err
	}
	return c, n, nil
}

// reader decodes varints and strings, failing once on anything short or
// out of bounds; every count is checked against the bytes left, so a
// damaged count cannot make it allocate more than the record's size.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s", errDamaged, what)
	}
	r.b = nil
}

func (r *reader) uvarint(what string) uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a number of items each of at least min bytes.
func (r *reader) count(what string, min int) int {
	v := r.uvarint(what)
	if v > uint64(len(r.b)/min) {
		r.fail(what)
		return 0
	}
	return int(v)
}

func (r *reader) byte(what string) byte {
	if len(r.b) == 0 {
		r.fail(what)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) string(what string) string {
	n := r.uvarint(what)
	if n > uint64(len(r.b)) {
		r.fail(what)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) version(what string) string {
	switch r.byte(what) {
	case verNone:
		return ""
	case verV2:
		if len(r.b) < 16 {
			r.fail(what)
			return ""
		}
		s := "v2-" + hex.EncodeToString(r.b[:16])
		r.b = r.b[16:]
		return s
	case verRaw:
		s := r.string(what)
		if s == "" || len(s) > maxVersionBytes {
			r.fail(what)
		}
		return s
	}
	r.fail(what)
	return ""
}

// decodeHead decodes a head into a change without lines, checking all
// that Append checks of what a head holds.
func decodeHead(b []byte) (Change, error) {
	r := &reader{b: b}
	var c Change
	c.ID.seq = r.uvarint("sequence number")
	t, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("time")
	} else {
		r.b = r.b[n:]
	}
	c.Time = time.Unix(0, t).UTC()
	c.Kind = Kind(r.byte("kind"))
	flags := r.byte("flags")
	c.LinesOmitted, c.HunksMerged = flags&flagLinesOmitted != 0, flags&flagHunksMerged != 0
	c.Agent = r.string("agent")
	c.RequestID = r.string("request id")
	c.Reverts.seq = r.uvarint("reverted change")
	nf := r.count("file count", 5)
	if r.err == nil {
		c.Files = make([]File, nf)
	}
	for i := 0; i < nf && r.err == nil; i++ {
		f := &c.Files[i]
		f.Path = r.string("path")
		f.From = r.string("from path")
		f.Before = r.version("version before")
		f.After = r.version("version after")
		nh := r.count("hunk count", 3)
		if nh > 0 {
			f.Hunks = make([]Hunk, nh)
		}
		a, delta := 0, 0
		for j := 0; j < nh && r.err == nil; j++ {
			gap, rem, add := r.uvarint("hunk"), r.uvarint("hunk"), r.uvarint("hunk")
			if gap > math.MaxInt32 || rem > math.MaxInt32 || add > math.MaxInt32 || a+int(gap)+int(rem) > math.MaxInt32 {
				r.fail("hunk")
				break
			}
			h := &f.Hunks[j].Hunk
			h.A0 = a + int(gap)
			h.A1 = h.A0 + int(rem)
			h.B0 = h.A0 + delta
			h.B1 = h.B0 + int(add)
			if h.B0 < 0 || h.B1 < 0 || h.B1 > math.MaxInt32 {
				r.fail("hunk")
				break
			}
			a, delta = h.A1, delta+int(add)-int(rem)
		}
		f.Removed, f.Added = counts(f.Hunks)
	}
	if r.err != nil {
		return Change{}, r.err
	}
	if len(r.b) != 0 {
		return Change{}, fmt.Errorf("%w: %d bytes after the head", errDamaged, len(r.b))
	}
	if flags&^flagsAll != 0 || flags&flagHunksMerged != 0 && flags&flagLinesOmitted == 0 {
		return Change{}, fmt.Errorf("%w: flags %#x", errDamaged, flags)
	}
	if c.ID.seq == 0 {
		return Change{}, fmt.Errorf("%w: sequence number 0", errDamaged)
	}
	// What Append checked: the log's number is not known here, and a
	// reverted change must be an earlier one.
	if err := c.checkWith(0, c.ID.seq, false); err != nil {
		return Change{}, fmt.Errorf("%w: %v", errDamaged, err)
	}
	return c, nil
}

// decodeTail fills the lines of c's hunks from a tail.
func decodeTail(c *Change, b []byte) error {
	if c.LinesOmitted {
		if len(b) != 0 {
			return fmt.Errorf("%w: lines after a head without", errDamaged)
		}
		return nil
	}
	r := &reader{b: b}
	for i := range c.Files {
		for j := range c.Files[i].Hunks {
			h := &c.Files[i].Hunks[j]
			h.Removed = r.lines(h.A1 - h.A0)
			h.Added = r.lines(h.B1 - h.B0)
		}
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the lines", errDamaged, len(r.b))
	}
	return nil
}

func (r *reader) lines(n int) []string {
	if n == 0 {
		return nil
	}
	if n > len(r.b) {
		r.fail("lines")
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.string("line")
	}
	return out
}
