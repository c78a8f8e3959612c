package history

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashline/hashline/internal/versions"
)

// Defaults of Options.
const (
	// DefaultMaxBytes holds about a million small changes (a one-line
	// edit's record is about 250 bytes): a month of a busy workspace, and
	// an index of some 40 MiB in memory at the bound. It is the size of
	// the snapshot cache's default budget, the other per-root state kept
	// in memory.
	DefaultMaxBytes = 256 << 20
	// DefaultMaxAge keeps what a month of work did, long enough to ask who
	// wrote a line in any change still under review.
	DefaultMaxAge = 30 * 24 * time.Hour
	// maxSegmentBytes bounds the default segment size: the bounds drop
	// whole segments, so a segment is at most a sixteenth of MaxBytes, and
	// at most this, so that dropping one is no large step.
	maxSegmentBytes = 16 << 20
	// minSegmentBytes is the least segment size (and so MaxBytes): a
	// segment holds at least a few small changes.
	minSegmentBytes = 4 << 10
)

// Options configure a Log. The zero value is the defaults.
type Options struct {
	// MaxBytes bounds the log's files (DefaultMaxBytes when 0): once past
	// it, the oldest segments are removed.
	MaxBytes int64
	// MaxAge bounds the age of the changes kept (DefaultMaxAge when 0): a
	// change older is no longer shown and its segment is removed once the
	// whole segment is that old.
	MaxAge time.Duration
	// SegmentBytes is the size at which a segment is closed and a new one
	// started (when 0, MaxBytes/16, at most 16 MiB). It is also the
	// largest record: a change too large with its lines is kept without
	// them ([Change.LinesOmitted]).
	SegmentBytes int64
	// Fsync makes every Append return only once its record is on disk (on
	// wherever the workspace's own writes are synced).
	Fsync bool
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxAge == 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = max(min(o.MaxBytes/16, maxSegmentBytes), minSegmentBytes)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	switch {
	case o.MaxAge < 0:
		return o, fmt.Errorf("history: MaxAge %v: want more than 0", o.MaxAge)
	case o.SegmentBytes < minSegmentBytes || o.SegmentBytes > 1<<30:
		return o, fmt.Errorf("history: SegmentBytes %d: want %d to %d", o.SegmentBytes, minSegmentBytes, 1<<30)
	case o.MaxBytes < o.SegmentBytes:
		return o, fmt.Errorf("history: MaxBytes %d: want at least a segment (%d bytes)", o.MaxBytes, o.SegmentBytes)
	}
	return o, nil
}

// Stats describes a Log.
type Stats struct {
	// Changes counts the changes held (on disk, aged or not).
	Changes int
	// Bytes is the size of the segment files; Segments their number.
	Bytes    int64
	Segments int
	// First and Next are the sequence numbers of the oldest change held
	// and of the next one.
	First, Next uint64
	// TornBytes counts the bytes cut off the newest segment at Open: a
	// record a crash tore. Damaged counts records found damaged in the
	// older segments, which are left as they are and skipped with the rest
	// of their segment.
	TornBytes int64
	Damaged   int
	// Paths counts the paths the index holds.
	Paths int
	// Pending counts the changes prepared and not yet resolved (Prepare,
	// Resolve); after Open, those a crash left for recovery to resolve
	// (Unresolved).
	Pending int
}

// Log is the change history of one workspace, kept in one directory. It is
// safe for concurrent use. One Log at a time may have the directory open:
// the engine's lock on the state directory sees to it.
type Log struct {
	dir  string
	opts Options
	log  uint32 // the log's number, in every id

	mu      sync.RWMutex
	closed  bool
	segs    []*segment // oldest first; the last is written to
	base    uint64     // the sequence number of entries[0]
	entries []entry
	next    uint64
	// paths holds per path the changes that touched it (as Path or From),
	// oldest first; moves the moves of the changes that moved files.
	paths map[string][]uint64
	moves map[uint64][]move
	// gaps are the changes lost to damage, as ranges [from, to).
	gaps    [][2]uint64
	agents  []string
	agentOf map[string]uint32
	bytes   int64
	last    int64 // the newest change's time
	buf     []byte
	// outs are the outcomes of pending changes not yet in any record: the
	// next record appended carries them, or a note when the log writes
	// its records before one comes.
	outs []outcome
	// wbuf holds the records appended to the newest segment past its
	// written bytes (see flushDelay).
	wbuf       []byte
	flushTimer *time.Timer
	flushAfter time.Duration // flushDelay; a test holds a write back with it
	flushArmed bool
	stats      Stats
}

