package watch

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Kind says what happened to a file.
type Kind uint8

// The kinds of change.
const (
	Created Kind = iota + 1
	Modified
	Deleted
	// Moved: the file was renamed from Event.From to Event.Path.
	Moved
)

func (k Kind) String() string {
	switch k {
	case Created:
		return "created"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	case Moved:
		return "moved"
	}
	return "unknown"
}

// Event is one change to one file, as a subscriber receives it.
type Event struct {
	// Path is the file, slash-separated and relative to the workspace root.
	Path string
	Kind Kind
	// Agent made the change through the server; "" when External.
	Agent string
	// External is set for changes another process made.
	External bool
	// OldVersion is "" for a created file, or when the old version is not
	// known. NewVersion is "" for a deleted file.
	OldVersion, NewVersion string
	// Changed lists the changed line regions; nil when the content of
	// either side is not known (or not text). Shared between subscribers:
	// read-only.
	Changed []Range
	// Dropped counts the events this subscriber may have lost just before
	// this one, because it fell behind (or because the file-system watcher
	// did); see Subscription.Next.
	Dropped int64
	// Time is when the hub saw the change.
	Time time.Time
	// From is where a Moved file was before.
	From string
	// ChangeSet names the change set the change belongs to, if any.
	ChangeSet string
	// ChangeID is the id the change history recorded the change under
	// (internal/history), "" when it recorded none.
	ChangeID string

	diff *pendingRanges // the contents to compute Changed from
}

// Change is a change to publish.
type Change struct {
	// Path is the file, slash-separated and relative to the workspace
	// root; it must not be empty.
	Path string
	// Agent made the change; "" for External changes.
	Agent    string
	External bool
	// Old is the state the change started from, when the caller knows it
	// (the server's own edits do). When nil the hub uses the last state it
	// saw for Path, if any.
	Old *State
	// New is the state after the change; a zero Version means the file is
	// gone.
	New State
	// Created says the file was seen to appear; it decides the kind when
	// neither the caller nor the hub knows the old state. If the file is
	// gone again (New has no version), there is no event at all.
	Created bool
	// From, when set, is where the file was before it was moved to Path
	// (a Moved event); Old is then its state there. Subscribers to either
	// path get the event.
	From string
	// ChangeSet names the change set the change belongs to, if any.
	ChangeSet string
	// ChangeID is the id the change history recorded the change under,
	// "" when it recorded none; the event carries it.
	ChangeID string
}

// Defaults of NewHub.
const (
	DefaultBuffer       = 4096
	DefaultMaxTextBytes = 32 << 20
	DefaultMaxPaths     = 1 << 16
)

// ErrClosed is returned by Subscribe once the hub is closed.
var ErrClosed = errors.New("watch: the hub is closed")

// Option configures a Hub.
type Option func(*Hub)

// WithBuffer sets how many events the hub keeps for its subscribers, all
// of them together: a subscriber that falls further behind skips to the
// oldest event kept (see Event.Dropped).
func WithBuffer(n int) Option {
	return func(h *Hub) {
		if n > 0 {
			h.buffer = n
		}
	}
}

// WithMaxTextBytes bounds the file contents the hub keeps to compute the
// changed ranges of the next change; past it the least recently changed
// contents are forgotten first (their versions are kept).
func WithMaxTextBytes(n int64) Option {
	return func(h *Hub) {
		if n >= 0 {
			h.maxText = n
		}
	}
}

// WithMaxPaths bounds how many paths the hub remembers a version for.
func WithMaxPaths(n int) Option {
	return func(h *Hub) {
		if n > 0 {
			h.maxPaths = n
		}
	}
}

// WithSnapshots gives the hub a second place to find the content of a
// version it knows but holds no content for (it was not kept, or was
// forgotten for the byte budget): typically the server's snapshot cache.
// get is called with the hub's lock held and must not call the hub.
func WithSnapshots(get func(version string) ([]byte, bool)) Option {
	return func(h *Hub) { h.snapshots = get }
}

