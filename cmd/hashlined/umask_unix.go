//go:build unix

package main

import "syscall"

// privateFiles makes files created until restore readable and writable by
// this user only, so a socket is never visible with looser permissions.
func privateFiles() (restore func()) {
	old := syscall.Umask(0o177)
	return func() { syscall.Umask(old) }
}
