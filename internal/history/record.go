package history

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sync"
	"time"

	"github.com/hashline/hashline/internal/versions"
)

// A record is a frame and a body. The frame is four little-endian uint32:
// the body's length, the head's length (the head is the body's first
// part), the CRC-32C of the frame's first 8 bytes and the head, and the
// CRC-32C of the rest of the body, the tail. The head is the change
// without its lines: the sequence number, time (Unix nanoseconds), kind,
// flags, agent, request id, reverted sequence number, per file its paths,
// versions and hunks' numbers, and (flagResolves) the outcomes of earlier
// pending changes; the tail is every hunk's removed and added lines, in
// order. Numbers are varints, strings a length and bytes. The two
// checksums let a query read and trust a head without the lines, which
// are most of a record's bytes.
//
// A record whose sequence number is 0 is a note, not a change: its head
// is the 0 and a list of outcomes, and it has no tail. Outcomes are
// written in the next record appended, or in a note when the log writes
// its records before one comes.
const frameLen = 16

const (
	flagLinesOmitted = 1 << iota
	flagHunksMerged
	// flagPending: the record was written before its change was made
	// (Log.Prepare); an outcome in a later record, or recovery, says
	// whether it was.
	flagPending
	// flagResolves: the head ends with outcomes of earlier pending
	// changes.
	flagResolves
	flagsAll = flagLinesOmitted | flagHunksMerged | flagPending | flagResolves
)

// outcome is what became of a pending change: made, or never made.
type outcome struct {
	seq     uint64
	applied bool
}

// Outcome bytes.
const (
	outApplied = 1
	outAborted = 2
)

func appendOutcomes(buf []byte, outs []outcome) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(outs)))
	for _, o := range outs {
		buf = binary.AppendUvarint(buf, o.seq)
		b := byte(outAborted)
		if o.applied {
			b = outApplied
		}
		buf = append(buf, b)
	}
	return buf
}

// appendNote appends a note of outs to buf.
func appendNote(buf []byte, outs []outcome) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, frameLen)...)
	buf = binary.AppendUvarint(buf, 0)
	buf = appendOutcomes(buf, outs)
	return sealFrame(buf, start, len(buf)-start-frameLen)
}

// sealFrame fills in the frame of the record at buf[start:], whose head
// is head bytes long.
func sealFrame(buf []byte, start, head int) []byte {
	fr := buf[start : start+frameLen]
	binary.LittleEndian.PutUint32(fr[0:], uint32(len(buf)-start-frameLen))
	binary.LittleEndian.PutUint32(fr[4:], uint32(head))
	hc := crc32.Update(crc32.Checksum(fr[:8], castagnoli()), castagnoli(), buf[start+frameLen:start+frameLen+head])
	binary.LittleEndian.PutUint32(fr[8:], hc)
	binary.LittleEndian.PutUint32(fr[12:], crc32.Checksum(buf[start+frameLen+head:], castagnoli()))
	return buf
}

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
	return appendRecordWith(buf, c, seq, t, false, nil)
}

