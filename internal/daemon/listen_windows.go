package daemon

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// addrInUse: Windows reports a port in use with the Winsock code, which
// its syscall.EADDRINUSE (a code Go invented there) does not match.
func addrInUse(err error) bool {
	return errors.Is(err, windows.WSAEADDRINUSE) || errors.Is(err, syscall.EADDRINUSE)
}
