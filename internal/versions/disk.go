package versions

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultDiskBytes is the disk store budget when none is configured.
const DefaultDiskBytes = 1 << 30

// spillBacklog bounds the bytes of snapshots waiting to be written; a
// spill beyond it waits for the writer, so that a burst of evictions
// cannot hold memory the cache has just given up.
const spillBacklog = 64 << 20

// staleTemp is how old a temp file must be before OpenDisk removes it as
// left by a crash: younger ones may be another server's write in progress.
const staleTemp = time.Hour

// snapshotExt ends the name of every snapshot file; temp files start with
// tempPrefix, which no version does.
const (
	snapshotExt = ".snap"
	tempPrefix  = ".tmp-"
	magic       = "hashline-snapshot 1"
)

// DiskStats is a snapshot of a Disk's counters.
type DiskStats struct {
	// Spills counts snapshots written to disk.
	Spills uint64
	// Hits and Misses count Get calls that found or missed a version.
	Hits, Misses uint64
	// Corrupt counts snapshot files found damaged (truncated, or not
	// matching their checksum) and dropped; each also counts as a miss.
	Corrupt uint64
	// Evictions counts files removed to stay within the budget.
	Evictions uint64
	// Bytes is the size of the snapshot files held now.
	Bytes int64
	// Entries is the number of snapshot files held now.
	Entries int
	// MaxBytes is the budget.
	MaxBytes int64
}

// Disk keeps snapshots in files of one directory (see internal/state for
// where it lies), one file per version named by it, oldest out first past a
// byte budget. A Cache spills to it the snapshots it lets go, so a rebase
// from a version evicted from memory, or held by a server that has since
// restarted, still finds its base.
//
// Put hands the bytes to a writer goroutine and returns; Get finds them
// from then on. A file is written under a temp name and renamed into place,
// without fsync: a crash may leave it truncated or empty, and every file
// carries its length and CRC-32C checksum, so a damaged file is a miss,
// never a wrong base. Content-addressed names and atomic renames let two
// servers of one workspace share a directory; each keeps its own account of
// the budget, over the files it found at start and the ones it wrote or
// read since. It is safe for concurrent use.
type Disk struct {
	dir string
	max int64

	mu    sync.Mutex
	ll    list.List // of *diskEntry, most recently used at the front
	m     map[string]*list.Element
	bytes int64
	// pending are the snapshots Put and not yet written, in order.
	pending      map[string][]byte
	queue        []string
	pendingBytes int64
	work         *sync.Cond // the writer waits for pending snapshots
	room         *sync.Cond // Put waits for the backlog to shrink
	closed       bool
	done         chan struct{}
	stats        DiskStats
}

type diskEntry struct {
	version string
	size    int64
}

// OpenDisk opens the snapshot store in the existing directory dir with a
// budget of maxBytes (at least 1), indexes the snapshot files there, oldest
// first out, removes those past the budget and temp files a crash left,
// and starts the writer. Close stops it.
func OpenDisk(dir string, maxBytes int64) (*Disk, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("snapshot store budget %d: want more than 0 bytes", maxBytes)
	}
	d := &Disk{dir: dir, max: maxBytes, m: make(map[string]*list.Element),
		pending: make(map[string][]byte), done: make(chan struct{})}
	d.work, d.room = sync.NewCond(&d.mu), sync.NewCond(&d.mu)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	type found struct {
		version string
		size    int64
		mod     time.Time
	}
	var files []found
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		name := e.Name()
		if strings.HasPrefix(name, tempPrefix) {
			if time.Since(info.ModTime()) > staleTemp {
				_ = os.Remove(filepath.Join(dir, name))
			}
			continue
		}
		if v, ok := strings.CutSuffix(name, snapshotExt); ok && validVersion(v) {
			files = append(files, found{v, info.Size(), info.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b found) int { return a.mod.Compare(b.mod) })
	for _, f := range files {
		d.m[f.version] = d.ll.PushFront(&diskEntry{version: f.version, size: f.size})
		d.bytes += f.size
	}
	d.remove(d.evictLocked())
	d.stats.Evictions = 0 // a smaller budget than last time is not churn
	go d.run()
	return d, nil
}

