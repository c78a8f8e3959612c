package history

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"time"
)

// loc is where a change's record is; its segment is acquired.
type loc struct {
	seq uint64
	e   entry
	seg *segment
	// data is the record when it was still in memory, not yet written.
	data []byte
}

// liveLocked returns the sequence number of the oldest change not past
// MaxAge (times never decrease along the log).
func (l *Log) liveLocked() uint64 {
	cutoff := l.opts.Now().Add(-l.opts.MaxAge).UnixNano()
	i := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].time >= cutoff })
	return l.base + uint64(i)
}

// locLocked returns where change seq is, acquiring its segment; false for
// a change the log does not show (not held, or pending, or not made).
func (l *Log) locLocked(seq uint64) (loc, bool) {
	if seq < l.base || seq >= l.next || !l.entries[seq-l.base].shown() {
		return loc{}, false
	}
	return l.anyLocLocked(seq), true
}

// anyLocLocked returns where change seq, which the log holds, is,
// acquiring its segment, whatever the change's state.
func (l *Log) anyLocLocked(seq uint64) loc {
	e := l.entries[seq-l.base]
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].first > seq }) - 1
	s := l.segs[i]
	s.acquire()
	lc := loc{seq: seq, e: e, seg: s}
	if int64(e.off) >= s.written {
		from := int64(e.off) - s.written
		lc.data = slices.Clone(l.wbuf[from : from+frameLen+int64(e.body)])
	}
	return lc
}

// read reads the change at lc (with its lines when lines) and releases
// its segment.
func (l *Log) read(lc loc, lines bool) (Change, error) {
	defer lc.seg.release()
	n := frameLen + int(lc.e.head)
	if lines {
		n = frameLen + int(lc.e.body)
	}
	var b []byte
	if lc.data != nil {
		b = lc.data[:n]
	} else {
		b = make([]byte, n)
		if _, err := lc.seg.f.ReadAt(b, int64(lc.e.off)); err != nil {
			return Change{}, fmt.Errorf("history: reading change %d: %w", lc.seq, err)
		}
	}
	fr, err := parseFrame(b)
	if err == nil && (fr.head != lc.e.head || fr.body != lc.e.body) {
		err = fmt.Errorf("%w: the frame changed on disk", errDamaged)
	}
	if err == nil {
		err = fr.checkHead(b)
	}
	var c Change
	if err == nil {
		c, err = decodeHead(b[frameLen : frameLen+int(fr.head)])
	}
	if err == nil && c.ID.seq != lc.seq {
		err = fmt.Errorf("%w: change %d where %d was", errDamaged, c.ID.seq, lc.seq)
	}
	if err == nil && lines {
		tail := b[frameLen+int(fr.head):]
		if err = fr.checkTail(tail); err == nil {
			err = decodeTail(&c, tail)
		}
	}
	if err != nil {
		return Change{}, fmt.Errorf("history: change %d in %s: %w", lc.seq, lc.seg.path, err)
	}
	c.ID.log = l.log
	if !c.Reverts.IsZero() {
		c.Reverts.log = l.log
	}
	c.Time = time.Unix(0, lc.e.time).UTC()
	return c, nil
}

// readMany reads the changes at locs, in their order, as read does, and
// releases their segments. Records near each other in one segment are
// read in one system call: a query reads many records of a few regions.
func (l *Log) readMany(locs []loc, lines bool) ([]Change, error) {
	const (
		maxGap  = 64 << 10
		maxSpan = 1 << 20
	)
	size := func(lc loc) int64 {
		if lines {
			return frameLen + int64(lc.e.body)
		}
		return frameLen + int64(lc.e.head)
	}
	order := make([]int, len(locs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		x, y := locs[a], locs[b]
		if x.seg != y.seg {
			return cmp.Compare(x.seg.first, y.seg.first)
		}
		return cmp.Compare(x.e.off, y.e.off)
	})
	var firstErr error
	for i := 0; i < len(order); {
		x := locs[order[i]]
		j := i + 1
		if x.data == nil {
			start, end := int64(x.e.off), int64(x.e.off)+size(x)
			for ; j < len(order); j++ {
				y := locs[order[j]]
				if y.seg != x.seg || y.data != nil || int64(y.e.off)-end > maxGap || int64(y.e.off)+size(y)-start > maxSpan {
					break
				}
				end = max(end, int64(y.e.off)+size(y))
			}
			if j > i+1 {
				buf := make([]byte, end-start)
				if _, err := x.seg.f.ReadAt(buf, start); err != nil {
					buf = nil // each is read on its own, and fails on its own
				}
				for k := i; k < j && buf != nil; k++ {
					y := &locs[order[k]]
					y.data = buf[int64(y.e.off)-start : int64(y.e.off)-start+size(*y)]
				}
			}
		}
		i = j
	}
	out := make([]Change, len(locs))
	for i, lc := range locs {
		if firstErr != nil {
			_ = lc.seg.release()
			continue
		}
		out[i], firstErr = l.read(lc, lines)
	}
	return out, firstErr
}

