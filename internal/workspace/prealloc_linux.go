package workspace

import (
	"os"

	"golang.org/x/sys/unix"
)

// preallocate allocates f's first n bytes on disk (best effort: a
// filesystem without fallocate is left to allocate as it writes). WriteFile
// calls it only when fsync is off. ext4 delays allocating a written file's
// blocks, and renaming such a file over another makes rename(2) allocate
// them and start writing them back (auto_da_alloc), on the caller's time;
// fsync would have done both before the rename. Allocated up front, the
// rename only renames.
func preallocate(f *os.File, n int) {
	if n <= 0 {
		return
	}
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = unix.Fallocate(int(fd), 0, 0, int64(n)) })
	}
}
