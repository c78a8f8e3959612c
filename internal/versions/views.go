package versions

import (
	"container/list"
	"sync"
)

// DefaultViewEntries is the Views bound when none is configured.
const DefaultViewEntries = 100_000

// ViewStats is a snapshot of a Views' counters.
type ViewStats struct {
	// Entries is the number of (agent, file) pairs remembered now.
	Entries int
	// Evictions counts pairs forgotten to stay within the bound.
	Evictions uint64
	// MaxEntries is the bound.
	MaxEntries int
}

// Views remembers, for each (agent, file), the version the agent last saw,
// forgetting the least recently used pair past a bound. A forgotten pair
// behaves as if the agent had never seen the file. It is safe for
// concurrent use.
type Views struct {
	mu        sync.Mutex
	max       int
	ll        list.List // of *viewEntry, most recently used at the front
	m         map[viewKey]*list.Element
	evictions uint64
}

type viewKey struct{ agent, file string }

type viewEntry struct {
	key     viewKey
	version string
}

// NewViews returns a Views holding at most maxEntries pairs (at least 1).
func NewViews(maxEntries int) *Views {
	return &Views{max: max(maxEntries, 1), m: make(map[viewKey]*list.Element)}
}

// See records that agent saw version of file.
func (v *Views) See(agent, file, version string) {
	if version == "" {
		return
	}
	k := viewKey{agent, file}
	v.mu.Lock()
	defer v.mu.Unlock()
	if el, ok := v.m[k]; ok {
		el.Value.(*viewEntry).version = version
		v.ll.MoveToFront(el)
		return
	}
	v.m[k] = v.ll.PushFront(&viewEntry{key: k, version: version})
	for v.ll.Len() > v.max {
		el := v.ll.Back()
		v.ll.Remove(el)
		delete(v.m, el.Value.(*viewEntry).key)
		v.evictions++
	}
}

// Seen returns the version of file that agent saw last, and whether it saw
// any (and it is still remembered).
func (v *Views) Seen(agent, file string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	el, ok := v.m[viewKey{agent, file}]
	if !ok {
		return "", false
	}
	v.ll.MoveToFront(el)
	return el.Value.(*viewEntry).version, true
}

// Stats returns the current counters.
func (v *Views) Stats() ViewStats {
	v.mu.Lock()
	defer v.mu.Unlock()
	return ViewStats{Entries: v.ll.Len(), Evictions: v.evictions, MaxEntries: v.max}
}