// Get returns the change named by id with its hunks' lines: ErrMalformed
// for a string that is no id, ErrUnknown for an id this log never gave,
// ErrExpired for one it has dropped.
func (l *Log) Get(id string) (Change, error) {
	x, err := ParseID(id)
	if err != nil {
		return Change{}, err
	}
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return Change{}, ErrClosed
	}
	var lc loc
	var ok bool
	switch {
	case x.log != l.log || x.seq >= l.next:
		err = fmt.Errorf("%w: %s is not a change of this history", ErrUnknown, id)
	case x.seq < l.liveLocked():
		err = fmt.Errorf("%w: %s is older than the history kept", ErrExpired, id)
	case l.entries[x.seq-l.base].state() != stateShown:
		// Prepared and not made, or not made yet.
		err = fmt.Errorf("%w: %s is not a change of this history", ErrUnknown, id)
	default:
		if lc, ok = l.locLocked(x.seq); !ok {
			err = fmt.Errorf("%w: %s was lost to a damaged history file", ErrExpired, id)
		}
	}
	l.mu.RUnlock()
	if err != nil {
		return Change{}, err
	}
	return l.read(lc, true)
}

// Query selects changes for History.
type Query struct {
	// Path names a file: the changes to the file now there, back through
	// the moves that brought it there. Dir names a directory: the changes
	// to any path under it. With neither, the whole workspace. Both are
	// slash-separated and relative to the root, as File.Path.
	Path, Dir string
	// Agent, when set, selects that agent's changes only.
	Agent string
	// Since and Until, when set, select changes made at or after Since
	// and before Until.
	Since, Until time.Time
	// Limit is the most changes a page holds (DefaultLimit when 0, at most
	// MaxLimit).
	Limit int
	// PageToken continues from a page's NextPageToken; the query must be
	// the same.
	PageToken string
	// Hunks asks for the changes' hunks with their lines.
	Hunks bool
}

// Page limits.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Page is a page of History, newest change first.
type Page struct {
	Changes []Change
	// NextPageToken continues the query; "" on its last page.
	NextPageToken string
}

// ErrBadPageToken is returned by History for a page token that is not one
// of this log's for this query.
var ErrBadPageToken = errors.New("history: the page token is not one this query returned")

// History returns a page of the changes q selects, newest first. Each has
// its files, paths, versions and line counts; its hunks with q.Hunks.
// Changes past MaxAge are not returned.
func (l *Log) History(q Query) (Page, error) {
	switch {
	case q.Path != "" && q.Dir != "":
		return Page{}, errors.New("history: a query names a file or a directory, not both")
	case q.Path != "" && !validPath(q.Path), q.Dir != "" && !validPath(q.Dir):
		return Page{}, fmt.Errorf("history: %q: want a clean relative path inside the workspace", q.Path+q.Dir)
	case q.Limit < 0:
		return Page{}, fmt.Errorf("history: limit %d", q.Limit)
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return Page{}, ErrClosed
	}
	w := walk{q: q, limit: limit, bound: l.next, cur: q.Path, live: l.liveLocked()}
	if q.PageToken != "" {
		if !w.parseToken(l.log, q.PageToken) {
			l.mu.RUnlock()
			return Page{}, ErrBadPageToken
		}
	}
	if q.Agent != "" {
		a, ok := l.agentOf[q.Agent]
		if !ok {
			l.mu.RUnlock()
			return Page{}, nil // no change of the agent's was ever logged
		}
		w.agent = int64(a)
	} else {
		w.agent = -1
	}
	switch {
	case q.Path != "":
		l.walkFileLocked(&w)
	case q.Dir != "":
		l.walkDirLocked(&w)
	default:
		l.walkAllLocked(&w)
	}
	l.mu.RUnlock()
	var p Page
	if len(w.found) > limit {
		_ = w.found[limit].seg.release()
	}
	var err error
	p.Changes, err = l.readMany(w.found[:min(limit, len(w.found))], q.Hunks)
	if err != nil {
		return Page{}, err
	}
	if !q.Hunks {
		for _, c := range p.Changes {
			for j := range c.Files {
				c.Files[j].Hunks = nil
			}
		}
	}
	if len(w.found) > limit {
		p.NextPageToken = w.token(l.log)
	}
	return p, nil
}

