//go:build unix

package state

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting; errLocked when
// another process (or another open of the file) holds it.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

// unlockFile drops the lock on f. Closing f would drop it too, but only
// once every descriptor of the open file is closed: a child process
// started meanwhile holds a copy until it runs its program, and would keep
// the lock that long.
func unlockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
