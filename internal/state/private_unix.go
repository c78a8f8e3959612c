//go:build unix

package state

import (
	"fmt"
	"os"
	"syscall"
)

// private checks that the directory p is a directory of this user that no
// one else may write to: a snapshot another user could plant would steer
// how edits are applied.
func private(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("state directory %s is not a directory; choose another", p)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("state directory %s belongs to another user (uid %d); choose a directory of your own", p, st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("state directory %s may be written by other users (mode %v); chmod 700 it or choose another", p, fi.Mode().Perm())
	}
	return nil
}
