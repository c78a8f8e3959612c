//go:build unix

package state

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A lock's release drops it even while another descriptor of its open
// file is open, as one is in a child process started at that moment until
// the child runs its program: the next LockFile gets it.
func TestALockIsDroppedWhileACopyOfItsDescriptorIsOpen(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	release, err := lockOpen(p, f)
	if err != nil {
		t.Fatal(err)
	}
	// The copy a fork makes: another descriptor of the same open file.
	dup, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(dup)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	again, err := LockFile(p)
	if err != nil {
		t.Fatalf("the lock is still held after its release: %v", err)
	}
	if err := again(); err != nil {
		t.Fatal(err)
	}
}
