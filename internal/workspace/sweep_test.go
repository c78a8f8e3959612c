//go:build unix

package workspace

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
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

// A user's files that look like temp files, all older than the start, are
// not the server's to remove: only the exact form is swept.
func TestSweepTempKeepsUserFilesThatLookLikeTempFiles(t *testing.T) {
	root := t.TempDir()
	started := time.Now()
	remove := map[string]bool{
		".hashline-QRSTUVWXYZ234567ABCDEFGHIJ.tmp":     true, // the server's
		"src/.hashline-QRSTUVWXYZ234567ABCDEFGHIJ.tmp": true,
		".hashline-notes.tmp":                          false,
		".hashline-.tmp":                               false,
		".hashline-ABC.tmp":                            false,
		".hashline-QRSTUVWXYZ234567ABCDEFGHI.tmp":      false, // 25
		".hashline-QRSTUVWXYZ234567ABCDEFGHIJK.tmp":    false, // 27
		".hashline-qrstuvwxyz234567abcdefghij.tmp":     false, // lower case
		".hashline-0123456789ABCDEFGHIJKLMNOP.tmp":     false, // 0, 1, 8, 9
		".hashline-QRSTUVWXYZ234567ABCDEFGHIJ.tmp~":    false,
		"src/.hashline-notes.tmp":                      false,
	}
	for name := range remove {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("the user's "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		age(t, p, true, started)
	}
	sweepAndCheck(t, root, started, root, remove)
	for name, gone := range remove {
		if b, err := os.ReadFile(filepath.Join(root, name)); !gone && (err != nil || string(b) != "the user's "+name) {
			t.Errorf("%s: %q, %v; want it kept as it was", name, b, err)
		}
	}
}

// sweepAndCheck sweeps root as a server started at started would, and
// checks which of the files in dir are gone.
func sweepAndCheck(t *testing.T, root string, started time.Time, dir string, remove map[string]bool) {
	t.Helper()
	w, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SweepTemp(context.Background(), started, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
