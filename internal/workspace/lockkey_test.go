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

// A link to a directory (or file) that does not exist yet is followed to
// its target, as every access follows it, so the file a path reaches
// through it has the key of the target's own spelling; and every key is
// the resolved root joined with the path Resolve gives.
func TestLockKeyFollowsLinksToMissingTargets(t *testing.T) {
	_, root, _ := newWS(t)
	w, err := Open(root, WithNameFold(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(root, "sub", "keep"), "x\n", 0o644)
	for name, target := range map[string]string{
		"ln":      "d",                      // a missing directory
		"deep":    "d/e",                    // two levels missing
		"chain":   "ln",                     // a link to a link to a missing directory
		"abs":     filepath.Join(real, "d"), // absolute, inside the root
		"back":    "sub/../d",               // climbing back through an existing directory
		"ln.txt":  "d.txt",                  // a missing file
		"sub/up":  "../d",                   // relative to the link's own directory
		"loop":    "loop",                   // refused by every access: keyed as written
		"outside": "../../x",                // likewise
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	key := func(rel string) string { return filepath.Join(real, filepath.FromSlash(rel)) }
	for _, tt := range []struct{ rel, want string }{
		{"ln/f.txt", "d/f.txt"},
		{"ln", "d"},
		{"chain/f.txt", "d/f.txt"},
		{"abs/f.txt", "d/f.txt"},
		{"back/f.txt", "d/f.txt"},
		{"sub/up/f.txt", "d/f.txt"},
		{"deep/f.txt", "d/e/f.txt"},
		{"ln.txt", "d.txt"},
		{"loop/f.txt", "loop/f.txt"},
		{"outside/f.txt", "outside/f.txt"},
	} {
		if got := w.LockKey(tt.rel); got != key(tt.want) {
			t.Errorf("LockKey(%q) = %q, want %q", tt.rel, got, key(tt.want))
		}
		if target, _, err := w.Resolve(tt.rel); err == nil && key(target) != w.LockKey(tt.rel) {
			t.Errorf("LockKey(%q) = %q, but Resolve reaches %q", tt.rel, w.LockKey(tt.rel), target)
		}
	}
}
