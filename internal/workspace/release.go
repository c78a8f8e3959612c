package workspace

import (
	"path/filepath"
	"time"
)

// releaseSlots bounds the background closes in flight. Each one blocks an
// OS thread while the filesystem frees blocks, so past this many the
// writer closes its own descriptor and waits, as it would have without the
// hold.
const releaseSlots = 8

// afterWriteDelay is how long after a write returns the work it leaves
// behind starts (freeing the replaced file, making the next spare file):
// long enough for the caller to send its reply first, on a machine with
// little CPU to spare. Started at once, that work ran beside the reply
// and, for the spare, issued its own fsync beside the write's. On the
// machine in BENCHMARKS.md, two servers of each build alternating in
// random order, a one-line gRPC Edit of a 100-line file took 1.15–1.17 ms
// with the work started at once and 1.03–1.08 ms with it started after the
// write (this delay, and the refill moved after the write in
// spare_linux.go); delays of 300 µs, 1 ms and 1.5 ms measured alike.
const afterWriteDelay = 300 * time.Microsecond

// afterWrite runs fn in its own goroutine afterWriteDelay from now.
// Close waits for it.
func (w *Workspace) afterWrite(fn func()) {
	if testHookAfterWrite != nil {
		testHookAfterWrite(fn)
		return
	}
	w.after.Add(1)
	time.AfterFunc(afterWriteDelay, func() {
		defer w.after.Done()
		fn()
	})
}

// testHookAfterWrite, when set, receives what afterWrite would schedule.
var testHookAfterWrite func(fn func())

// holdReplaced keeps the file at rel (resolved, inside the root) allocated
// across the rename that replaces it, and returns a release for after the
// write. Renaming over a file frees its blocks inside rename(2) when
// nothing else holds it, and on a filesystem mounted with online discard
// (common on cloud disks) the free waits for the device to discard them:
// about 0.2 ms for a small file on the machine in BENCHMARKS.md, more for
// a large one. Holding the old inode moves that work to the release, which
// runs in the background shortly after the write has returned
// (afterWrite). Nothing about the result changes: the name points to the
// new file at the rename, and the old one, unreachable by name, is freed
// when the release closes it.
func (w *Workspace) holdReplaced(rel string) (release func()) {
	fd := holdInode(filepath.Join(w.realDir, filepath.FromSlash(rel)))
	if fd < 0 {
		return func() {}
	}
	return func() {
		select {
		case w.releasing <- struct{}{}:
			w.afterWrite(func() {
				closeInode(fd)
				<-w.releasing
			})
		default:
			closeInode(fd)
		}
	}
}
