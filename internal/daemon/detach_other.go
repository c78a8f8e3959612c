//go:build !unix && !windows

package daemon

import "syscall"

func detached() *syscall.SysProcAttr { return nil }