// move is a file a change moved.
type move struct{ from, to string }

// entry is a change in the index.
type entry struct {
	time int64  // Unix nanoseconds
	off  uint32 // the record's offset in its segment
	head uint32 // its head's length; 0 for a change lost to damage
	body uint32
	// agentState is the agent's index, and in its top bits the change's
	// state (stateShown, statePending, stateAborted).
	agentState uint32
}

// The states of a change in the index. A change appended is shown; one
// prepared is pending until resolved: shown if it was made, aborted (never
// shown, its id unknown) if it was not. A sequence number a recovered
// change skipped is aborted too.
const (
	stateShown   = 0
	statePending = 1 << 30
	stateAborted = 2 << 30
	stateMask    = 3 << 30
)

func (e entry) agent() uint32 { return e.agentState &^ stateMask }
func (e entry) state() uint32 { return e.agentState & stateMask }

// shown reports whether queries show the change: held, and made.
func (e entry) shown() bool { return e.head != 0 && e.state() == stateShown }

// segment is one file of the log, named by the sequence number of its
// first change. Readers hold a reference while they read it; the log holds
// one until it drops the segment, and the last one out closes and removes
// the file.
type segment struct {
	first uint64
	path  string
	f     *os.File
	// size counts the segment's bytes, written its bytes in the file: the
	// newest segment's last records may still be in Log.wbuf.
	size, written int64
	refs          atomic.Int32
	// keep is false once the log drops the segment: the last reference
	// removes the file.
	keep atomic.Bool
}

func (s *segment) acquire() { s.refs.Add(1) }

func (s *segment) release() error {
	if s.refs.Add(-1) != 0 {
		return nil
	}
	err := s.f.Close()
	if !s.keep.Load() {
		if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
}

const (
	segPrefix = "seg-"
	segSuffix = ".log"
	// segMagic heads a segment; the number is its format. Then the log's
	// number and the segment's first sequence number, and a CRC-32C of
	// the three. Format 2 adds pending changes, outcomes and notes; a
	// segment of format 1 holds none and is read as one of format 2, and
	// a log whose newest segment is of format 1 starts a new one.
	segMagic   = "hashline-history 2\n"
	segMagicV1 = "hashline-history 1\n"
	headerLen  = len(segMagic) + 4 + 8 + 4
)

func segName(first uint64) string { return fmt.Sprintf("%s%016x%s", segPrefix, first, segSuffix) }

func segHeader(log uint32, first uint64) []byte {
	b := append([]byte(segMagic), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[len(segMagic):], log)
	binary.LittleEndian.PutUint64(b[len(segMagic)+4:], first)
	binary.LittleEndian.PutUint32(b[len(segMagic)+12:], crc32.Checksum(b[:len(segMagic)+12], castagnoli()))
	return b
}

func parseSegHeader(b []byte) (log uint32, first uint64, v1 bool, err error) {
	v1 = len(b) >= headerLen && string(b[:len(segMagicV1)]) == segMagicV1
	if len(b) < headerLen || string(b[:len(segMagic)]) != segMagic && !v1 {
		if len(b) >= len(segMagic) && strings.HasPrefix(string(b), "hashline-history ") {
			return 0, 0, false, errors.New("a segment of an unknown format (written by a newer hashline?)")
		}
		return 0, 0, false, errors.New("no segment header")
	}
	if crc32.Checksum(b[:len(segMagic)+12], castagnoli()) != binary.LittleEndian.Uint32(b[len(segMagic)+12:]) {
		return 0, 0, false, errors.New("segment header checksum mismatch")
	}
	return binary.LittleEndian.Uint32(b[len(segMagic):]), binary.LittleEndian.Uint64(b[len(segMagic)+4:]), v1, nil
}

// Open opens the log kept in dir (created, mode 0700, if missing; its
// parent must exist), reading every record's head back to build the
// index. A torn record at the end of the newest segment is cut off;
// changes past the bounds are dropped. It writes nowhere but dir.
func Open(dir string, opts Options) (*Log, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("history: %w", err)
	}
	l := &Log{dir: dir, opts: opts, paths: make(map[string][]uint64), moves: make(map[uint64][]move), agentOf: make(map[string]uint32), flushAfter: flushDelay}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	var firsts []uint64
	var total int64
	for _, de := range des {
		name := de.Name()
		hexFirst, ok := strings.CutPrefix(strings.TrimSuffix(name, segSuffix), segPrefix)
		if !ok || !strings.HasSuffix(name, segSuffix) || len(hexFirst) != 16 || !de.Type().IsRegular() {
			continue
		}
		first, err := strconv.ParseUint(hexFirst, 16, 64)
		if err != nil {
			continue
		}
		firsts = append(firsts, first)
		if fi, err := de.Info(); err == nil {
			total += fi.Size()
		}
	}
	slices.Sort(firsts)
	ld := &loader{paths: make(map[string]int)}
	if len(firsts) > 1 {
		// The segments before the newest hold their changes' numbers
		// exactly; the newest, about a record per hundred bytes. Sized
		// once, the index is not copied as it grows, which at the bound
		// would cost more than reading the records. A count no record
		// size could give is a damaged name, and is not trusted.
		if n := firsts[len(firsts)-1] - firsts[0]; n <= uint64(total/frameLen) {
			l.entries = make([]entry, 0, n+uint64(total/int64(len(firsts)))/100+1024)
		}
	}
	newest1 := false
	for i, first := range firsts {
		v1, err := l.load(ld, first, i == len(firsts)-1)
		if err != nil {
			l.closeFiles()
			return nil, err
		}
		newest1 = v1
	}
	ld.finish(l)
	if len(l.segs) == 0 {
		var b [4]byte
		for binary.LittleEndian.Uint32(b[:]) == 0 {
			_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		}
		l.log = binary.LittleEndian.Uint32(b[:])
		l.base, l.next = 1, 1
		if err := l.newSegment(); err != nil {
			return nil, err
		}
	} else if newest1 {
		// Records of format 2 go to a segment of format 2.
		if err := l.newSegment(); err != nil {
			l.closeFiles()
			return nil, err
		}
	}
	for _, d := range l.trimLocked() {
		_ = d.release()
	}
	return l, nil
}