// Hub fans change events out to subscribers. It is safe for concurrent
// use. Publish calls for one path must not run concurrently (the server
// holds the path's edit lock around them), so that what the hub remembers
// of a file follows its real order of changes.
//
// Publishing costs the same whatever the subscribers do: each event is
// appended once to a ring shared by every subscriber, and the subscribers
// interested in its path are woken with one channel close per prefix they
// watch (not per subscriber). Each subscriber reads the ring from its own
// cursor in its own goroutine, filters by its prefixes and is never waited
// for; one that falls more than the ring's length behind skips ahead and
// is told so (Event.Dropped). The hub's memory is the ring (and what it
// remembers of files), whatever the number of subscribers and however far
// behind they are.
type Hub struct {
	buffer    int
	maxText   int64
	maxPaths  int
	snapshots func(version string) ([]byte, bool)

	nsubs atomic.Int32 // subscribers, read without the lock by Active

	// ring[seq % len(ring)] holds the entry of sequence number seq, for
	// the last len(ring) sequence numbers before head. Entries are written
	// under mu and read without it.
	ring []atomic.Pointer[entry]
	head atomic.Uint64 // the sequence number of the next entry
	done chan struct{} // closed by Close

	mu     sync.Mutex
	topics map[string]*topic // by prefix, while someone subscribes to it
	closed bool
	known  *store
}

// entry is one slot of the ring: an event, or the mark of a loss.
type entry struct {
	seq  uint64
	ev   Event
	lost bool // events were missed here (Lost); no event
}

// topic is a prefix subscribers wait on. Its wake channel is closed, and
// replaced, when an event under the prefix is appended.
type topic struct {
	subs int          // subscriptions waiting on it; guarded by Hub.mu
	wake atomic.Value // chan struct{}
}

func newTopic() *topic {
	t := &topic{}
	t.wake.Store(make(chan struct{}))
	return t
}

// NewHub returns a hub with no subscribers.
func NewHub(opts ...Option) *Hub {
	h := &Hub{buffer: DefaultBuffer, maxText: DefaultMaxTextBytes, maxPaths: DefaultMaxPaths,
		topics: map[string]*topic{}, done: make(chan struct{})}
	for _, o := range opts {
		o(h)
	}
	h.ring = make([]atomic.Pointer[entry], h.buffer)
	h.known = newStore(h.maxPaths, h.maxText)
	return h
}

// Match reports whether path is prefix or lies under it; "" matches every
// path, and "a" matches "a" and "a/x" but not "ab".
func Match(prefix, path string) bool {
	if prefix == "" || prefix == "." {
		return true
	}
	return path == prefix || strings.HasPrefix(path, prefix) && path[len(prefix)] == '/'
}

// topicKey is the one prefix a subscription to prefixes waits on: every
// path matching one of them must match it. For several different
// prefixes that is the whole workspace: such a subscriber is woken by
// every event, and filters.
func topicKey(prefixes []string) string {
	k := prefixes[0]
	for _, p := range prefixes[1:] {
		if p != k {
			return ""
		}
	}
	if k == "." {
		return ""
	}
	return k
}

// ancestors calls f with every prefix that matches path (see Match):
// "", each directory above it, and path itself; it stops when f returns
// false.
func ancestors(path string, f func(prefix string) bool) {
	if !f("") {
		return
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && !f(path[:i]) {
			return
		}
	}
	f(path)
}

// Subscribe returns a subscription to changes of files matching any of
// the prefixes (see Match; none means every file), from now on. Close it
// when done.
func (h *Hub) Subscribe(prefixes ...string) (*Subscription, error) {
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	key := topicKey(prefixes)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	t := h.topics[key]
	if t == nil {
		t = newTopic()
		h.topics[key] = t
	}
	t.subs++
	h.nsubs.Add(1)
	s := &Subscription{hub: h, prefixes: prefixes, key: key, topic: t, cursor: h.head.Load()}
	s.wait = t.wake.Load().(chan struct{})
	return s, nil
}

// Active reports whether anyone is subscribed; publishing while nobody is
// costs one atomic load.
func (h *Hub) Active() bool { return h.nsubs.Load() > 0 }

// interested reports whether some subscription waits on a prefix matching
// path. h.mu is held.
func (h *Hub) interested(path string) bool {
	found := false
	ancestors(path, func(p string) bool {
		_, found = h.topics[p]
		return !found
	})
	return found
}

