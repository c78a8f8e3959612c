//go:build linux

package workspace

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every method that takes a caller's path refuses the paths no caller may
// name, whoever the caller is: a temp file's name (however it is spelled),
// a path over MaxPathBytes, one over MaxPathDepth. Nothing on disk changes,
// and paths just inside the limits are ordinary.
func TestNoCallerNamesTempFilesOrOversizedPaths(t *testing.T) {
	t.Parallel()
	const temp = ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp"
	refused := []struct{ name, path string }{
		{"a temp file's name", temp},
		{"a temp file's name in a directory", "src/" + temp},
		{"a temp file's name spelled with ./ and ..", "./src/../" + temp},
		{"a path over the length limit", strings.Repeat(strings.Repeat("a", 250)+"/", MaxPathBytes/251+1) + "f"},
		{"a path over the depth limit", strings.Repeat("d/", MaxPathDepth) + "f"},
	}
	methods := []struct {
		name string
		call func(w *Workspace, p string) error
	}{
		{"Rel", func(w *Workspace, p string) error { _, err := w.Rel(p); return err }},
		{"Resolve", func(w *Workspace, p string) error { _, _, err := w.Resolve(p); return err }},
		{"Stat", func(w *Workspace, p string) error { _, _, err := w.Stat(p); return err }},
		{"FileVersion", func(w *Workspace, p string) error { _, err := w.FileVersion(p); return err }},
		{"ReadFile", func(w *Workspace, p string) error { _, err := w.ReadFile(p); return err }},
		{"WriteFile", func(w *Workspace, p string) error {
			_, err := w.WriteFile(p, []byte("pwned\n"), WriteOptions{})
			return err
		}},
		{"CheckWrite", func(w *Workspace, p string) error { return w.CheckWrite(p, []byte("pwned\n"), WriteOptions{}) }},
		{"Stage", func(w *Workspace, p string) error {
			s, err := w.Stage(p, []byte("pwned\n"), WriteOptions{})
			if err == nil {
				w.Discard(s)
			}
			return err
		}},
		{"Entry", func(w *Workspace, p string) error { _, _, _, err := w.Entry(p); return err }},
	}
	for _, m := range methods {
		for _, r := range refused {
			t.Run(m.name+" refuses "+r.name, func(t *testing.T) {
				t.Parallel()
				w, root, outside := newWS(t)
				mustWrite(t, filepath.Join(root, temp), "staged\n", 0o644)
				mustWrite(t, filepath.Join(root, "src", temp), "staged\n", 0o644)
				before := snapshot(t, root, outside)
				assertErr(t, m.call(w, r.path), ErrInvalidPath)
				assertSameSnapshot(t, before, snapshot(t, root, outside))
			})
		}
	}
	t.Run("paths at the limits are ordinary", func(t *testing.T) {
		t.Parallel()
		w, _, _ := newWS(t)
		for _, p := range []string{
			strings.Repeat("d/", MaxPathDepth-1) + "f",
			strings.Repeat(strings.Repeat("a", 250)+"/", 15) + strings.Repeat("b", MaxPathBytes-15*251),
		} {
			if _, err := w.Rel(p); err != nil {
				t.Errorf("Rel of a %d-byte path of %d components: %v", len(p), strings.Count(p, "/")+1, err)
			}
		}
	})
}