// walk is a History query under way: it collects up to limit+1 changes,
// and where it stood after the limit-th.
type walk struct {
	q     Query
	limit int
	agent int64 // the agent's index, -1 for any
	live  uint64
	// bound is the sequence number the walk continues below; cur the path
	// a file's walk has reached.
	bound uint64
	cur   string
	found []loc
	// the walk's state after the limit-th change, for the token
	tokBound uint64
	tokCur   string
}

// take looks at change seq; it reports false once the walk is done.
func (l *Log) takeLocked(w *walk, seq uint64) bool {
	if seq < w.live {
		return false
	}
	e := l.entries[seq-l.base]
	if !w.q.Since.IsZero() && e.time < w.q.Since.UnixNano() {
		return false
	}
	if !e.shown() || w.agent >= 0 && int64(e.agent()) != w.agent || !w.q.Until.IsZero() && e.time >= w.q.Until.UnixNano() {
		return true
	}
	lc, _ := l.locLocked(seq)
	w.found = append(w.found, lc)
	return len(w.found) <= w.limit
}

func (w *walk) mark() {
	if len(w.found) == w.limit && w.tokBound == 0 {
		w.tokBound, w.tokCur = w.bound, w.cur
	}
}

func (l *Log) walkAllLocked(w *walk) {
	for seq := w.bound; seq > l.base; {
		seq--
		ok := l.takeLocked(w, seq)
		w.bound = seq
		w.mark()
		if !ok {
			return
		}
	}
}

// walkFileLocked walks the changes of the file at w.cur, moving to the
// path it came from at the move that brought it.
func (l *Log) walkFileLocked(w *walk) {
	for {
		list := l.paths[w.cur]
		i, _ := slices.BinarySearch(list, w.bound)
		from := ""
		for i--; i >= 0 && from == ""; i-- {
			seq := list[i]
			ok := l.takeLocked(w, seq)
			w.bound = seq
			from = l.movedFromLocked(seq, w.cur)
			if from != "" {
				w.cur = from
			}
			w.mark()
			if !ok {
				return
			}
		}
		if from == "" {
			return
		}
	}
}

// movedFromLocked returns the path change seq moved the file at path
// from, "" if it did not move it there.
func (l *Log) movedFromLocked(seq uint64, path string) string {
	if !l.entries[seq-l.base].shown() {
		return ""
	}
	for _, m := range l.moves[seq] {
		if m.to == path {
			return m.from
		}
	}
	return ""
}

// walkDirLocked merges the lists of the paths under w.q.Dir, newest first.
func (l *Log) walkDirLocked(w *walk) {
	prefix := w.q.Dir + "/"
	var cur []cursor
	for p, list := range l.paths {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		i, _ := slices.BinarySearch(list, w.bound)
		if i > 0 {
			cur = append(cur, cursor{list, i - 1})
		}
	}
	h := cursorHeap(cur)
	h.init()
	var last uint64
	for len(h) > 0 {
		seq := h[0].seq()
		if h[0].i--; h[0].i < 0 {
			h.pop()
		} else {
			h.down(0)
		}
		if seq == last {
			continue // a change of two paths under the directory
		}
		last = seq
		ok := l.takeLocked(w, seq)
		w.bound = seq
		w.mark()
		if !ok {
			return
		}
	}
}

type cursor struct {
	list []uint64
	i    int
}

func (c cursor) seq() uint64 { return c.list[c.i] }

// cursorHeap is a max-heap of cursors by their sequence number.
type cursorHeap []cursor

