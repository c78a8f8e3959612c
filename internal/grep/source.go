package grep

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// RootFS returns root's file system, as root.FS() does, marked as one that
// maps paths straight onto the directory root holds open: on Linux, Search
// and List open the entries of such a tree relative to their directory's
// descriptor instead of resolving every path from the root, which is most
// of the cost of a search over many small files. Every other fs.FS,
// root.FS() itself included, is walked through its methods alone.
func RootFS(root *os.Root) fs.FS { return osRootFS{root.FS().(osFS)} }

// osFS is what an os.Root's file system implements.
type osFS interface {
	fs.StatFS
	fs.ReadDirFS
	fs.ReadFileFS
	fs.ReadLinkFS
}

// osRootFS is RootFS's file system: an os.Root's, with its methods.
type osRootFS struct{ osFS }

// source lists directories and reads files. Through a generic fs.FS every
// access resolves a path from the root; the Linux fast path (source_linux.go)
// opens entries relative to their directory's descriptor instead.
type source struct {
	fsys fs.FS
	fast bool
}

// dir is an open directory of the fast path, shared by the tasks of the
// entries in it; the last to let go closes it. A nil *dir is the
// generic path's, which holds nothing open.
type dir struct {
	fd   int
	refs atomic.Int32
}

func (d *dir) retain() {
	if d != nil {
		d.refs.Add(1)
	}
}

func (d *dir) release() {
	if d != nil && d.refs.Add(-1) == 0 {
		closeFD(d.fd)
	}
}

// entry is a directory entry: a name and the type bits of its mode (not
// following symlinks).
type entry struct {
	name string
	typ  fs.FileMode
}

// errSkip reports a file that is not to be searched: not regular, too large,
// gone, unreadable. Such files are skipped silently.
var errSkip = errors.New("skip")

// openDir opens the directory at rel (which may be reached through
// symlinks, as a path named by the caller may).
func (s *source) openDir(rel string) (*dir, error) {
	if s.fast {
		return openDirFast(s.fsys, rel)
	}
	return nil, nil
}

// subdir opens the directory name in parent, never through a symlink.
func (s *source) subdir(parent *dir, name, rel string) (*dir, error) {
	if parent != nil {
		return openSubFast(parent, name)
	}
	return nil, nil
}

// list returns the entries of a directory, sorted so that a depth-first walk
// visits files in ascending order of their paths: a directory sorts as its
// name followed by "/", so "a.go" comes before the files in "a/", and
// "a-b/x" before them too.
func (s *source) list(d *dir, rel string, buf []byte) ([]entry, []byte, error) {
	var ents []entry
	var err error
	if d != nil {
		ents, buf, err = listFast(s.fsys, d, rel, buf)
	} else {
		var des []fs.DirEntry
		des, err = fs.ReadDir(s.fsys, rel)
		for _, de := range des {
			ents = append(ents, entry{name: de.Name(), typ: de.Type()})
		}
	}
	slices.SortFunc(ents, func(a, b entry) int { return compareEntries(a, b) })
	return ents, buf, err
}

func compareEntries(a, b entry) int {
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	return nextByte(a, n) - nextByte(b, n)
}

// nextByte is the byte at i of e's sort key (its name, and "/" after a
// directory's), or -1 past its end.
func nextByte(e entry, i int) int {
	switch {
	case i < len(e.name):
		return int(e.name[i])
	case e.typ.IsDir():
		return '/'
	}
	return -1
}

// lstat returns the type bits and size of the entry name in d (at rel from
// the root), not following a symbolic link. Through an fs.FS without
// fs.ReadLinkFS a link is followed, and so reports what it leads to.
func (s *source) lstat(d *dir, name, rel string) (fs.FileMode, int64, error) {
	if d != nil {
		return lstatFast(d, name)
	}
	fi, err := fs.Lstat(s.fsys, rel)
	if err != nil {
		return 0, 0, err
	}
	return fi.Mode().Type(), fi.Size(), nil
}

// readFile reads the file name in d (at rel from the root) into buf, growing
// it as needed, and returns the contents and the buffer. Symlinks are
// followed only through the fs.FS, which for an os.Root refuses links that
// lead out, and only if it is an fs.StatFS. Anything that is not a regular file of at most limit bytes is
// errSkip; a FIFO is never opened in a way that could block.
func (s *source) readFile(d *dir, name, rel string, link bool, buf []byte, limit int64) ([]byte, []byte, error) {
	if d != nil && !link {
		return readFast(d, name, buf, limit)
	}
	if link {
		// Stat follows the link, so a FIFO behind it is caught before
		// Open could block on it. Without StatFS, fs.Stat would open it.
		sfs, ok := s.fsys.(fs.StatFS)
		if !ok {
			return nil, buf, errSkip
		}
		fi, err := sfs.Stat(rel)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
			return nil, buf, errSkip
		}
	}
	f, err := s.fsys.Open(rel)
	if err != nil {
		return nil, buf, errSkip
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, buf, errSkip
	}
	buf = grow(buf, fi.Size())
	n := 0
	for {
		if n == len(buf) {
			if int64(n) > limit {
				return nil, buf, errSkip
			}
			buf = extend(buf, n, n+1)
		}
		k, err := f.Read(buf[n:])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, buf, errSkip
		}
	}
	if int64(n) > limit {
		return nil, buf, errSkip
	}
	return buf[:n], buf, nil
}

// minBuf is the size of a fresh read buffer: most source files fit.
const minBuf = 64 << 10

// grow returns buf with a length of at least size+1 (one more byte than
// expected, so that a single read reaching EOF fits), its contents
// irrelevant.
func grow(buf []byte, size int64) []byte {
	if cap(buf) < int(size)+1 {
		buf = extend(buf, 0, int(size)+1)
	}
	return buf[:cap(buf)]
}

// extend returns a buffer of at least need bytes holding buf[:n]. It at
// least doubles, so that a worker meeting ever larger files reallocates (and
// zeroes, which showed in profiles) a few times only.
func extend(buf []byte, n, need int) []byte {
	if need <= cap(buf) {
		return buf[:cap(buf)]
	}
	out := make([]byte, max(need, 2*cap(buf), minBuf))
	copy(out, buf[:n])
	return out
}

// bufPool keeps read buffers across searches.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf is the largest read buffer kept for the next file or search.
const maxPooledBuf = 4 << 20

func getBuf() []byte { return *bufPool.Get().(*[]byte) }

func putBuf(buf []byte) {
	if cap(buf) <= maxPooledBuf {
		bufPool.Put(&buf)
	}
}
