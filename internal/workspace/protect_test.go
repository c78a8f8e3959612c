//go:build linux

package workspace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadOnlyFilesStayWhateverTheChange checks the one rule of MayChange
// on every change that replaces or removes a file: a file with no write bit
// is neither replaced (a write, a move onto it), deleted, nor moved away,
// and the disk is as it was, whoever runs the test (root too).
func TestReadOnlyFilesStayWhateverTheChange(t *testing.T) {
	tests := []struct {
		name   string
		change func(w *Workspace) error
	}{
		{"a write over it is refused", func(w *Workspace) error {
			_, err := w.WriteFile("ro.txt", []byte("new\n"), WriteOptions{})
			return err
		}},
		{"a delete of it is refused", func(w *Workspace) error {
			rel, target, _, err := w.Entry("ro.txt")
			if err != nil {
				return err
			}
			return w.Remove(rel, target)
		}},
		{"a move of it is refused", func(w *Workspace) error {
			rel, from, _, err := w.Entry("ro.txt")
			if err != nil {
				return err
			}
			_, to, _, err := w.Entry("elsewhere.txt")
			if err != nil {
				return err
			}
			return w.Rename(rel, from, to, false)
		}},
		{"a move onto it is refused", func(w *Workspace) error {
			rel, from, _, err := w.Entry("rw.txt")
			if err != nil {
				return err
			}
			_, to, _, err := w.Entry("ro.txt")
			if err != nil {
				return err
			}
			return w.Rename(rel, from, to, true)
		}},
		{"MayChange says so before any change", func(w *Workspace) error {
			_, target, _, err := w.Entry("ro.txt")
			if err != nil {
				return err
			}
			return w.MayChange("delete", "ro.txt", target)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, root, _ := newWS(t)
			mustWrite(t, filepath.Join(root, "ro.txt"), "keep me\n", 0o444)
			mustWrite(t, filepath.Join(root, "rw.txt"), "mine\n", 0o644)
			before := snapshot(t, root)
			err := tt.change(w)
			if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), `"ro.txt"`) {
				t.Fatalf("err = %v, want ErrNotWritable naming ro.txt as read-only", err)
			}
			assertSameSnapshot(t, before, snapshot(t, root))
		})
	}
}

// TestMayChangeLeavesOtherEntriesToTheCaller checks that only regular files
// are judged: nothing there, a symbolic link (itself the entry a delete
// removes) and a directory pass, and a writable file does.
func TestMayChangeLeavesOtherEntriesToTheCaller(t *testing.T) {
	w, root, _ := newWS(t)
	mustWrite(t, filepath.Join(root, "ro.txt"), "x\n", 0o444)
	mustWrite(t, filepath.Join(root, "d", "rw.txt"), "x\n", 0o644)
	mustSymlink(t, "ro.txt", filepath.Join(root, "link"))
	for _, p := range []string{"missing.txt", "link", "d", "d/rw.txt"} {
		if err := w.MayChange("delete", p, p); err != nil {
			t.Errorf("MayChange(%s) = %v, want nil", p, err)
		}
	}
}
