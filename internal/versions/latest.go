package versions

import (
	"container/list"
	"sync"
)

// LatestEntryOverhead is what a Latest counts for one file besides the
// bytes of its name and version: about what its list element, map entry
// and record take.
const LatestEntryOverhead = ViewEntryOverhead + ViewVersionOverhead

// Latest remembers, for each file, one version: the one last read or
// written there, forgetting the least recently used files past a bound on
// their number and one on their bytes. A forgotten file behaves as one
// never seen. It is safe for concurrent use.
type Latest struct {
	mu        sync.Mutex
	max       int
	maxBytes  int64
	bytes     int64
	ll        list.List // of *latestEntry, most recently used at the front
	m         map[string]*list.Element
	evictions uint64
	// held counts, per version, the files whose latest it is (Holds).
	held map[string]int
}

type latestEntry struct{ file, version string }

func (e *latestEntry) size() int64 {
	return int64(len(e.file) + len(e.version) + LatestEntryOverhead)
}

// NewLatest returns a Latest holding at most maxEntries files (at least 1)
// that count for at most maxBytes together (<= 0 means DefaultViewBytes).
// The file set last is always kept, whatever its size.
func NewLatest(maxEntries int, maxBytes int64) *Latest {
	if maxBytes <= 0 {
		maxBytes = DefaultViewBytes
	}
	return &Latest{max: max(maxEntries, 1), maxBytes: maxBytes, m: make(map[string]*list.Element), held: make(map[string]int)}
}

// Set records version as file's latest; "" forgets the file's.
func (l *Latest) Set(file, version string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if version == "" {
		l.forgetLocked(file)
		return
	}
	if el, ok := l.m[file]; ok {
		e := el.Value.(*latestEntry)
		l.ll.MoveToFront(el)
		if e.version == version {
			return
		}
		l.bytes -= e.size()
		l.release(e.version)
		e.version = version
		l.bytes += e.size()
	} else {
		e := &latestEntry{file: file, version: version}
		l.m[file] = l.ll.PushFront(e)
		l.bytes += e.size()
	}
	l.held[version]++
	for l.ll.Len() > 1 && (l.ll.Len() > l.max || l.bytes > l.maxBytes) {
		l.drop(l.ll.Back())
		l.evictions++
	}
}

// Get returns file's latest version, and whether one is remembered.
func (l *Latest) Get(file string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.m[file]
	if !ok {
		return "", false
	}
	l.ll.MoveToFront(el)
	return el.Value.(*latestEntry).version, true
}

// Holds reports whether version is some file's latest.
func (l *Latest) Holds(version string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[version] > 0
}

// Move makes the latest version of from that of to, as when the file was
// renamed; to's own is forgotten.
func (l *Latest) Move(from, to string) {
	if from == to {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetLocked(to)
	el, ok := l.m[from]
	if !ok {
		return
	}
	e := el.Value.(*latestEntry)
	l.bytes -= e.size()
	delete(l.m, from)
	e.file = to
	l.m[to] = el
	l.bytes += e.size()
}

// Forget drops file's latest version, as when it was deleted.
func (l *Latest) Forget(file string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetLocked(file)
}

func (l *Latest) forgetLocked(file string) {
	if el, ok := l.m[file]; ok {
		l.drop(el)
	}
}

// drop forgets the file of el. l.mu is held.
func (l *Latest) drop(el *list.Element) {
	e := el.Value.(*latestEntry)
	l.ll.Remove(el)
	delete(l.m, e.file)
	l.bytes -= e.size()
	l.release(e.version)
}

func (l *Latest) release(version string) {
	if l.held[version]--; l.held[version] <= 0 {
		delete(l.held, version)
	}
}
