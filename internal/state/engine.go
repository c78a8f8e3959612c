package state

import (
	"errors"
	"fmt"
	"os"
)

// ErrHeld is wrapped by LockFile's error when another process holds the
// lock.
var ErrHeld = errors.New("held by another process")

// LockFile takes an exclusive advisory lock on the file at path (created
// with mode 0600 if missing) without waiting, and keeps it until release.
// The system drops the lock when its holder exits, even by a crash, so a
// lock is never stale. A lock another process holds is ErrHeld.
func LockFile(path string) (release func() error, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return lockOpen(path, f)
}

// lockOpen is LockFile of the file f opened at path, which release closes.
func lockOpen(path string, f *os.File) (release func() error, err error) {
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("%s: %w", path, ErrHeld)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() error {
		// Dropped before the file is closed: a descriptor a child process
		// inherited for a moment would keep it past the close.
		err := unlockFile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// CheckPrivate refuses the directory p unless it is a directory of this
// user that no other user may write to, as Open checks a state directory.
func CheckPrivate(p string) error { return private(p) }