// validVersion reports whether v has the shape of a version ("v", a
// number, "-" and lowercase hex: workspace.Version) and so may name a file.
// Anything else, and a baseVersion is a client's string, never becomes a
// path: not "..", not a name that differs from a real one only in case (one
// file on a case-insensitive disk), not a device name such as "con".
func validVersion(v string) bool {
	scheme, digest, ok := strings.Cut(v, "-")
	if !ok || len(scheme) < 2 || len(scheme) > 4 || scheme[0] != 'v' || len(digest) < 16 || len(digest) > 128 {
		return false
	}
	for i := 1; i < len(scheme); i++ {
		if scheme[i] < '0' || scheme[i] > '9' {
			return false
		}
	}
	for i := 0; i < len(digest); i++ {
		if c := digest[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (d *Disk) path(version string) string { return filepath.Join(d.dir, version+snapshotExt) }

// header is the first line of a snapshot file: what it is, the version,
// the length of the content that follows and its CRC-32C.
func header(version string, data []byte) string {
	return fmt.Sprintf("%s %s %d %08x\n", magic, version, len(data), crc32.Checksum(data, castagnoli()))
}

// castagnoli is built on first use, not at init: every program that links
// this package (the CLI among them) would pay for the table on start.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// errCorrupt is a snapshot file that does not hold what its header says.
var errCorrupt = errors.New("damaged snapshot file")

// decode returns the content of a snapshot file of version, or
// errCorrupt: the header names the version, the content's length and
// checksum, so a truncated or damaged file, or one renamed, does not pass.
func decode(version string, b []byte) ([]byte, error) {
	i := bytes.IndexByte(b[:min(len(b), 256)], '\n')
	if i < 0 {
		return nil, errCorrupt
	}
	body := b[i+1:]
	if string(b[:i+1]) != header(version, body) {
		return nil, errCorrupt
	}
	return body, nil
}

// Put keeps data, the exact bytes of version, unless they are held already
// or larger than the whole budget. It returns once the writer has them
// (waiting while the backlog is full); Get finds them from then on. data
// must not be modified afterwards.
func (d *Disk) Put(version string, data []byte) {
	if !validVersion(version) || int64(len(header(version, nil))+len(data)) > d.max {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if d.closed {
			return
		}
		if el, ok := d.m[version]; ok {
			d.ll.MoveToFront(el)
			return
		}
		if _, ok := d.pending[version]; ok {
			return
		}
		if d.pendingBytes == 0 || d.pendingBytes+int64(len(data)) <= spillBacklog {
			break
		}
		d.room.Wait()
	}
	d.pending[version] = data
	d.queue = append(d.queue, version)
	d.pendingBytes += int64(len(data))
	d.work.Signal()
}

// Get returns the bytes of version, if held: waiting to be written, or in
// a file that is whole. A damaged file is removed and counted as a miss.
func (d *Disk) Get(version string) ([]byte, bool) {
	if !validVersion(version) {
		d.mu.Lock()
		d.stats.Misses++
		d.mu.Unlock()
		return nil, false
	}
	d.mu.Lock()
	if data, ok := d.pending[version]; ok {
		d.stats.Hits++
		d.mu.Unlock()
		return data, true
	}
	d.mu.Unlock()
	b, err := os.ReadFile(d.path(version))
	var data []byte
	if err == nil {
		data, err = decode(version, b)
	}
	d.mu.Lock()
	if err != nil {
		d.stats.Misses++
		d.forgetLocked(version)
		corrupt := errors.Is(err, errCorrupt)
		if corrupt {
			d.stats.Corrupt++
		}
		d.mu.Unlock()
		if corrupt {
			_ = os.Remove(d.path(version))
		}
		return nil, false
	}
	d.stats.Hits++
	victims := d.holdLocked(version, int64(len(b)))
	d.mu.Unlock()
	d.remove(victims)
	return data, true
}

// holdLocked records the file of version, of size bytes, as held and just
// used, and returns the versions whose files must go to keep the budget.
func (d *Disk) holdLocked(version string, size int64) []string {
	if el, ok := d.m[version]; ok {
		e := el.Value.(*diskEntry)
		d.bytes += size - e.size
		e.size = size
		d.ll.MoveToFront(el)
	} else {
		d.m[version] = d.ll.PushFront(&diskEntry{version: version, size: size})
		d.bytes += size
	}
	return d.evictLocked()
}

// forgetLocked drops version from the index (its file is gone or damaged).
func (d *Disk) forgetLocked(version string) {
	if el, ok := d.m[version]; ok {
		d.bytes -= el.Value.(*diskEntry).size
		d.ll.Remove(el)
		delete(d.m, version)
	}
}

// evictLocked drops the least recently used files past the budget from the
// index and returns their versions, for remove.
func (d *Disk) evictLocked() []string {
	var out []string
	for d.bytes > d.max && d.ll.Len() > 0 {
		e := d.ll.Back().Value.(*diskEntry)
		d.forgetLocked(e.version)
		d.stats.Evictions++
		out = append(out, e.version)
	}
	return out
}

// remove deletes the files of versions, outside the lock. A file another
// process holds open may refuse (Windows); it is out of the index anyway.
func (d *Disk) remove(versions []string) {
	for _, v := range versions {
		_ = os.Remove(d.path(v))
	}
}

// run writes pending snapshots, oldest first, until Close; then it writes
// what is left and returns.
func (d *Disk) run() {
	defer close(d.done)
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		for len(d.queue) == 0 && !d.closed {
			d.work.Wait()
		}
		if len(d.queue) == 0 {
			return
		}
		v := d.queue[0]
		d.queue = d.queue[1:]
		data := d.pending[v]
		d.mu.Unlock()
		size, err := d.write(v, data)
		d.mu.Lock()
		delete(d.pending, v)
		d.pendingBytes -= int64(len(data))
		d.room.Broadcast()
		if err != nil {
			continue // a snapshot not kept: a rebase from it is refused, safely
		}
		d.stats.Spills++
		victims := d.holdLocked(v, size)
		d.mu.Unlock()
		d.remove(victims)
		d.mu.Lock()
	}
}

// write stores data as the file of version, through a temp file renamed
// into place, and returns the file's size. A file already there of the
// right size (another server's) is kept.
func (d *Disk) write(version string, data []byte) (int64, error) {
	h := header(version, data)
	size := int64(len(h) + len(data))
	final := d.path(version)
	if fi, err := os.Lstat(final); err == nil && fi.Mode().IsRegular() && fi.Size() == size {
		return size, nil
	}
	f, err := os.CreateTemp(d.dir, tempPrefix+"*") // mode 0600
	if err != nil {
		return 0, err
	}
	_, err = f.WriteString(h)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), final)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return 0, err
	}
	return size, nil
}

// Close writes the snapshots still pending and stops the writer. Put does
// nothing afterwards; Get still reads files.
func (d *Disk) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.work.Broadcast()
	d.room.Broadcast()
	d.mu.Unlock()
	<-d.done
	return nil
}

// Stats returns the current counters.
func (d *Disk) Stats() DiskStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stats
	s.Bytes, s.Entries, s.MaxBytes = d.bytes, d.ll.Len(), d.max
	return s
}