func (h cursorHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h cursorHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].seq() > h[c].seq() {
			c++
		}
		if h[i].seq() >= h[c].seq() {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

func (h *cursorHeap) pop() {
	n := len(*h) - 1
	(*h)[0] = (*h)[n]
	*h = (*h)[:n]
	h.down(0)
}

// A page token is, in URL-safe base64: a format byte, the log's number
// and a hash of the query's selection (4 bytes each), the bound as a
// varint, and the path a file's walk had reached.
const tokenFormat = 1

func (w *walk) queryHash() uint32 {
	h := fnv.New32a()
	for _, s := range []string{w.q.Path, w.q.Dir, w.q.Agent} {
		_ = binary.Write(h, binary.LittleEndian, uint32(len(s)))
		h.Write([]byte(s))
	}
	for _, t := range []time.Time{w.q.Since, w.q.Until} {
		var n int64
		if !t.IsZero() {
			n = t.UnixNano()
		}
		_ = binary.Write(h, binary.LittleEndian, n)
	}
	return h.Sum32()
}

func (w *walk) token(log uint32) string {
	b := []byte{tokenFormat}
	b = binary.LittleEndian.AppendUint32(b, log)
	b = binary.LittleEndian.AppendUint32(b, w.queryHash())
	b = binary.AppendUvarint(b, w.tokBound)
	b = append(b, w.tokCur...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (w *walk) parseToken(log uint32, tok string) bool {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 10 || b[0] != tokenFormat ||
		binary.LittleEndian.Uint32(b[1:]) != log || binary.LittleEndian.Uint32(b[5:]) != w.queryHash() {
		return false
	}
	bound, n := binary.Uvarint(b[9:])
	if n <= 0 || bound == 0 || bound > w.bound {
		return false
	}
	cur := string(b[9+n:])
	if w.q.Path != "" && !validPath(cur) || w.q.Path == "" && cur != "" {
		return false
	}
	w.bound, w.cur = bound, cur
	return true
}

// BlameSpan is a run of lines of a file, as it is now, that one change
// last wrote.
type BlameSpan struct {
	// Start and End are the first and last line (1-based).
	Start, End int
	// ID, Agent and Time are the change's. A zero ID says the lines are
	// older than the history: written before its oldest change kept, or
	// by changes it never saw.
	ID    ID
	Agent string
	Time  time.Time
}

// Horizon returns the sequence number of the oldest change the log still
// shows: 1 while it has let nothing go, more once changes were dropped
// past its bounds in bytes or age, so that older changes of any path may
// have existed. (Changes lost to a damaged file are counted by Stats.)
func (l *Log) Horizon() uint64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.liveLocked()
}

// Blame returns, for each line of the file now at path, which has lines
// lines, the change that last wrote it, as runs of lines in order. It
// walks the file's changes back from the newest, following each hunk
// (no version is diffed), through the moves that brought the file to
// path, and stops at the change that created the file, or at one that
// changed it without hunks (the lines it wrote are not known).
func (l *Log) Blame(path string, lines int) ([]BlameSpan, error) {
	if !validPath(path) {
		return nil, fmt.Errorf("history: %q: want a clean relative path inside the workspace", path)
	}
	if lines < 0 {
		return nil, fmt.Errorf("history: %d lines", lines)
	}
	owner := make([]int32, lines) // index+1 into who; 0 for none yet
	var who []Change
	spans := []span{{0, lines, 0}}
	if lines == 0 {
		spans = nil
	}
	var next []span
	cur := path
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return nil, ErrClosed
	}
	bound, live := l.next, l.liveLocked()
	l.mu.RUnlock()
	const batch = 256
walk:
	for len(spans) > 0 {
		l.mu.RLock()
		if l.closed {
			l.mu.RUnlock()
			return nil, ErrClosed
		}
		list := l.paths[cur]
		i, _ := slices.BinarySearch(list, bound)
		// A change lost to damage may have written the file: attribution
		// stops above it.
		floor := live
		for _, g := range l.gaps {
			if g[1] <= bound {
				floor = max(floor, g[1])
			}
		}
		var locs []loc
		for i--; i >= 0 && len(locs) < batch && list[i] >= floor; i-- {
			if lc, ok := l.locLocked(list[i]); ok {
				locs = append(locs, lc)
			}
		}
		l.mu.RUnlock()
		if len(locs) == 0 {
			break
		}
		changes, err := l.readMany(locs, false)
		if err != nil {
			return nil, err
		}
		for k, lc := range locs {
			c := changes[k]
			bound = lc.seq
			var f *File
			for j := range c.Files {
				if c.Files[j].Path == cur || c.Files[j].From == cur {
					f = &c.Files[j]
					break
				}
			}
			if f == nil || f.Path != cur || f.After == "" {
				// The file now at path was moved away or deleted: it was
				// created after, by a change the history did not see.
				break walk
			}
			if len(f.Hunks) == 0 && f.From == "" && f.Before != "" && f.Before != f.After {
				// The file changed without hunks (a change made outside
				// the server whose earlier content was not held): which
				// lines it wrote is not known, so the lines left are
				// not attributed to it or to anything before it.
				break walk
			}
			if len(f.Hunks) > 0 {
				who = append(who, Change{ID: c.ID, Agent: c.Agent, Time: c.Time})
				mark := int32(len(who))
				next = back(spans, f.Hunks, func(from, to int) {
					for x := from; x < to; x++ {
						owner[x] = mark
					}
				}, next[:0])
				spans, next = next, spans
			}
			if f.From != "" || f.Before == "" {
				if f.From == "" || len(spans) == 0 {
					break walk // created here
				}
				cur = f.From
				continue walk
			}
			if len(spans) == 0 {
				break walk
			}
		}
	}
	var out []BlameSpan
	for x := 0; x < lines; {
		y := x + 1
		for y < lines && owner[y] == owner[x] {
			y++
		}
		s := BlameSpan{Start: x + 1, End: y}
		if o := owner[x]; o > 0 {
			s.ID, s.Agent, s.Time = who[o-1].ID, who[o-1].Agent, who[o-1].Time
		}
		out = append(out, s)
		x = y
	}
	return out, nil
}

// span is a run of lines of the file now not yet attributed: lines lo..hi
// (0-based, half-open) of the version the walk has reached, which are the
// current file's lines from cur on.
type span struct{ lo, hi, cur int }

// back carries spans across a change's hunks, from the version after the
// change to the one before: lines a hunk added are the change's (mark,
// in current line numbers), the others move by the lines the hunks before
// them added and removed. It appends the spans left to out.
func back(spans []span, hs []Hunk, mark func(from, to int), out []span) []span {
	if len(hs) == 0 {
		return append(out, spans...)
	}
	// Spans wholly before the first hunk keep their numbers.
	i := sort.Search(len(spans), func(i int) bool { return spans[i].hi > hs[0].B0 })
	out = append(out, spans[:i]...)
	h, delta := 0, 0
	for si, s := range spans[i:] {
		if h == len(hs) {
			// Past every hunk: the rest move by all they added and removed.
			for _, s := range spans[i+si:] {
				out = appendSpan(out, span{s.lo - delta, s.hi - delta, s.cur})
			}
			break
		}
		for lo := s.lo; lo < s.hi; {
			for h < len(hs) && hs[h].B1 <= lo {
				delta += (hs[h].B1 - hs[h].B0) - (hs[h].A1 - hs[h].A0)
				h++
			}
			if h < len(hs) && hs[h].B0 <= lo {
				end := min(s.hi, hs[h].B1)
				mark(s.cur+lo-s.lo, s.cur+end-s.lo)
				lo = end
				continue
			}
			end := s.hi
			if h < len(hs) {
				end = min(end, hs[h].B0)
			}
			out = appendSpan(out, span{lo - delta, end - delta, s.cur + lo - s.lo})
			lo = end
		}
	}
	return out
}

// appendSpan appends n to out, joined to the last span when it continues
// it in both numberings.
func appendSpan(out []span, n span) []span {
	if k := len(out) - 1; k >= 0 && out[k].hi == n.lo && out[k].cur+out[k].hi-out[k].lo == n.cur {
		out[k].hi = n.hi
		return out
	}
	return append(out, n)
}

// Since returns the changes logged after the change id that touched path,
// as a file's path or as the path a file moved from, oldest first, with
// their hunks' lines: what happened at the path since that change, which
// a revert of it has to get past. complete is false when changes after id
// were lost to a damaged history file, which may have touched the path
// too. id must be a change of this log that it still holds.
func (l *Log) Since(id ID, path string) (changes []Change, complete bool, err error) {
	if !validPath(path) {
		return nil, false, fmt.Errorf("history: %q: want a clean relative path inside the workspace", path)
	}
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		return nil, false, ErrClosed
	}
	switch {
	case id.log != l.log || id.seq == 0 || id.seq >= l.next:
		l.mu.RUnlock()
		return nil, false, fmt.Errorf("%w: %s is not a change of this history", ErrUnknown, id)
	case id.seq < l.base:
		l.mu.RUnlock()
		return nil, false, fmt.Errorf("%w: %s is older than the history kept", ErrExpired, id)
	}
	complete = true
	for _, g := range l.gaps {
		if g[1] > id.seq+1 {
			complete = false
		}
	}
	list := l.paths[path]
	i, _ := slices.BinarySearch(list, id.seq+1)
	var locs []loc
	for _, seq := range list[i:] {
		if lc, ok := l.locLocked(seq); ok {
			locs = append(locs, lc)
		} else {
			complete = false
		}
	}
	l.mu.RUnlock()
	if len(locs) == 0 {
		return nil, complete, nil
	}
	changes, err = l.readMany(locs, true)
	if err != nil {
		return nil, false, err
	}
	return changes, complete, nil
}
