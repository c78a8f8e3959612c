//go:build unix

package workspace

import (
	"io/fs"
	"os"
	"syscall"
)

// openNonblock makes opening a FIFO return at once instead of waiting for a
// writer; it has no effect on regular files.
const openNonblock = syscall.O_NONBLOCK

// keepOwner gives the new file f the owner and group of the file it
// replaces, when they differ and the server may change them (it runs as
// root, or only the group differs and the server's user is in it). The new
// file's are compared, not the server's: a file created in a setgid
// directory takes the directory's group. It is best effort: a rewrite by an
// unprivileged server takes the file over, as any editor's would.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if fi, err := f.Stat(); err == nil {
		if cur, ok := fi.Sys().(*syscall.Stat_t); ok && cur.Uid == st.Uid && cur.Gid == st.Gid {
			return
		}
	}
	if f.Chown(int(st.Uid), int(st.Gid)) != nil {
		// Not root: the group alone, if the server's user is in it.
		_ = f.Chown(-1, int(st.Gid))
	}
}
