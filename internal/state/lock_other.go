//go:build !unix && !windows

package state

import (
	"errors"
	"os"
)

// lockFile: this system has no file lock the log can rely on, so no
// engine gets the log.
func lockFile(*os.File) error {
	return errors.New("file locks are not supported on this system")
}

func unlockFile(*os.File) error { return nil }
