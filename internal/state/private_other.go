//go:build !unix

package state

import (
	"fmt"
	"os"
)

// private checks that p is a directory. Elsewhere than on Unix access is
// governed by ACLs, which the default directory (under %LocalAppData%)
// already limits to the user.
func private(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state directory %s is not a directory; choose another", p)
	}
	return nil
}