// loader is what Open keeps while it reads the segments: the index of
// paths as positions in a list, so that finding a path's list takes no
// allocation (a map's key is allocated when it is assigned, not when it
// is looked up), and the head of the record being read.
type loader struct {
	paths map[string]int
	lists []pathList
	head  head
	buf   []byte
}

type pathList struct {
	path string
	seqs []uint64
}

// add records that change seq touched path p.
func (ld *loader) add(p []byte, seq uint64) {
	i, ok := ld.paths[string(p)]
	if !ok {
		i = len(ld.lists)
		ld.lists = append(ld.lists, pathList{path: string(p)})
		ld.paths[ld.lists[i].path] = i
	}
	ld.lists[i].seqs = append(ld.lists[i].seqs, seq)
}

// finish moves the paths' lists into the log's index.
func (ld *loader) finish(l *Log) {
	for _, pl := range ld.lists {
		l.paths[pl.path] = pl.seqs
	}
}

// maxSkip bounds the sequence numbers a record may skip: a change restored
// from the intent log (Restore) takes the number it was given, past
// prepared changes whose records a crash lost. More than this many is
// taken for damage.
const maxSkip = 1 << 20

// load reads the segment first into the index and reports whether it is
// of format 1. The newest segment (last) is cut at its first damaged
// record, and one with a torn header, which a crash left while creating
// it, is removed.
func (l *Log) load(ld *loader, first uint64, last bool) (bool, error) {
	p := filepath.Join(l.dir, segName(first))
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return false, fmt.Errorf("history: %w", err)
	}
	hb := make([]byte, headerLen)
	_, herr := io.ReadFull(f, hb)
	lg, hfirst, v1, err := parseSegHeader(hb)
	if herr != nil || err != nil {
		fi, serr := f.Stat()
		if last && serr == nil && fi.Size() < int64(headerLen) {
			f.Close()
			l.stats.TornBytes += fi.Size()
			if err := os.Remove(p); err != nil {
				return false, fmt.Errorf("history: %w", err)
			}
			return false, nil
		}
		f.Close()
		if err == nil {
			err = herr
		}
		return false, fmt.Errorf("history: segment %s: %v; move it away to start the history afresh", p, err)
	}
	switch {
	case hfirst != first:
		f.Close()
		return false, fmt.Errorf("history: segment %s holds changes from %d, not as named", p, hfirst)
	case len(l.segs) > 0 && lg != l.log:
		f.Close()
		return false, fmt.Errorf("history: segment %s belongs to another log than the ones before it", p)
	case first < l.next:
		f.Close()
		return false, fmt.Errorf("history: segment %s starts at change %d, within the segment before it", p, first)
	}
	if len(l.segs) == 0 {
		l.log, l.base, l.next = lg, first, first
	}
	// Changes lost between segments (damage in the one before) keep their
	// places, empty.
	if l.next < first {
		l.gaps = append(l.gaps, [2]uint64{l.next, first})
	}
	for l.next < first {
		l.entries = append(l.entries, entry{time: l.last})
		l.next++
	}
	s := &segment{first: first, path: p, f: f, size: int64(headerLen)}
	s.refs.Store(1)
	s.keep.Store(true)
	fsize := mustSize(f)
	br := bufio.NewReaderSize(f, 1<<20)
	var fb [frameLen]byte
	for {
		if _, err := io.ReadFull(br, fb[:]); err != nil {
			if err != io.EOF {
				// A torn frame.
				if last {
					l.stats.TornBytes += fsize - s.size
				} else {
					l.stats.Damaged++
				}
			}
			break
		}
		fr, ok := ld.read(br, fb[:], s.size, fsize)
		h := &ld.head
		switch {
		case !ok:
		case v1 && (h.seq != l.next || h.flags&(flagPending|flagResolves) != 0):
			ok = false // format 1 has neither notes nor skips nor outcomes
		case h.seq != 0 && (h.seq < l.next || h.seq-l.next > maxSkip):
			ok = false
		}
		if !ok {
			if last {
				l.stats.TornBytes += fsize - s.size
			} else {
				l.stats.Damaged++
			}
			break
		}
		l.indexHead(ld, s.size, fr)
		s.size += frameLen + int64(fr.body)
	}
	if !last {
		s.size = fsize // damaged records past s.size stay until the segment goes
	}
	if last {
		if fsize > s.size {
			if err := f.Truncate(s.size); err != nil {
				f.Close()
				return false, fmt.Errorf("history: cutting the torn end of %s: %w", p, err)
			}
			if l.opts.Fsync {
				_ = f.Sync()
			}
		}
	}
	s.written = s.size
	l.segs = append(l.segs, s)
	l.bytes += s.size
	return v1, nil
}

func mustSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}

// read reads the record whose frame is fb from br into ld.head, checking
// it whole; off is its offset and size the file's.
func (ld *loader) read(br *bufio.Reader, fb []byte, off, size int64) (frame, bool) {
	fr, err := parseFrame(fb)
	if err != nil || off+frameLen+int64(fr.body) > size {
		return frame{}, false
	}
	ld.buf = slices.Grow(ld.buf[:0], frameLen+int(fr.head))[:frameLen+int(fr.head)]
	copy(ld.buf, fb)
	if _, err := io.ReadFull(br, ld.buf[frameLen:]); err != nil || fr.checkHead(ld.buf) != nil {
		return frame{}, false
	}
	// The tail is checked where it lies in the reader's buffer.
	sum := uint32(0)
	for n := int(fr.body - fr.head); n > 0; {
		b, err := br.Peek(min(n, br.Size()))
		if len(b) == 0 {
			return frame{}, false
		}
		sum = crc32.Update(sum, castagnoli(), b)
		_, _ = br.Discard(len(b))
		n -= len(b)
		if err != nil && n > 0 {
			return frame{}, false
		}
	}
	if sum != fr.tailSum || scanHead(ld.buf[frameLen:], &ld.head) != nil {
		return frame{}, false
	}
	if ld.head.seq == 0 && fr.body != fr.head {
		return frame{}, false // a note has no tail
	}
	return fr, true
}

// indexHead adds the record ld.head, at off, to the index: a change, or
// the outcomes a record carries.
func (l *Log) indexHead(ld *loader, off int64, fr frame) {
	h := &ld.head
	for _, o := range h.outs {
		l.resolved(o)
	}
	if h.seq == 0 {
		return // a note
	}
	// Sequence numbers a restored change skipped were never changes.
	for l.next < h.seq {
		l.entries = append(l.entries, entry{time: l.last, agentState: stateAborted})
		l.next++
	}
	a, ok := l.agentOf[string(h.agent)]
	if !ok {
		a = uint32(len(l.agents))
		l.agents = append(l.agents, string(h.agent))
		l.agentOf[l.agents[a]] = a
	}
	if h.flags&flagPending != 0 {
		a |= statePending
	}
	t := max(h.time, l.last)
	l.last = t
	l.entries = append(l.entries, entry{time: t, off: uint32(off), head: fr.head, body: fr.body, agentState: a})
	seq := h.seq
	var moves []move
	for _, f := range h.files {
		ld.add(f.path, seq)
		if len(f.from) > 0 {
			ld.add(f.from, seq)
			moves = append(moves, move{from: string(f.from), to: string(f.path)})
		}
	}
	if moves != nil {
		l.moves[seq] = moves
	}
	l.next = seq + 1
}

