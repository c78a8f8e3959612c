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
)

func (k Kind) String() string {
	switch k {
	case Created:
		return "created"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
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
	// Dropped counts the events this subscriber lost just before this one
	// because it fell behind (or because the file-system watcher did).
	Dropped int64
	// Time is when the hub saw the change.
	Time time.Time

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
}

// Defaults of NewHub.
const (
	DefaultBuffer       = 256
	DefaultMaxTextBytes = 32 << 20
	DefaultMaxPaths     = 1 << 16
)

// ErrClosed is returned by Subscribe once the hub is closed.
var ErrClosed = errors.New("watch: the hub is closed")

// Option configures a Hub.
type Option func(*Hub)

// WithBuffer sets how many events a subscriber's queue holds before the
// oldest are dropped.
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
type Hub struct {
	buffer    int
	maxText   int64
	maxPaths  int
	snapshots func(version string) ([]byte, bool)

	nsubs atomic.Int32 // len(subs), read without the lock by Publish

	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
	known  *store
}

// NewHub returns a hub with no subscribers.
func NewHub(opts ...Option) *Hub {
	h := &Hub{buffer: DefaultBuffer, maxText: DefaultMaxTextBytes, maxPaths: DefaultMaxPaths, subs: map[*Subscription]struct{}{}}
	for _, o := range opts {
		o(h)
	}
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

// Subscribe returns a subscription to changes of files matching any of
// the prefixes (see Match; none means every file). Close it when done.
func (h *Hub) Subscribe(prefixes ...string) (*Subscription, error) {
	if len(prefixes) == 0 {
		prefixes = []string{""}
	}
	s := &Subscription{
		hub:      h,
		prefixes: prefixes,
		ring:     make([]Event, h.buffer),
		ready:    make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	h.subs[s] = struct{}{}
	h.nsubs.Store(int32(len(h.subs)))
	return s, nil
}

// Active reports whether anyone is subscribed; publishing while nobody is
// costs one atomic load.
func (h *Hub) Active() bool { return h.nsubs.Load() > 0 }

// Publish records the change and queues its event for every matching
// subscriber. It never blocks on a subscriber. A change that leaves the
// version as it was publishes nothing: that is how the server's own writes,
// seen again by the file-system watcher, are kept from being reported as
// external. With no subscribers it does nothing at all, so what the hub
// remembers is only ever what it saw while someone was listening.
func (h *Hub) Publish(c Change) {
	if !h.Active() {
		return
	}
	now := time.Now()
	h.mu.Lock()
	if len(h.subs) == 0 {
		// The last subscriber left since Active: remember nothing, or a
		// later stream could chain from a stale version.
		h.mu.Unlock()
		return
	}
	var subs []*Subscription
	for s := range h.subs {
		if s.matches(c.Path) {
			subs = append(subs, s)
		}
	}
	prev, known := h.known.get(c.Path)
	prev = h.withText(prev)
	var evs []Event
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
		evs = append(evs, ev)
	}
	st := c.New
	if len(subs) == 0 {
		// Keep only the version: nobody needs ranges for this path now.
		st.Text, st.HasText = nil, false
	}
	h.known.put(c.Path, st)
	h.mu.Unlock()

	if len(subs) == 0 || len(evs) == 0 {
		return
	}
	for i := range evs {
		evs[i].Time = now
		if evs[i].Changed != nil {
			continue
		}
		evs[i].Changed = evs[i].ranges()
	}
	for _, s := range subs {
		for _, ev := range evs {
			s.push(ev)
		}
	}
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
// file-system watcher's queue overflowed): each one's next event has a
// Dropped count of at least 1. What the hub remembers is forgotten too.
func (h *Hub) Lost() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.known.reset()
	for s := range h.subs {
		s.mu.Lock()
		s.dropped++
		s.mu.Unlock()
	}
}

// Close ends every subscription (their Done channels close) and refuses
// new ones.
func (h *Hub) Close() {
	h.mu.Lock()
	subs := h.subs
	h.subs = map[*Subscription]struct{}{}
	h.nsubs.Store(0)
	h.closed = true
	h.mu.Unlock()
	for s := range subs {
		s.end()
	}
}

// Subscription is one subscriber's queue of events.
type Subscription struct {
	hub      *Hub
	prefixes []string
	ready    chan struct{}
	done     chan struct{}
	doneOnce sync.Once

	mu      sync.Mutex
	ring    []Event
	head, n int
	dropped int64 // lost since the last event taken
	closed  bool
}

func (s *Subscription) matches(path string) bool {
	for _, p := range s.prefixes {
		if Match(p, path) {
			return true
		}
	}
	return false
}

// push queues ev, dropping the oldest queued event when the queue is full.
func (s *Subscription) push(ev Event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if s.n == len(s.ring) {
		s.ring[s.head] = Event{}
		s.head = (s.head + 1) % len(s.ring)
		s.n--
		s.dropped++
	}
	s.ring[(s.head+s.n)%len(s.ring)] = ev
	s.n++
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Ready receives a value after events are queued; drain them with Next.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Done is closed when the hub closes the subscription.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Next takes the oldest queued event, with Dropped set to the events lost
// before it; ok is false when the queue is empty.
func (s *Subscription) Next() (ev Event, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		return Event{}, false
	}
	ev = s.ring[s.head]
	s.ring[s.head] = Event{}
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	ev.Dropped, s.dropped = s.dropped, 0
	return ev, true
}

// Close ends the subscription and removes it from the hub.
func (s *Subscription) Close() {
	h := s.hub
	h.mu.Lock()
	delete(h.subs, s)
	h.nsubs.Store(int32(len(h.subs)))
	h.mu.Unlock()
	s.end()
}

func (s *Subscription) end() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.doneOnce.Do(func() { close(s.done) })
}
