//go:build unix

package daemon

import "syscall"

// detached puts a started engine in a session of its own: no signal meant
// for the terminal or the process group of the session that started it
// (a Ctrl-C in a shell, an MCP client stopping its server) reaches it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
