package state

import (
	"errors"
	"fmt"
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
	release, err = LockFile(p)
	if errors.Is(err, ErrHeld) {
		return nil, fmt.Errorf("%w (%s is locked)", ErrLogInUse, p)
	}
	if err != nil {
		return nil, fmt.Errorf("intent log: %w", err)
	}
	return release, nil
}
