//go:build unix

package server_test

import "syscall"

// mkfifo makes a FIFO at path.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// mknull makes a character device at path with /dev/null's Linux numbers
// (1, 3); it needs CAP_MKNOD.
func mknull(path string) error {
	return syscall.Mknod(path, syscall.S_IFCHR|0o666, int(uint64(1)<<8|3))
}
