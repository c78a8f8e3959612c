package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// holder is ErrLogInUse, naming that holder's process: the holder writes
// its process ID to the file "holder" beside the lock once it has it.
func (l *Intents) Lock() (release func() error, err error) {
	p := filepath.Join(l.dir, "lock")
	holder := filepath.Join(l.dir, "holder")
	unlock, err := LockFile(p)
	if errors.Is(err, ErrHeld) {
		// A holder of an older build wrote no ID, and is not named. The
		// file is removed before its holder lets go, so only a crash
		// leaves one behind, and the next holder replaces it right after
		// taking the lock: only a refusal in between names a process that
		// is gone.
		if pid := readHolderPID(holder); pid != 0 {
			return nil, fmt.Errorf("%w: process %d (%s is locked)", ErrLogInUse, pid, p)
		}
		return nil, fmt.Errorf("%w (%s is locked)", ErrLogInUse, p)
	}
	if err != nil {
		return nil, fmt.Errorf("intent log: %w", err)
	}
	// Best effort: the ID only serves the message of a refused engine.
	_ = os.WriteFile(holder, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	return func() error {
		// Removed while the lock is still held, so that it is never the
		// next holder's file that goes.
		os.Remove(holder)
		return unlock()
	}, nil
}

// readHolderPID is the process ID in the holder file at path; 0 when it is
// missing or not one.
func readHolderPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 32 {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
