//go:build unix

package daemon

import (
	"errors"
	"syscall"
)

// privateFiles makes files created until restore readable and writable by
// this user only, so a socket is never visible with looser permissions.
func privateFiles() (restore func()) {
	old := syscall.Umask(0o177)
	return func() { syscall.Umask(old) }
}

// refused reports whether dialling a unix socket failed because nothing
// listens on it: the socket file was left by a server that is gone.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
