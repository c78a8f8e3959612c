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

// keepOwner gives the new file the owner of the file it replaces, when they
// differ and the server may change it (it runs as root, or only the group
// differs and the server's user is in it). It is best effort: a rewrite by
// an unprivileged server takes the file over, as any editor's would.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}
