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
	// Hits counts Get calls that found the version in memory, Misses those
	// that found it nowhere (Disk.Hits counts those found on disk).
	Hits, Misses uint64
	// Evictions counts snapshots dropped to stay within the budget.
	Evictions uint64
	// Bytes is the accounted size of the snapshots held now.
	Bytes int64
	// Entries is the number of snapshots held now.
	Entries int
	// MaxBytes is the budget.
	MaxBytes int64
	// Disk is the disk store's counters; zero without one.
	Disk DiskStats
}

// Cache holds parsed file snapshots by version, least recently used first
// out, within a byte budget. It is shared by every agent and file and is
// safe for concurrent use. A version names exact bytes, so an entry is never
// stale; a snapshot larger than the whole budget is not kept.
//
// With a Disk (WithDisk), every snapshot the memory lets go (evicted, or
// larger than the budget) is spilled to it, and Get looks there when memory
// misses. Spilling only what memory lets go keeps a server whose memory
// budget suffices off the disk entirely; Save spills the rest at shutdown,
// so the next server finds every base its predecessor held. A crash loses
// what only memory held: edits from those bases are then refused, never
// applied blind.
type Cache struct {
	disk      *Disk
	keep      func(version string) bool // nil: spill everything
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

// CacheOption configures NewCache.
type CacheOption func(*Cache)

// WithDisk spills the snapshots the cache lets go to d, and looks there when
// memory misses. The caller closes d, after Save, when the cache is no
// longer used.
func WithDisk(d *Disk) CacheOption { return func(c *Cache) { c.disk = d } }

// WithSpillOnly spills a snapshot memory lets go only when keep says its
// version may still be a base (some agent was shown it): a version nobody
// holds can only be named by a client's own baseVersion, and writing every
// version of a file being edited to the disk costs as much as the edits.
// Save spills everything regardless, since what agents hold is lost with
// the process.
func WithSpillOnly(keep func(version string) bool) CacheOption {
	return func(c *Cache) { c.keep = keep }
}

// NewCache returns a cache holding at most maxBytes of snapshots in memory;
// 0 or less keeps none there (every Get then misses, or goes to the disk).
func NewCache(maxBytes int64, opts ...CacheOption) *Cache {
	c := &Cache{max: max(maxBytes, 0), m: make(map[string]*list.Element)}
	for _, o := range opts {
		o(c)
	}
	return c
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
	c.mu.Lock()
	if c.touchLocked(version) {
		c.mu.Unlock()
		return
	}
	out := c.insertLocked(version, doc)
	c.mu.Unlock()
	c.spill(out, c.keep)
}

// insertLocked adds doc under version, which is not held, and returns what
// memory lets go for it: the snapshots evicted, or doc itself when it is
// larger than the whole budget.
func (c *Cache) insertLocked(version string, doc *hashline.Document) []*cacheEntry {
	e := &cacheEntry{version: version, doc: doc, size: Size(version, doc)}
	if e.size > c.max {
		return []*cacheEntry{e}
	}
	c.m[version] = c.ll.PushFront(e)
	c.bytes += e.size
	var out []*cacheEntry
	for c.bytes > c.max {
		el := c.ll.Back()
		old := el.Value.(*cacheEntry)
		c.ll.Remove(el)
		delete(c.m, old.version)
		c.bytes -= old.size
		c.evictions++
		out = append(out, old)
	}
	return out
}

// spill hands what memory let go to the disk, if there is one; outside the
// lock, since a full backlog makes it wait for the disk.
// With keep, only the versions it keeps.
func (c *Cache) spill(entries []*cacheEntry, keep func(string) bool) {
	if c.disk == nil {
		return
	}
	for _, e := range entries {
		if keep == nil || keep(e.version) {
			c.disk.Put(e.version, e.doc.View())
		}
	}
}

// Get returns the snapshot of version, if held in memory or on the disk,
// and marks it recently used; one read from the disk is kept in memory
// again.
func (c *Cache) Get(version string) (*hashline.Document, bool) {
	c.mu.Lock()
	doc, ok := c.lookupLocked(version)
	if ok || c.disk == nil {
		if ok {
			c.hits++
		} else {
			c.misses++
		}
		c.mu.Unlock()
		return doc, ok
	}
	c.mu.Unlock()
	data, ok := c.disk.Get(version)
	if !ok {
		c.mu.Lock()
		c.misses++
		c.mu.Unlock()
		return nil, false
	}
	doc = hashline.ParseDocument(data)
	c.mu.Lock()
	var out []*cacheEntry
	if held, ok := c.lookupLocked(version); ok {
		doc = held // another Get read it meanwhile
	} else {
		out = c.insertLocked(version, doc)
	}
	c.mu.Unlock()
	c.spill(out, c.keep) // the disk has doc itself already: Put is a no-op for it
	return doc, true
}

// Save spills every snapshot held in memory to the disk, least recently
// used first, so that a later server finds them; it returns once the disk
// has them all pending (Disk.Close writes them).
func (c *Cache) Save() {
	if c.disk == nil {
		return
	}
	c.mu.Lock()
	all := make([]*cacheEntry, 0, c.ll.Len())
	for el := c.ll.Back(); el != nil; el = el.Prev() {
		all = append(all, el.Value.(*cacheEntry))
	}
	c.mu.Unlock()
	c.spill(all, nil)
}

// Peek is Get for a caller that only saves work with the result (a
// parse it can skip): it looks in memory only, marks the version used and
// is not counted in Stats, whose hits and misses are about rebases.
func (c *Cache) Peek(version string) (*hashline.Document, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lookupLocked(version)
}

// Stats returns the current counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Stats{
		Hits: c.hits, Misses: c.misses, Evictions: c.evictions,
		Bytes: c.bytes, Entries: c.ll.Len(), MaxBytes: c.max,
	}
	if c.disk != nil {
		s.Disk = c.disk.Stats()
	}
	return s
}