// Publish records the change and appends its event to the ring for the
// subscribers of its path. It never blocks on a subscriber, and its cost
// does not depend on how many there are or how far behind they are. A
// change that leaves the version as it was publishes nothing: that is how
// the server's own writes, seen again by the file-system watcher, are kept
// from being reported as external. With no subscribers it does nothing at
// all, so what the hub remembers is only ever what it saw while someone
// was listening.
func (h *Hub) Publish(c Change) {
	if !h.Active() {
		return
	}
	now := time.Now()
	h.mu.Lock()
	if h.nsubs.Load() == 0 {
		// The last subscriber left since Active: remember nothing, or a
		// later stream could chain from a stale version.
		h.mu.Unlock()
		return
	}
	if c.From != "" {
		h.publishMove(c, now)
		return
	}
	wanted := h.interested(c.Path)
	prev, known := h.known.get(c.Path)
	prev = h.withText(prev)
	var buf [2]Event
	evs := buf[:0]
	old, oldKnown := prev, known
	if c.Old != nil {
		if known && prev.Version != c.Old.Version {
			// The file changed behind the server's back and the watcher
			// has not reported it yet: report it first, so the versions
			// of the stream chain up.
			if ev, ok := newEvent(c.Path, "", true, prev, true, *c.Old, false); ok {
				evs = append(evs, ev)
			}
		}
		old, oldKnown = h.withText(*c.Old), true
	}
	if ev, ok := newEvent(c.Path, c.Agent, c.External, old, oldKnown, c.New, c.Created); ok {
		ev.ChangeSet, ev.ChangeID = c.ChangeSet, c.ChangeID
		evs = append(evs, ev)
	}
	st := c.New
	if !wanted {
		// Keep only the version: nobody needs ranges for this path now.
		st.Text, st.HasText = nil, false
	}
	h.known.put(c.Path, st)
	h.mu.Unlock()

	if !wanted || len(evs) == 0 {
		return
	}
	// The diff runs outside the lock: it is the one part of publishing
	// that grows (with the file), and other paths need not wait for it.
	for i := range evs {
		evs[i].Time = now
		if evs[i].Changed == nil {
			evs[i].Changed = evs[i].ranges()
		}
	}
	h.mu.Lock()
	for i := range evs {
		h.append(&entry{ev: evs[i]})
	}
	// One wake-up per prefix matching the path that someone waits on.
	ancestors(c.Path, func(p string) bool {
		if t := h.topics[p]; t != nil {
			close(t.wake.Swap(make(chan struct{})).(chan struct{}))
		}
		return true
	})
	h.mu.Unlock()
}

// publishMove is Publish of a move (c.From set). h.mu is held, and
// released.
func (h *Hub) publishMove(c Change, now time.Time) {
	wanted := h.interested(c.Path) || h.interested(c.From)
	var old State
	if c.Old != nil {
		old = h.withText(*c.Old)
	} else {
		old, _ = h.known.get(c.From)
		old = h.withText(old)
	}
	ev := Event{Path: c.Path, From: c.From, Kind: Moved, Agent: c.Agent, ChangeSet: c.ChangeSet, ChangeID: c.ChangeID,
		OldVersion: old.Version, NewVersion: c.New.Version, Time: now}
	if old.HasText && c.New.HasText {
		ev.diff = &pendingRanges{old.Text, c.New.Text}
	} else if old.Version == c.New.Version {
		ev.Changed = []Range{}
	}
	st := c.New
	if !wanted {
		st.Text, st.HasText = nil, false
	}
	h.known.put(c.From, State{})
	h.known.put(c.Path, st)
	h.mu.Unlock()
	if !wanted {
		return
	}
	if ev.Changed == nil {
		ev.Changed = ev.ranges()
	}
	h.mu.Lock()
	h.append(&entry{ev: ev})
	woken := map[string]bool{}
	for _, p := range []string{c.Path, c.From} {
		ancestors(p, func(prefix string) bool {
			if t := h.topics[prefix]; t != nil && !woken[prefix] {
				woken[prefix] = true
				close(t.wake.Swap(make(chan struct{})).(chan struct{}))
			}
			return true
		})
	}
	h.mu.Unlock()
}

// append puts e at the head of the ring, over the oldest entry. h.mu is
// held. The slot is stored before head moves past it, so a reader that
// sees the new head finds the entry.
func (h *Hub) append(e *entry) {
	seq := h.head.Load()
	e.seq = seq
	h.ring[seq%uint64(len(h.ring))].Store(e)
	h.head.Store(seq + 1)
}

// withText fills in the content of an existing file's state from the
// snapshots when the state has none.
func (h *Hub) withText(st State) State {
	if st.HasText || !st.Exists() || h.snapshots == nil {
		return st
	}
	if text, ok := h.snapshots(st.Version); ok {
		st.Text, st.HasText = text, true
	}
	return st
}

// pendingRanges is stashed in an Event between newEvent and Publish, so
// the diff runs outside the hub's lock.
type pendingRanges struct{ old, new []byte }

