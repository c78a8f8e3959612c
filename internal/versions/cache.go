package versions

import (
	"container/list"
	"sync"

	"github.com/hashline/hashline/internal/hashline"
)

// DefaultCacheBytes is the snapshot cache budget when none is configured.
const DefaultCacheBytes = 256 << 20

// entryOverhead approximates the bookkeeping of one cached snapshot (list
// element, map entry, document header) so that many tiny files still count.
const entryOverhead = 160

// Stats is a snapshot of a Cache's counters.
type Stats struct {
	// Hits and Misses count Get calls that found or missed a version.
	Hits, Misses uint64
	// Evictions counts snapshots dropped to stay within the budget.
	Evictions uint64
	// Bytes is the accounted size of the snapshots held now.
	Bytes int64
	// Entries is the number of snapshots held now.
	Entries int
	// MaxBytes is the budget.
	MaxBytes int64
}

// Cache holds parsed file snapshots by version, least recently used first
// out, within a byte budget. It is shared by every agent and file and is
// safe for concurrent use. A version names exact bytes, so an entry is never
// stale; a snapshot larger than the whole budget is not kept.
type Cache struct {
	mu        sync.Mutex
	max       int64
	bytes     int64
	ll        list.List // of *cacheEntry, most recently used at the front
	m         map[string]*list.Element
	hits      uint64
	misses    uint64
	evictions uint64
}

type cacheEntry struct {
	version string
	doc     *hashline.Document
	size    int64
}

// NewCache returns a cache holding at most maxBytes of snapshots; 0 or less
// keeps nothing (every Get misses).
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: max(maxBytes, 0), m: make(map[string]*list.Element)}
}

// Size is what a snapshot of doc under version is accounted as: its text,
// one line offset and one cached line hash per line, and a fixed overhead.
func Size(version string, doc *hashline.Document) int64 {
	return int64(len(doc.Text())) + 12*int64(doc.Len()+1) + int64(len(version)) + entryOverhead
}

// Touch marks version as just used, as Put of a version already held does,
// and reports whether it is held. It lets a caller skip building a
// snapshot the cache has.
func (c *Cache) Touch(version string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.touchLocked(version)
}

func (c *Cache) touchLocked(version string) bool {
	_, ok := c.lookupLocked(version)
	return ok
}

// lookupLocked returns the snapshot of version, if held, and marks it
// recently used.
func (c *Cache) lookupLocked(version string) (*hashline.Document, bool) {
	el, ok := c.m[version]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	return el.Value.(*cacheEntry).doc, true
}

// Put stores doc as the content of version, or marks it recently used if it
// is there already. doc must be the parsed text of exactly that version and
// must not be modified afterwards (Documents are immutable).
func (c *Cache) Put(version string, doc *hashline.Document) {
	if version == "" || doc == nil {
		return
	}
	size := Size(version, doc)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.touchLocked(version) {
		return
	}
	if size > c.max {
		return
	}
	c.m[version] = c.ll.PushFront(&cacheEntry{version: version, doc: doc, size: size})
	c.bytes += size
	for c.bytes > c.max {
		el := c.ll.Back()
		e := el.Value.(*cacheEntry)
		c.ll.Remove(el)
		delete(c.m, e.version)
		c.bytes -= e.size
		c.evictions++
	}
}

// Get returns the snapshot of version, if cached, and marks it recently used.
func (c *Cache) Get(version string) (*hashline.Document, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	doc, ok := c.lookupLocked(version)
	if ok {
		c.hits++
	} else {
		c.misses++
	}
	return doc, ok
}

// Peek is Get for a caller that only saves work with the result (a
// parse it can skip): it marks the version used but is not counted in
// Stats, whose hits and misses are about rebases.
func (c *Cache) Peek(version string) (*hashline.Document, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lookupLocked(version)
}

// Stats returns the current counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{
		Hits: c.hits, Misses: c.misses, Evictions: c.evictions,
		Bytes: c.bytes, Entries: c.ll.Len(), MaxBytes: c.max,
	}
}
