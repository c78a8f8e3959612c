package daemon

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// privateFiles does nothing: Windows has no umask, and a socket file takes
// the permissions its directory gives new files, so keep the socket in a
// directory only this user can open.
func privateFiles() (restore func()) { return func() {} }

// refused reports whether dialling a unix socket failed because nothing
// listens on it. Windows reports that with the Winsock code, which its
// syscall.ECONNREFUSED (a code Go invented there) does not match.
func refused(err error) bool {
	return errors.Is(err, windows.WSAECONNREFUSED) || errors.Is(err, syscall.ECONNREFUSED)
}
