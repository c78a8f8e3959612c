//go:build unix

package grep

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"
)

// withTimeout fails the test if f does not return in time (a FIFO opened
// for reading blocks until a writer comes).
func withTimeout(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out: something blocked")
	}
}

func TestFIFOIsNeverOpened(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "x\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("fifo", filepath.Join(dir, "link-to-fifo")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", "fifo", "link-to-fifo"} {
		for name, fsys := range map[string]fs.FS{"os.Root": rootFS(t, dir), "generic": plainFS{rootFS(t, dir)}} {
			withTimeout(t, func() {
				files, _, err := collect(t, fsys, Options{Pattern: "x", Path: path})
				if err != nil {
					t.Errorf("%s, Path %q: %v", name, path, err)
				}
				want := []string{"a.txt"}
				if path != "" {
					want = nil
				}
				if got := paths(files); !reflect.DeepEqual(got, want) {
					t.Errorf("%s, Path %q: got %q, want %q", name, path, got, want)
				}
			})
		}
	}
}