// resolved sets the state of the pending change o names, if the index
// holds it.
func (l *Log) resolved(o outcome) {
	if o.seq < l.base || o.seq >= l.next {
		return
	}
	e := &l.entries[o.seq-l.base]
	if e.state() != statePending {
		return
	}
	st := uint32(stateShown)
	if !o.applied {
		st = stateAborted
	}
	e.agentState = e.agent() | st
}

// index adds change c, whose record is at off, to the index; pending says
// it was prepared, not appended.
func (l *Log) index(c *Change, off int64, fr frame, pending bool) {
	a, ok := l.agentOf[c.Agent]
	if !ok {
		a = uint32(len(l.agents))
		l.agents = append(l.agents, c.Agent)
		l.agentOf[c.Agent] = a
	}
	if pending {
		a |= statePending
	}
	t := max(c.Time.UnixNano(), l.last)
	l.last = t
	l.entries = append(l.entries, entry{time: t, off: uint32(off), head: fr.head, body: fr.body, agentState: a})
	seq := c.ID.seq
	var moves []move
	for _, f := range c.Files {
		l.paths[f.Path] = append(l.paths[f.Path], seq)
		if f.From != "" {
			l.paths[f.From] = append(l.paths[f.From], seq)
			moves = append(moves, move{from: f.From, to: f.Path})
		}
	}
	if moves != nil {
		l.moves[seq] = moves
	}
	l.next = seq + 1
}

