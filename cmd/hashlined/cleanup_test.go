//go:build unix

package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/workspace"
)

func TestSweepTempRemovesOnlyStaleTempFiles(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	started := time.Now()
	old := started.Add(-time.Hour)
	files := map[string]struct {
		stale  bool // mtime before the start
		remove bool
	}{
		".hashline-AAAAAAAAAAAAAAAAAAAAAAAAAA.tmp":          {stale: true, remove: true},
		"deep/dir/.hashline-BBBBBBBBBBBBBBBBBBBBBBBBBB.tmp": {stale: true, remove: true},
		".hashline-CCCCCCCCCCCCCCCCCCCCCCCCCC.tmp":          {stale: false, remove: false}, // a write in progress
		"keep.txt":             {stale: true, remove: false},
		".hashline-.tmp":       {stale: true, remove: false}, // not a name WriteFile makes
		"x.hashline-DDDDD.tmp": {stale: true, remove: false},
	}
	for name, f := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		age(t, p, f.stale, started)
	}
	// A link and a directory with temp names, and a temp file outside
	// reached through a linked directory: none of them is touched.
	victim := filepath.Join(outside, ".hashline-EEEEEEEEEEEEEEEEEEEEEEEEEE.tmp")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(victim, old, old)
	if err := os.Symlink(victim, filepath.Join(root, ".hashline-FFFFFFFFFFFFFFFFFFFFFFFFFF.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, ".hashline-GGGGGGGGGGGGGGGGGGGGGGGGGG.tmp"), 0o755); err != nil {
		t.Fatal(err)
	}

	remove := map[string]bool{}
	for name, f := range files {
		remove[name] = f.remove
	}
	sweepAndCheck(t, root, started, root, remove)
	for _, p := range []string{victim, filepath.Join(root, ".hashline-FFFFFFFFFFFFFFFFFFFFFFFFFF.tmp"), filepath.Join(root, ".hashline-GGGGGGGGGGGGGGGGGGGGGGGGGG.tmp")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was touched: %v", p, err)
		}
	}
}

// A crash on a filesystem without a journal can leave a spare's name on
// disk after the rename that moved it into the tree: the sweep must not
// free the file the tree names, whether the spare directory is the root's
// or a nested workspace root's (another server serving sub/), and whether
// the walk reaches the tree's name before or after the spare directory.
func TestSweepTempKeepsASpareTheTreeNamesToo(t *testing.T) {
	for _, parent := range []string{".", "sub"} {
		t.Run("spares in "+parent, func(t *testing.T) {
			root := t.TempDir()
			started := time.Now()
			spares := filepath.Join(root, parent, workspace.SpareDir)
			if err := os.MkdirAll(spares, 0o700); err != nil {
				t.Fatal(err)
			}
			// "a/" is walked before "sub/", "sub/src/" after its spares.
			early, late := filepath.Join(root, "a", "early.txt"), filepath.Join(root, "sub", "src", "late.txt")
			for _, p := range []string{early, late} {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("the new content of "+filepath.Base(p)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			files := map[string]struct {
				content string
				link    string // another name of this tree file
				hold    bool   // a running server's spare (locked)
				stale   bool
				remove  bool
			}{
				".hashline-EMPTYAAAAAAAAAAAAAAAAAAAAA.tmp": {stale: true, remove: true},
				".hashline-KILLEDBBBBBBBBBBBBBBBBBBBB.tmp": {content: "half", stale: true, remove: true},
				".hashline-TWICECCCCCCCCCCCCCCCCCCCCC.tmp": {link: early, stale: true, remove: false},
				".hashline-TWICEFFFFFFFFFFFFFFFFFFFFF.tmp": {link: late, stale: true, remove: false},
				".hashline-LIVEDDDDDDDDDDDDDDDDDDDDDD.tmp": {stale: false, remove: false},
				".hashline-HELDEEEEEEEEEEEEEEEEEEEEEE.tmp": {hold: true, stale: true, remove: false},
				".gitignore": {content: "*\n", stale: true, remove: false},
			}
			for name, f := range files {
				p := filepath.Join(spares, name)
				var err error
				if f.link != "" {
					err = os.Link(f.link, p)
				} else {
					err = os.WriteFile(p, []byte(f.content), 0o600)
				}
				if err != nil {
					t.Fatal(err)
				}
				age(t, p, f.stale, started)
				if f.hold {
					h, err := os.Open(p)
					if err != nil {
						t.Fatal(err)
					}
					defer h.Close()
					if err := syscall.Flock(int(h.Fd()), syscall.LOCK_EX); err != nil {
						t.Fatal(err)
					}
				}
			}
			remove := map[string]bool{}
			for name, f := range files {
				remove[name] = f.remove
			}
			sweepAndCheck(t, root, started, spares, remove)
			for _, p := range []string{early, late} {
				if b, err := os.ReadFile(p); err != nil || string(b) != "the new content of "+filepath.Base(p) {
					t.Errorf("%s: %q, %v", p, b, err)
				}
			}
		})
	}
}

// sweepAndCheck sweeps root as a server started at started would, and
// checks which of the files in dir are gone.
func sweepAndCheck(t *testing.T, root string, started time.Time, dir string, remove map[string]bool) {
	t.Helper()
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sweepTemp(context.Background(), r, started, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for name, want := range remove {
		_, err := os.Stat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != want {
			t.Errorf("%s: removed = %v, want %v", name, gone, want)
		}
	}
}

// age dates the file p an hour before started if stale, else a second
// after it: set explicitly, since a new file's time may be a clock tick
// behind time.Now.
func age(t *testing.T, p string, stale bool, started time.Time) {
	t.Helper()
	mt := started.Add(time.Second)
	if stale {
		mt = started.Add(-time.Hour)
	}
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
}