// newEvent decides the kind of a change and whether it is one at all.
func newEvent(path, agent string, external bool, old State, oldKnown bool, new State, created bool) (Event, bool) {
	if oldKnown && old.Version == new.Version {
		return Event{}, false
	}
	if !new.Exists() && !oldKnown && created {
		return Event{}, false // it came and went unseen
	}
	ev := Event{Path: path, Agent: agent, External: external, NewVersion: new.Version}
	if oldKnown {
		ev.OldVersion = old.Version
	}
	switch {
	case !new.Exists():
		ev.Kind = Deleted
	case oldKnown && old.Exists():
		ev.Kind = Modified
	case oldKnown || created:
		ev.Kind = Created
	default:
		ev.Kind = Modified
	}
	// Ranges need both contents; a missing file is known to be empty.
	if oldKnown && (old.HasText || !old.Exists()) && (new.HasText || !new.Exists()) {
		ev.diff = &pendingRanges{old.Text, new.Text}
	}
	return ev, true
}

func (e *Event) ranges() []Range {
	if e.diff == nil {
		return nil
	}
	r := Ranges(e.diff.old, e.diff.new)
	e.diff = nil
	if r == nil {
		r = []Range{} // known, and empty (only the version changed)
	}
	return r
}

// KnownUnder returns the paths at or under dir that the hub last saw
// existing, e.g. to report the files of a directory that was removed.
func (h *Hub) KnownUnder(dir string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.known.under(dir)
}

// Forget drops everything the hub remembers about files. Call it when
// changes may go unseen from now on (the file-system watcher stops), so
// that no later event claims an old version that is no longer the truth.
func (h *Hub) Forget() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.known.reset()
}

// Lost tells every subscriber that it may have missed events (the
// file-system watcher's queue overflowed): the next event each one takes
// has a Dropped count of at least 1. What the hub remembers is forgotten
// too.
func (h *Hub) Lost() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.known.reset()
	h.append(&entry{lost: true})
}

// Close ends every subscription (their Done channels close) and refuses
// new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	h.nsubs.Store(0)
	close(h.done)
}

// Subscription is one subscriber's place in the hub's ring of events. Its
// methods other than Close must be called from one goroutine at a time
// (the subscriber's own).
type Subscription struct {
	hub      *Hub
	prefixes []string
	key      string
	topic    *topic

	cursor  uint64        // the sequence number of the next entry to read
	dropped int64         // events lost since the last event taken
	wait    chan struct{} // closed once an event for topic follows cursor

	closeOnce sync.Once
}

func (s *Subscription) matches(path string) bool {
	for _, p := range s.prefixes {
		if Match(p, path) {
			return true
		}
	}
	return false
}

// Ready returns a channel that is closed once there may be an event for
// the subscription past those Next has returned; after it closes, call
// Next until it reports none, then call Ready again.
func (s *Subscription) Ready() <-chan struct{} { return s.wait }

// Done is closed when the hub closes.
func (s *Subscription) Done() <-chan struct{} { return s.hub.done }

// Next takes the oldest event for the subscription not taken yet, with
// Dropped set to the events lost before it; ok is false when there is
// none. A subscriber that fell more than the hub's buffer behind skips to
// the oldest event still kept: Dropped then counts every event skipped,
// whether or not it was for this subscriber's files, since nothing is
// left to tell.
func (s *Subscription) Next() (ev Event, ok bool) {
	h := s.hub
	size := uint64(len(h.ring))
	for {
		// The wake channel before head: an event appended after head is
		// read closes this channel (or one that replaced it later).
		wake := s.topic.wake.Load().(chan struct{})
		head := h.head.Load()
		if s.cursor >= head {
			s.wait = wake
			return Event{}, false
		}
		if head-s.cursor > size {
			s.dropped += int64(head - size - s.cursor)
			s.cursor = head - size
		}
		e := h.ring[s.cursor%size].Load()
		if e == nil || e.seq != s.cursor {
			// Overwritten since head was read: further behind than
			// that; read head again.
			continue
		}
		s.cursor++
		switch {
		case e.lost:
			s.dropped++
		case s.matches(e.ev.Path) || e.ev.From != "" && s.matches(e.ev.From):
			ev = e.ev
			ev.Dropped, s.dropped = s.dropped, 0
			return ev, true
		}
	}
}

// Close ends the subscription and removes it from the hub.
func (s *Subscription) Close() {
	s.closeOnce.Do(func() {
		h := s.hub
		h.mu.Lock()
		defer h.mu.Unlock()
		if s.topic.subs--; s.topic.subs == 0 && h.topics[s.key] == s.topic {
			delete(h.topics, s.key)
		}
		if !h.closed {
			h.nsubs.Add(-1)
		}
	})
}