// newSegment starts a segment for the changes from l.next on.
func (l *Log) newSegment() error {
	// Its header counts against MaxBytes before it is written, as a
	// record does in flushLocked: the oldest segments go first.
	l.bytes += int64(headerLen)
	for _, d := range l.trimOverLocked() {
		_ = d.release()
	}
	l.bytes -= int64(headerLen)
	p := filepath.Join(l.dir, segName(l.next))
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	_, err = f.Write(segHeader(l.log, l.next))
	if err == nil && l.opts.Fsync {
		err = f.Sync()
		if err == nil {
			err = syncDir(l.dir)
		}
	}
	if err != nil {
		f.Close()
		_ = os.Remove(p)
		return fmt.Errorf("history: %w", err)
	}
	s := &segment{first: l.next, path: p, f: f, size: int64(headerLen), written: int64(headerLen)}
	s.refs.Store(1)
	s.keep.Store(true)
	l.segs = append(l.segs, s)
	l.bytes += int64(headerLen)
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// ErrClosed is returned by calls on a closed Log.
var ErrClosed = errors.New("history: the log is closed")

// ErrTooLarge is returned by Append for a change whose record would not
// fit a segment even without its lines and with its hunks merged: one of
// very many files.
var ErrTooLarge = errors.New("history: the change is too large for a segment")

// Append records c, giving it the next id and the time now, and returns
// it as recorded, also with the error of a write of its record that
// failed (the record is written again with the next). The log fills in
// each file's line counts. A change too
// large for a segment with its lines is recorded without them, and if
// need be with each file's hunks merged into one (see Change).
func (l *Log) Append(c Change) (Change, error) {
	return l.add(c, false, true, false)
}

// Prepare records c as Append does, as a change about to be made: it is
// pending, not shown, until Resolve says whether it was made. With write,
// its record is written to the file (not synced, unless Options.Fsync)
// before Prepare returns, so that it survives the process, if not the
// system; without, it waits in memory as an appended record does.
//
// A change is prepared before the step that makes it (its commit point),
// so that a change made is in the log however the process ends: a crash
// between the two leaves a pending change that was not made, which
// recovery resolves from the disk (Unresolved). Prepare arms the timer
// that writes the outcome Resolve will give (see Resolve), so that
// Resolve, called on the way to the caller's reply, need not.
func (l *Log) Prepare(c Change, write bool) (Change, error) {
	return l.add(c, true, write, false)
}

// add appends c: pending, or (appended) shown at once; with write its
// record goes to the file before add returns. With at, c keeps its id and
// time (Restore).
func (l *Log) add(c Change, pending, write, at bool) (Change, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Change{}, ErrClosed
	}
	c.Files = slices.Clone(c.Files) // check sets the line counts
	at = at && c.ID.seq >= l.next
	next := l.next
	if at {
		next = c.ID.seq
	}
	if err := c.check(l.log, next); err != nil {
		l.mu.Unlock()
		return Change{}, err
	}
	seq := next
	t := max(l.opts.Now().UnixNano(), l.last)
	if at {
		t = max(c.Time.UnixNano(), l.last)
	}
	c.ID, c.Time = ID{seq: seq, log: l.log}, time.Unix(0, t).UTC()
	c.LinesOmitted, c.HunksMerged = false, false
	outs := l.outs
	buf, head := appendRecordWith(l.buf[:0], &c, seq, t, pending, outs)
	if int64(len(buf)) > l.opts.SegmentBytes-int64(headerLen) {
		c.LinesOmitted = true
		buf, head = appendRecordWith(buf[:0], &c, seq, t, pending, outs)
	}
	if int64(len(buf)) > l.opts.SegmentBytes-int64(headerLen) {
		c.HunksMerged = true
		for i := range c.Files {
			c.Files[i].Hunks = mergeHunks(c.Files[i].Hunks)
			c.Files[i].Removed, c.Files[i].Added = counts(c.Files[i].Hunks)
		}
		buf, head = appendRecordWith(buf[:0], &c, seq, t, pending, outs)
	}
	if int64(len(buf)) > l.opts.SegmentBytes-int64(headerLen) {
		l.buf = buf[:0]
		l.mu.Unlock()
		return Change{}, fmt.Errorf("%w: %d files, %d bytes without lines", ErrTooLarge, len(c.Files), len(buf))
	}
	if c.LinesOmitted {
		for i := range c.Files {
			c.Files[i].Hunks = withoutLines(c.Files[i].Hunks)
		}
	}
	if cap(buf) <= 1<<20 {
		l.buf = buf[:0] // a large change's buffer is not kept
	}
	s := l.segs[len(l.segs)-1]
	if s.size > int64(headerLen) && s.size+int64(len(buf)) > l.opts.SegmentBytes {
		// The outcomes go in the record, in the next segment, not in a
		// note in this one.
		l.outs = nil
		err := l.flushLocked()
		if err == nil {
			err = l.newSegment()
		}
		l.outs = outs
		if err != nil {
			l.mu.Unlock()
			return Change{}, err
		}
		s = l.segs[len(l.segs)-1]
	}
	l.outs = l.outs[:0]
	// Sequence numbers a restored change skips were never changes.
	for l.next < seq {
		l.entries = append(l.entries, entry{time: l.last, agentState: stateAborted})
		l.next++
	}
	off := s.size
	l.wbuf = append(l.wbuf, buf...)
	s.size += int64(len(buf))
	l.bytes += int64(len(buf))
	l.index(&c, off, frame{head: uint32(head), body: uint32(len(buf) - frameLen)}, pending)
	doomed := l.trimLocked()
	var err error
	if write && (l.opts.Fsync || pending) || len(l.wbuf) >= flushBytes {
		err = l.flushLocked()
	} else {
		l.armLocked()
	}
	if pending {
		// Its outcome follows in moments, to be written within flushDelay:
		// the timer is armed now rather than by Resolve, since arming one
		// wakes the runtime's poller, which Resolve, on the path of the
		// caller's reply, should not pay for.
		l.armAlwaysLocked()
	}
	syncing := write && l.opts.Fsync && err == nil
	if syncing {
		s.acquire()
	}
	l.mu.Unlock()
	if syncing {
		// Outside the lock: queries go on meanwhile, and appends that
		// wait behind this one are synced with it.
		err = s.f.Sync()
		_ = s.release()
	}
	for _, d := range doomed {
		_ = d.release()
	}
	if err != nil {
		// Recorded all the same: the caller may still resolve it.
		return c, fmt.Errorf("history: %s is recorded but not on disk yet (tried again at the next write): %w", c.ID, err)
	}
	return c, nil
}

// armLocked makes sure what waits in memory is written within flushDelay.
func (l *Log) armLocked() {
	if len(l.wbuf) == 0 && len(l.outs) == 0 {
		return
	}
	l.armAlwaysLocked()
}

// armAlwaysLocked makes sure the log writes what waits in memory within
// flushDelay from now, whether anything does yet or not.
func (l *Log) armAlwaysLocked() {
	if l.flushArmed {
		return
	}
	l.flushArmed = true
	if l.flushTimer == nil {
		l.flushTimer = time.AfterFunc(l.flushAfter, l.flushLater)
	} else {
		l.flushTimer.Reset(l.flushAfter)
	}
}

// Resolve says whether the pending change id (Prepare) was made: a change
// made is shown from now on; one not made never is, and its id is unknown
// from now on. The outcome is written with the next record appended, or
// within a few milliseconds; until it is, a crash leaves the change to
// recovery. Resolving a change that is not pending does nothing.
func (l *Log) Resolve(id ID, applied bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if id.log != l.log || id.seq < l.base || id.seq >= l.next || l.entries[id.seq-l.base].state() != statePending {
		return nil
	}
	o := outcome{seq: id.seq, applied: applied}
	l.resolved(o)
	l.outs = append(l.outs, o)
	l.armLocked()
	return nil
}

