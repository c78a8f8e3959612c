//go:build unix && !linux

package workspace

import (
	"errors"
	"path"

	"golang.org/x/sys/unix"
)

// checkInodeFlags is Linux only; elsewhere the rename refuses an immutable
// or append-only file (EPERM).
func checkInodeFlags(string, string, int) error { return nil }

// writeAccess reports whether the server's user could open the file at
// target for writing, as the kernel decides it (faccessat with the
// effective ids), without opening it (see its Linux version). It returns
// nil or the kernel's refusal.
func (w *Workspace) writeAccess(_ int, target string) error {
	d, err := w.root.Open(path.Dir(target))
	if err != nil {
		return nil
	}
	defer d.Close()
	err = unix.Faccessat(int(d.Fd()), path.Base(target), unix.W_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
		return err
	}
	return nil
}
