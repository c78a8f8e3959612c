//go:build linux

package grep

import (
	"encoding/binary"
	"io/fs"
	"path"
	"syscall"

	"golang.org/x/sys/unix"
)

// fastFS reports whether fsys is an os.Root's file system the caller marked
// with RootFS, so that opening an entry relative to its directory's
// descriptor finds the same file that fsys.Open would. Resolving every path
// from the root instead costs one openat per path component, more than the
// walk and the reads themselves.
//
// Confinement is kept: the fast path only ever opens a single name from a
// directory listing, with O_NOFOLLOW, so it cannot leave the tree; symbolic
// links go through fsys.
func fastFS(fsys fs.FS) bool {
	_, ok := fsys.(osRootFS)
	return ok
}

func newSource(fsys fs.FS) *source { return &source{fsys: fsys, fast: fastFS(fsys)} }

// openDirFast opens the directory at rel through fsys, which resolves it
// (and any symlink on the way) the way the caller's file system does, then
// takes a descriptor of its own for the walk.
func openDirFast(fsys fs.FS, rel string) (*dir, error) {
	f, err := fsys.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc, ok := f.(syscall.Conn)
	if !ok {
		return nil, nil // walk it through fsys instead
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, nil
	}
	fd, oerr := -1, error(nil)
	err = rc.Control(func(p uintptr) {
		fd, oerr = openat(int(p), ".", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	})
	if err != nil {
		return nil, nil
	}
	if oerr != nil {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: oerr}
	}
	return newDir(fd), nil
}

func openSubFast(parent *dir, name string) (*dir, error) {
	fd, err := openat(parent.fd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return newDir(fd), nil
}

func newDir(fd int) *dir {
	d := &dir{fd: fd}
	d.refs.Store(1)
	return d
}

func closeFD(fd int) { syscall.Close(fd) }

// lstatFast stats the entry name in d without following a link.
func lstatFast(d *dir, name string) (fs.FileMode, int64, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		break
	}
	var mode fs.FileMode
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		mode = fs.ModeDir
	case unix.S_IFLNK:
		mode = fs.ModeSymlink
	default:
		mode = fs.ModeIrregular
	}
	return mode, st.Size, nil
}

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// The layout of struct linux_dirent64, the same on every architecture.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// listFast reads d's entries with getdents64, whose d_type spares a stat per
// entry on the file systems that fill it in.
func listFast(fsys fs.FS, d *dir, rel string, buf []byte) ([]entry, []byte, error) {
	if len(buf) < 32<<10 {
		buf = make([]byte, 32<<10)
	}
	var ents []entry
	for {
		n, err := syscall.Getdents(d.fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return ents, buf, &fs.PathError{Op: "readdir", Path: rel, Err: err}
		}
		if n <= 0 {
			return ents, buf, nil
		}
		for off := 0; off < n; {
			reclen := int(binary.NativeEndian.Uint16(buf[off+direntReclen:]))
			rec := buf[off : off+reclen]
			off += reclen
			name := rec[direntName:]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			if string(name) == "." || string(name) == ".." {
				continue
			}
			e := entry{name: string(name)}
			switch rec[direntType] {
			case syscall.DT_REG:
			case syscall.DT_DIR:
				e.typ = fs.ModeDir
			case syscall.DT_LNK:
				e.typ = fs.ModeSymlink
			case syscall.DT_UNKNOWN:
				fi, err := fs.Lstat(fsys, path.Join(rel, e.name))
				if err != nil {
					continue
				}
				e.typ = fi.Mode().Type()
			default:
				e.typ = fs.ModeIrregular // FIFO, socket, device: never opened
			}
			ents = append(ents, e)
		}
	}
}

// readFast reads the regular file name in d. The listing said it was a
// regular file, so there is no fstat: O_NONBLOCK keeps a FIFO that replaced
// it since from blocking the open or the reads, a directory fails to read,
// and a device is cut off at limit. Only a file that fills the buffer is
// stat'ed, to size the buffer and to skip files over limit unread.
func readFast(d *dir, name string, buf []byte, limit int64) ([]byte, []byte, error) {
	fd, err := openat(d.fd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	if err != nil {
		return nil, buf, errSkip
	}
	defer syscall.Close(fd)
	buf = grow(buf, 0)
	n, stated := 0, false
	for {
		if n == len(buf) {
			if int64(n) > limit {
				return nil, buf, errSkip
			}
			size := int64(0)
			if !stated {
				stated = true
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err != nil || st.Size > limit {
					return nil, buf, errSkip
				}
				size = st.Size
			}
			buf = extend(buf, n, max(int(size)+1, n+1))
		}
		k, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, buf, errSkip
		}
		if k == 0 {
			break
		}
		n += k
	}
	if int64(n) > limit {
		return nil, buf, errSkip
	}
	return buf[:n], buf, nil
}

// fastSupported tells tests whether fastFS can be true here.
const fastSupported = true
