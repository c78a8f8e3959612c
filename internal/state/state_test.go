package state_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/state"
)

// tree lists every path under root, to check that nothing was created.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenRefusesADirectoryInsideTheWorkspace(t *testing.T) {
	outside := t.TempDir()
	root := filepath.Join(outside, "work")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(outside, "link-to-sub")
	rootLink := filepath.Join(outside, "link-to-root")
	if runtime.GOOS != "windows" {
		if err := os.Symlink(filepath.Join(root, "sub"), link); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(root, rootLink); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, dir, root string
		symlinks        bool
	}{
		{name: "the root itself", dir: root, root: root},
		{name: "an existing directory of the root", dir: filepath.Join(root, "sub"), root: root},
		{name: "a directory still to be made in the root", dir: filepath.Join(root, ".hashline", "state"), root: root},
		{name: "a path with .. that lands in the root", dir: filepath.Join(outside, "x", "..", "work", "state"), root: root},
		{name: "a symlink outside that leads into the root", dir: filepath.Join(link, "state"), root: root, symlinks: true},
		{name: "the root named through a symlink", dir: filepath.Join(root, "state"), root: rootLink, symlinks: true},
		{name: "inside the root through a symlink to it", dir: filepath.Join(rootLink, "state"), root: root, symlinks: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.symlinks && runtime.GOOS == "windows" {
				t.Skip("symlinks need privileges on Windows")
			}
			before := tree(t, root)
			d, err := state.Open(tt.dir, tt.root)
			if !errors.Is(err, state.ErrInsideRoot) || d != nil {
				t.Fatalf("Open = %v, %v; want ErrInsideRoot", d, err)
			}
			if !strings.Contains(err.Error(), "outside") {
				t.Errorf("the error does not say what to do: %v", err)
			}
			if after := tree(t, root); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("the workspace changed:\n%v\nbefore:\n%v", after, before)
			}
		})
	}
	t.Run("a sibling of the root is fine", func(t *testing.T) {
		if _, err := state.Open(filepath.Join(outside, "work-state"), root); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a parent of the root is fine", func(t *testing.T) {
		if _, err := state.Open(outside, root); err != nil {
			t.Fatal(err)
		}
	})
}

func TestOpenMakesAPrivateDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(t.TempDir(), "a", "b")
	d, err := state.Open(dir, root)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := d.Sub("snapshots")
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for _, p := range []string{dir, sub} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want mode 0700", p, fi.Mode(), err)
		}
	}
}

func TestOpenRefusesADirectoryOthersMayWrite(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	root := t.TempDir()
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := state.Open(dir, root); err == nil || !strings.Contains(err.Error(), "other users") {
		t.Errorf("Open of a world-writable directory = %v, want a refusal", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := state.Open(file, root); err == nil {
		t.Error("Open of a file succeeded")
	}
	// A symlink to a private directory is followed.
	private := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	d, err := state.Open(link, root)
	if err != nil {
		t.Fatal(err)
	}
	if real, _ := filepath.EvalSymlinks(private); d.Path() != real {
		t.Errorf("Path = %s, want the directory the link leads to, %s", d.Path(), real)
	}
}

func TestDefaultDirIsPerRootUnderTheUsersStateDirectory(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", home)
	a, b := t.TempDir(), t.TempDir()
	da, err := state.DefaultDir(a)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := state.DefaultDir(b)
	if da == db || filepath.Dir(da) != filepath.Join(home, "hashline") || filepath.Dir(db) != filepath.Join(home, "hashline") {
		t.Errorf("DefaultDir = %s and %s, want two directories under %s", da, db, filepath.Join(home, "hashline"))
	}
	if again, _ := state.DefaultDir(a + string(filepath.Separator) + "."); again != da {
		t.Errorf("another spelling of the root gives %s, want %s", again, da)
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(a, link); err != nil {
			t.Fatal(err)
		}
		if viaLink, _ := state.DefaultDir(link); viaLink != da {
			t.Errorf("the root through a symlink gives %s, want %s", viaLink, da)
		}
	}
	// Open with no directory opens the default.
	d, err := state.Open("", a)
	if err != nil {
		t.Fatal(err)
	}
	if real, _ := filepath.EvalSymlinks(da); d.Path() != real {
		t.Errorf("Open(\"\") = %s, want %s", d.Path(), real)
	}
}