// Unresolved returns the pending changes whose outcome the log does not
// hold: prepared before a crash and not resolved. Each was made if its
// files are as it left them (what it made them), not if they are as it
// found them; the caller looks, and says which with Resolve.
func (l *Log) Unresolved() ([]Change, error) {
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return nil, ErrClosed
	}
	var locs []loc
	for i, e := range l.entries {
		if e.head != 0 && e.state() == statePending {
			locs = append(locs, l.anyLocLocked(l.base+uint64(i)))
		}
	}
	l.mu.RUnlock()
	return l.readMany(locs, false)
}

// Encode returns c, a change the log gave (Prepare), as Restore reads it:
// its log's number and its record.
func Encode(c Change) []byte {
	b := binary.LittleEndian.AppendUint32(nil, c.ID.log)
	b, _ = appendRecord(b, &c, c.ID.seq, c.Time.UnixNano())
	return b
}

// Decode returns the change b holds (Encode), with its id.
func Decode(b []byte) (Change, error) {
	if len(b) < 4 {
		return Change{}, fmt.Errorf("history: an encoded change of %d bytes", len(b))
	}
	lg := binary.LittleEndian.Uint32(b)
	c, n, err := decodeRecord(b[4:])
	if err == nil && n != len(b)-4 {
		err = fmt.Errorf("%w: %d bytes after the record", errDamaged, len(b)-4-n)
	}
	if err == nil && lg == 0 {
		err = fmt.Errorf("%w: log number 0", errDamaged)
	}
	if err != nil {
		return Change{}, fmt.Errorf("history: an encoded change: %w", err)
	}
	c.ID.log = lg
	if !c.Reverts.IsZero() {
		c.Reverts.log = lg
	}
	return c, nil
}

// Restore records the change b holds (Encode), which was made, unless the
// log holds it already: one the log holds pending is resolved as made, and
// one it lost (a crash before its record was written) is appended with
// its id and time, the numbers between the newest change held and it
// skipped. A change whose number the log has given to another, or whose
// log is another (the history was started afresh since), is appended as a
// new change. It returns the change as the log holds it.
func (l *Log) Restore(b []byte) (Change, error) {
	c, err := Decode(b)
	if err != nil {
		return Change{}, err
	}
	lg := c.ID.log
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Change{}, ErrClosed
	}
	fresh, at := lg != l.log, false
	seq := c.ID.seq
	switch {
	case fresh:
	case seq < l.base:
		l.mu.Unlock()
		return c, nil // past the bounds already
	case seq < l.next:
		e := l.entries[seq-l.base]
		switch {
		case e.head != 0 && e.state() == stateShown:
			l.mu.Unlock()
			return c, nil
		case e.head != 0 && e.state() == statePending:
			o := outcome{seq: seq, applied: true}
			l.resolved(o)
			l.outs = append(l.outs, o)
			l.armLocked()
			l.mu.Unlock()
			return c, nil
		}
		fresh = true // its number was lost, or given to a change not made
	case seq-l.next > maxSkip:
		fresh = true
	default:
		at = true
	}
	l.mu.Unlock()
	if fresh && !c.Reverts.IsZero() && c.Reverts.log != l.log {
		// The change it reverted is another log's.
		c.Kind, c.Reverts = KindSet, ID{}
	}
	return l.add(c, false, true, at)
}

// Without Fsync, appended records wait in memory for flushDelay, or
// until flushBytes of them do, and go to the file in one write: a write
// per change would cost several times the rest of an Append. Queries read
// them from memory meanwhile.
const (
	flushDelay = 5 * time.Millisecond
	flushBytes = 64 << 10
)

func (l *Log) flushLater() {
	l.mu.Lock()
	l.flushArmed = false
	var doomed []*segment
	if !l.closed {
		_ = l.flushLocked() // an error leaves the records waiting for the next try
		doomed = l.trimOverLocked()
	}
	l.mu.Unlock()
	for _, d := range doomed {
		_ = d.release()
	}
}

