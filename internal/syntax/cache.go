package syntax

import (
	"crypto/sha256"
	"sync"
)

// Cache keeps, for each of a bounded number of files, the syntax errors of
// the last content of it that a check parsed whole. An edit that leaves
// errors parses the content after it and the content before it, whole, to
// compare them; the content before an edit is most often the content after
// the one before it, so the second parse is then found here. Content is
// known by its SHA-256, so an entry serves only the bytes it was made
// from. Safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	max   int
	tick  uint64
	files map[string]*cacheEntry
}

type cacheEntry struct {
	sum   [sha256.Size]byte
	diags []Diagnostic // nil: the content parsed clean
	used  uint64
}

// DefaultCacheFiles is the number of files a Cache made by NewCache(0)
// remembers.
const DefaultCacheFiles = 64

// maxCachedDiagnostics: a parse with more errors than this is not kept
// (parsers stop early on errors; this only bounds an entry).
const maxCachedDiagnostics = 64

// NewCache returns a Cache of the last whole-file parses of up to files
// files (DefaultCacheFiles when files <= 0); the least recently used file
// makes room.
func NewCache(files int) *Cache {
	if files <= 0 {
		files = DefaultCacheFiles
	}
	return &Cache{max: files, files: make(map[string]*cacheEntry)}
}

// get returns the errors of content, parsed whole as path, if known.
func (c *Cache) get(path string, content []byte) ([]Diagnostic, bool) {
	if c == nil {
		return nil, false
	}
	sum := sha256.Sum256(content)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.files[path]
	if !ok || e.sum != sum {
		return nil, false
	}
	c.tick++
	e.used = c.tick
	return e.diags, true
}

// put records the errors of content, parsed whole as path, in place of
// what was known of path. diags is copied.
func (c *Cache) put(path string, content []byte, diags []Diagnostic) {
	if c == nil || len(diags) > maxCachedDiagnostics {
		return
	}
	e := &cacheEntry{sum: sha256.Sum256(content)}
	if len(diags) > 0 {
		e.diags = append([]Diagnostic(nil), diags...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	e.used = c.tick
	if _, ok := c.files[path]; !ok && len(c.files) >= c.max {
		oldest := ""
		for p, o := range c.files {
			if oldest == "" || o.used < c.files[oldest].used {
				oldest = p
			}
		}
		delete(c.files, oldest)
	}
	c.files[path] = e
}
