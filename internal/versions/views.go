package versions

import (
	"container/list"
	"sync"
)

// DefaultViewEntries is the Views bound on pairs when none is configured.
const DefaultViewEntries = 100_000

// DefaultViewBytes is the Views bound on bytes when none is configured:
// room for DefaultViewEntries pairs of ordinary agent names and paths, and
// for far fewer of the longest (an agent's name and a path are chosen by
// callers, so entries are counted by their bytes, not only their number).
const DefaultViewBytes = 64 << 20

// ViewEntryOverhead is what a Views counts for one pair besides the bytes
// of its agent, file and version: about what its list element, map entry
// and record take.
const ViewEntryOverhead = 160

// ViewStats is a snapshot of a Views' counters.
type ViewStats struct {
	// Entries is the number of (agent, file) pairs remembered now.
	Entries int
	// Bytes is what they count for (see ViewEntryOverhead).
	Bytes int64
	// Evictions counts pairs forgotten to stay within the bounds.
	Evictions uint64
	// MaxEntries and MaxBytes are the bounds.
	MaxEntries int
	MaxBytes   int64
}

// Views remembers, for each (agent, file), the version the agent last saw,
// forgetting the least recently used pairs past a bound on their number and
// one on their bytes. A forgotten pair behaves as if the agent had never
// seen the file. It is safe for concurrent use.
type Views struct {
	mu        sync.Mutex
	max       int
	maxBytes  int64
	bytes     int64
	ll        list.List // of *viewEntry, most recently used at the front
	m         map[viewKey]*list.Element
	evictions uint64
}

type viewKey struct{ agent, file string }

type viewEntry struct {
	key     viewKey
	version string
}

func (e *viewEntry) size() int64 {
	return int64(len(e.key.agent) + len(e.key.file) + len(e.version) + ViewEntryOverhead)
}

// NewViews returns a Views holding at most maxEntries pairs (at least 1)
// that count for at most maxBytes together (<= 0 means DefaultViewBytes).
// The pair seen last is always kept, whatever its size.
func NewViews(maxEntries int, maxBytes int64) *Views {
	if maxBytes <= 0 {
		maxBytes = DefaultViewBytes
	}
	return &Views{max: max(maxEntries, 1), maxBytes: maxBytes, m: make(map[viewKey]*list.Element)}
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
		e := el.Value.(*viewEntry)
		v.bytes += int64(len(version) - len(e.version))
		e.version = version
		v.ll.MoveToFront(el)
	} else {
		e := &viewEntry{key: k, version: version}
		v.m[k] = v.ll.PushFront(e)
		v.bytes += e.size()
	}
	for v.ll.Len() > 1 && (v.ll.Len() > v.max || v.bytes > v.maxBytes) {
		el := v.ll.Back()
		e := el.Value.(*viewEntry)
		v.ll.Remove(el)
		delete(v.m, e.key)
		v.bytes -= e.size()
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
	return ViewStats{Entries: v.ll.Len(), Bytes: v.bytes, Evictions: v.evictions, MaxEntries: v.max, MaxBytes: v.maxBytes}
}
