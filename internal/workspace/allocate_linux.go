package workspace

import "golang.org/x/sys/unix"

// allocate reserves the blocks of the first n bytes of the new, empty file
// f (fallocate(2)), and reports whether it did. An unsynced replace
// allocates its temp file before filling it: on ext4, renaming a file with
// data not yet given blocks (delayed allocation) over another starts
// writeback of that data (auto_da_alloc, a guard for programs that do not
// fsync), which was most of what an unsynced replace cost. A filesystem
// without fallocate is written to as before.
func allocate(fd uintptr, n int) bool {
	return n > 0 && unix.Fallocate(int(fd), 0, 0, int64(n)) == nil
}
