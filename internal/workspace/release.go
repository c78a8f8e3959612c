package workspace

import "path/filepath"

// releaseSlots bounds the background closes in flight. Each one blocks an
// OS thread while the filesystem frees blocks, so past this many the
// writer closes its own descriptor and waits, as it would have without the
// hold.
const releaseSlots = 8

// holdReplaced keeps the file at rel (resolved, inside the root) allocated
// across the rename that replaces it, and returns a release for after the
// write. Renaming over a file frees its blocks inside rename(2) when
// nothing else holds it, and on a filesystem mounted with online discard
// (common on cloud disks) the free waits for the device to discard them:
// about 0.2 ms for a small file on the machine in BENCHMARKS.md, more for
// a large one. Holding the old inode moves that work to the release, which
// runs after the write has returned, in the background. Nothing about the
// result changes: the name points to the new file at the rename, and the
// old one, unreachable by name, is freed when the release closes it.
func (w *Workspace) holdReplaced(rel string) (release func()) {
	fd := holdInode(filepath.Join(w.realDir, filepath.FromSlash(rel)))
	if fd < 0 {
		return func() {}
	}
	return func() {
		select {
		case w.releasing <- struct{}{}:
			go func() {
				closeInode(fd)
				<-w.releasing
			}()
		default:
			closeInode(fd)
		}
	}
}
