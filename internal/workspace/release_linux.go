package workspace

import "golang.org/x/sys/unix"

// holdInode opens p with O_PATH, which reads nothing and needs no
// permission on the file, and returns the descriptor, or -1. While it is
// open the inode p names stays allocated even after a rename replaces it.
func holdInode(p string) int {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

func closeInode(fd int) { _ = unix.Close(fd) }
