//go:build windows

package daemon

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// detached starts an engine in a process group of its own with no console,
// so that a Ctrl-C meant for the session that started it does not reach
// it.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
}
