//go:build linux

package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// Every path that reaches one file must get one key, whether or not it
// goes through a link, and the key of a plain path must be the file's
// resolved path (what filepath.EvalSymlinks gives).
func TestLockKeyNamesTheFileReached(t *testing.T) {
	_, root, _ := newWS(t)
	// The workspace is opened through a link to its root, so keys must be
	// built on the resolved root, not on the path it was opened by.
	via := filepath.Join(filepath.Dir(root), "via")
	if err := os.Symlink(root, via); err != nil {
		t.Fatal(err)
	}
	w, err := Open(via)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	mustWrite(t, filepath.Join(root, "d", "f.go"), "x\n", 0o644)
	if err := os.Symlink("f.go", filepath.Join(root, "d", "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d", filepath.Join(root, "dl")); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, "d", "f.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"d/f.go", "d/link.go", "dl/f.go", "dl/link.go", "./d/../d/f.go"} {
		if got := w.LockKey(rel); got != real {
			t.Errorf("LockKey(%q) = %q, want %q", rel, got, real)
		}
	}
	// A file not there yet is keyed by its resolved directory, through a
	// link or not.
	want := filepath.Join(filepath.Dir(real), "new.go")
	for _, rel := range []string{"d/new.go", "dl/new.go"} {
		if got := w.LockKey(rel); got != want {
			t.Errorf("LockKey(%q) = %q, want %q", rel, got, want)
		}
	}
	// So is one whose directories are not there yet either: its nearest
	// existing directory, resolved, and the missing rest.
	want = filepath.Join(filepath.Dir(real), "x", "y", "new.go")
	for _, rel := range []string{"d/x/y/new.go", "dl/x/y/new.go"} {
		if got := w.LockKey(rel); got != want {
			t.Errorf("LockKey(%q) = %q, want %q", rel, got, want)
		}
	}
}