// flushLocked writes the records waiting in memory to the newest segment,
// and a note of the outcomes no record carries yet.
func (l *Log) flushLocked() error {
	s := l.segs[len(l.segs)-1]
	if len(l.outs) > 0 {
		n := len(l.wbuf)
		l.wbuf = appendNote(l.wbuf, l.outs)
		s.size += int64(len(l.wbuf) - n)
		l.bytes += int64(len(l.wbuf) - n)
		l.outs = l.outs[:0]
	}
	if len(l.wbuf) == 0 {
		return nil
	}
	// The oldest segments go before the records and the note are written,
	// not after, so that the files are never past MaxBytes, even for a
	// moment (the newest segment, s, always stays).
	for _, d := range l.trimOverLocked() {
		_ = d.release()
	}
	if _, err := s.f.WriteAt(l.wbuf, s.written); err != nil {
		// Leave no partial record for a reopen to take as torn: it would
		// cut the ones after it.
		_ = s.f.Truncate(s.written)
		return err
	}
	s.written += int64(len(l.wbuf))
	l.wbuf = l.wbuf[:0]
	if cap(l.wbuf) > 4*flushBytes {
		l.wbuf = nil // a large change's records are not kept
	}
	return nil
}

func withoutLines(hs []Hunk) []Hunk {
	out := make([]Hunk, len(hs))
	for i, h := range hs {
		out[i] = Hunk{Hunk: h.Hunk}
	}
	return out
}

// mergeHunks returns hs as one hunk from the first one's start to the last
// one's end, without lines.
func mergeHunks(hs []Hunk) []Hunk {
	if len(hs) == 0 {
		return nil
	}
	a, z := hs[0], hs[len(hs)-1]
	return []Hunk{{Hunk: versions.Hunk{A0: a.A0, A1: z.A1, B0: a.B0, B1: z.B1}}}
}

// trimLocked drops the oldest segments while the log is past MaxBytes or
// they hold only changes past MaxAge, and returns them for the caller to
// release once it has let go of the lock. The newest segment stays.
func (l *Log) trimLocked() []*segment {
	cutoff := l.opts.Now().Add(-l.opts.MaxAge).UnixNano()
	var doomed []*segment
	for len(l.segs) > 1 {
		s, next := l.segs[0], l.segs[1]
		lastSeq := next.first - 1
		aged := lastSeq < l.base || l.entries[lastSeq-l.base].time < cutoff
		if l.bytes <= l.opts.MaxBytes && !aged {
			break
		}
		l.bytes -= s.size
		l.entries = l.entries[next.first-l.base:]
		l.base = next.first
		l.segs = l.segs[1:]
		s.keep.Store(false)
		doomed = append(doomed, s)
	}
	if len(doomed) > 0 {
		for p, seqs := range l.paths {
			i, _ := slices.BinarySearch(seqs, l.base)
			switch {
			case i == len(seqs):
				delete(l.paths, p)
			case i > 0:
				l.paths[p] = slices.Clone(seqs[i:])
			}
		}
		l.gaps = slices.DeleteFunc(l.gaps, func(g [2]uint64) bool { return g[1] <= l.base })
		for seq := range l.moves {
			if seq < l.base {
				delete(l.moves, seq)
			}
		}
	}
	return doomed
}

// trimOverLocked is trimLocked once a note took the log past MaxBytes;
// changes past their age go with the next Append.
func (l *Log) trimOverLocked() []*segment {
	if l.bytes <= l.opts.MaxBytes {
		return nil
	}
	return l.trimLocked()
}

// Sync writes what was appended to disk (for a log without Fsync, at
// shutdown).
func (l *Log) Sync() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	err := l.flushLocked()
	doomed := l.trimOverLocked()
	s := l.segs[len(l.segs)-1]
	s.acquire()
	l.mu.Unlock()
	if err == nil {
		err = s.f.Sync()
	}
	_ = s.release()
	for _, d := range doomed {
		_ = d.release()
	}
	return err
}

// Write writes what was appended and prepared to the file, without a
// sync: it survives the process from then on, if not the system.
func (l *Log) Write() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return l.flushLocked()
}

// Close writes and syncs what was appended and closes the log's files; a
// query in flight finishes first.
func (l *Log) Close() error {
	err := l.Sync()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	if l.flushTimer != nil {
		l.flushTimer.Stop()
	}
	segs := l.segs
	l.mu.Unlock()
	for _, s := range segs {
		if rerr := s.release(); err == nil {
			err = rerr
		}
	}
	return err
}

func (l *Log) closeFiles() {
	for _, s := range l.segs {
		s.f.Close()
	}
}

// Stats returns the log's figures.
func (l *Log) Stats() Stats {
	l.mu.RLock()
	defer l.mu.RUnlock()
	st := l.stats
	st.Bytes, st.Segments, st.First, st.Next, st.Paths = l.bytes, len(l.segs), l.base, l.next, len(l.paths)
	for _, e := range l.entries {
		switch {
		case e.shown():
			st.Changes++
		case e.head != 0 && e.state() == statePending:
			st.Pending++
		}
	}
	return st
}
