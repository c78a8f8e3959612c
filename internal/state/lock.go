package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// errLocked is a lock another holder has.
var errLocked = errors.New("locked")

// ErrLogInUse is Lock's error when another engine holds the log.
var ErrLogInUse = errors.New("the intent log is in use by another hashline engine of this workspace")

// Lock takes the log's lock, held until release: one engine at a time
// (hashlined, or an in-process engine) may commit change sets through the
// log and replay what it finds at start, since replay would otherwise
// finish another engine's set while that engine is still doing its steps.
// The lock is an advisory lock on the file "lock" in the log's directory,
// dropped by the system when its holder exits, even by a crash. Another
// holder is ErrLogInUse.
func (l *Intents) Lock() (release func() error, err error) {
	p := filepath.Join(l.dir, "lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("intent log: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("%w (%s is locked)", ErrLogInUse, p)
		}
		return nil, fmt.Errorf("intent log: locking %s: %w", p, err)
	}
	// Closing the file drops the lock.
	return f.Close, nil
}