// appendRecordWith is appendRecord of a change marked pending or not, its
// head carrying outs.
func appendRecordWith(buf []byte, c *Change, seq uint64, t int64, pending bool, outs []outcome) ([]byte, int) {
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
	if pending {
		flags |= flagPending
	}
	if len(outs) > 0 {
		flags |= flagResolves
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
	if len(outs) > 0 {
		buf = appendOutcomes(buf, outs)
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
	return sealFrame(buf, start, head), head
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

// bytes reads a string as a slice of the record.
func (r *reader) bytes(what string) []byte {
	n := r.uvarint(what)
	if n > uint64(len(r.b)) {
		r.fail(what)
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) string(what string) string { return string(r.bytes(what)) }

// verBytes is a version as a record holds it: its tag and bytes.
type verBytes struct {
	tag byte
	b   []byte
}

func (v verBytes) String() string {
	switch v.tag {
	case verV2:
		return "v2-" + hex.EncodeToString(v.b)
	case verRaw:
		return string(v.b)
	}
	return ""
}

func (r *reader) version(what string) verBytes {
	switch tag := r.byte(what); tag {
	case verNone:
		return verBytes{}
	case verV2:
		if len(r.b) < 16 {
			r.fail(what)
			return verBytes{}
		}
		v := verBytes{tag: tag, b: r.b[:16:16]}
		r.b = r.b[16:]
		return v
	case verRaw:
		s := r.bytes(what)
		if len(s) == 0 || len(s) > maxVersionBytes {
			r.fail(what)
		}
		return verBytes{tag: tag, b: s}
	}
	r.fail(what)
	return verBytes{}
}

// head is a record's head as scanHead reads it: its strings are slices of
// the record, and its slices are kept from one record to the next, so
// that reading the heads of a whole log (Open) allocates next to nothing.
type head struct {
	seq            uint64 // 0 for a note
	time           int64
	kind           Kind
	flags          byte
	agent, request []byte
	reverts        uint64
	files          []headFile
	hunks          []versions.Hunk // every file's, in order
	outs           []outcome
}

// headFile is a file of a head; its hunks are the next hunks of the head's.
type headFile struct {
	path, from    []byte
	before, after verBytes
	hunks         int
}

// scanHead reads the head b into h, checking everything Append checks of
// what a head holds (the log's number aside, which it does not hold), so
// that a head it takes decodes (decodeHead) to a change Append would take.
func scanHead(b []byte, h *head) error {
	r := &reader{b: b}
	*h = head{files: h.files[:0], hunks: h.hunks[:0], outs: h.outs[:0]}
	h.seq = r.uvarint("sequence number")
	if r.err == nil && h.seq == 0 {
		// A note: outcomes alone.
		r.outcomes(h, ^uint64(0))
		if r.err == nil && len(r.b) != 0 {
			return fmt.Errorf("%w: %d bytes after a note", errDamaged, len(r.b))
		}
		return r.err
	}
	t, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("time")
	} else {
		r.b = r.b[n:]
	}
	h.time = t
	h.kind = Kind(r.byte("kind"))
	h.flags = r.byte("flags")
	h.agent = r.bytes("agent")
	h.request = r.bytes("request id")
	h.reverts = r.uvarint("reverted change")
	nf := r.count("file count", 5)
	for i := 0; i < nf && r.err == nil; i++ {
		f := headFile{path: r.bytes("path"), from: r.bytes("from path"), before: r.version("version before"), after: r.version("version after")}
		nh := r.count("hunk count", 3)
		a, delta := 0, 0
		for j := 0; j < nh && r.err == nil; j++ {
			gap, rem, add := r.uvarint("hunk"), r.uvarint("hunk"), r.uvarint("hunk")
			if gap > math.MaxInt32 || rem > math.MaxInt32 || add > math.MaxInt32 || a+int(gap)+int(rem) > math.MaxInt32 || rem == 0 && add == 0 {
				r.fail("hunk")
				break
			}
			var x versions.Hunk
			x.A0 = a + int(gap)
			x.A1 = x.A0 + int(rem)
			x.B0 = x.A0 + delta
			x.B1 = x.B0 + int(add)
			if x.B0 < 0 || x.B1 < 0 || x.B1 > math.MaxInt32 {
				r.fail("hunk")
				break
			}
			h.hunks = append(h.hunks, x)
			a, delta = x.A1, delta+int(add)-int(rem)
		}
		f.hunks = nh
		h.files = append(h.files, f)
	}
	if h.flags&flagResolves != 0 {
		r.outcomes(h, h.seq)
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the head", errDamaged, len(r.b))
	}
	switch {
	case h.flags&^flagsAll != 0 || h.flags&flagHunksMerged != 0 && h.flags&flagLinesOmitted == 0:
		return fmt.Errorf("%w: flags %#x", errDamaged, h.flags)
	case h.kind == 0 || h.kind >= kindEnd:
		return fmt.Errorf("%w: unknown kind %d", errDamaged, h.kind)
	case len(h.agent) == 0 || len(h.agent) > maxAgentBytes || len(h.request) > maxRequestBytes:
		return fmt.Errorf("%w: an agent of %d bytes, a request id of %d", errDamaged, len(h.agent), len(h.request))
	case (h.kind == KindRevert) != (h.reverts != 0) || h.reverts >= h.seq:
		return fmt.Errorf("%w: a %s reverting change %d", errDamaged, h.kind, h.reverts)
	case len(h.files) == 0:
		return fmt.Errorf("%w: a change of no file", errDamaged)
	}
	for i, f := range h.files {
		if !validPathBytes(f.path) || len(f.from) > 0 && (!validPathBytes(f.from) || bytes.Equal(f.from, f.path)) {
			return fmt.Errorf("%w: file %d: a bad path", errDamaged, i)
		}
	}
	if dupPath(h.files) {
		return fmt.Errorf("%w: a path twice in one change", errDamaged)
	}
	return nil
}

// outcomes reads a list of outcomes of changes before seq into h.
func (r *reader) outcomes(h *head, before uint64) {
	n := r.count("outcome count", 2)
	if r.err == nil && n == 0 {
		r.fail("outcome count")
	}
	for range n {
		seq, out := r.uvarint("outcome"), r.byte("outcome")
		if r.err != nil || seq == 0 || seq >= before || out != outApplied && out != outAborted {
			r.fail("outcome")
			return
		}
		h.outs = append(h.outs, outcome{seq: seq, applied: out == outApplied})
	}
}

// dupPath reports whether two files have one path.
func dupPath(fs []headFile) bool {
	if len(fs) <= 16 {
		for i := range fs {
			for j := i + 1; j < len(fs); j++ {
				if bytes.Equal(fs[i].path, fs[j].path) {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]bool, len(fs))
	for _, f := range fs {
		if seen[string(f.path)] {
			return true
		}
		seen[string(f.path)] = true
	}
	return false
}

// validPathBytes is validPath of a path in a record's bytes: a clean,
// relative, slash-separated path below the root, every element neither
// empty nor "." nor "..".
func validPathBytes(p []byte) bool {
	if len(p) == 0 || len(p) > maxPathBytes || bytes.IndexByte(p, 0) >= 0 {
		return false
	}
	for len(p) > 0 {
		el := p
		if i := bytes.IndexByte(p, '/'); i >= 0 {
			el, p = p[:i], p[i+1:]
			if len(p) == 0 {
				return false // a trailing slash
			}
		} else {
			p = nil
		}
		if len(el) == 0 || len(el) <= 2 && (string(el) == "." || string(el) == "..") {
			return false
		}
	}
	return true
}

// decodeHead decodes a head into a change without lines, checking all
// that Append checks of what a head holds.
func decodeHead(b []byte) (Change, error) {
	var h head
	if err := scanHead(b, &h); err != nil {
		return Change{}, err
	}
	if h.seq == 0 {
		return Change{}, fmt.Errorf("%w: a note where a change was", errDamaged)
	}
	c := Change{ID: ID{seq: h.seq}, Time: time.Unix(0, h.time).UTC(), Kind: h.kind,
		Agent: string(h.agent), RequestID: string(h.request), Reverts: ID{seq: h.reverts},
		LinesOmitted: h.flags&flagLinesOmitted != 0, HunksMerged: h.flags&flagHunksMerged != 0,
		Files: make([]File, len(h.files))}
	k := 0
	for i, hf := range h.files {
		f := &c.Files[i]
		f.Path, f.From, f.Before, f.After = string(hf.path), string(hf.from), hf.before.String(), hf.after.String()
		if hf.hunks > 0 {
			f.Hunks = make([]Hunk, hf.hunks)
			for j := range f.Hunks {
				f.Hunks[j].Hunk = h.hunks[k]
				k++
			}
		}
		f.Removed, f.Added = counts(f.Hunks)
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
