package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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
		mt := started.Add(time.Second)
		if f.stale {
			mt = old
		}
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
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

	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sweepTemp(context.Background(), r, started, slog.New(slog.NewTextHandler(io.Discard, nil)))

	for name, f := range files {
		_, err := os.Stat(filepath.Join(root, name))
		if gone := os.IsNotExist(err); gone != f.remove {
			t.Errorf("%s: removed = %v, want %v", name, gone, f.remove)
		}
	}
	for _, p := range []string{victim, filepath.Join(root, ".hashline-FFFFFFFFFFFFFFFFFFFFFFFFFF.tmp"), filepath.Join(root, ".hashline-GGGGGGGGGGGGGGGGGGGGGGGGGG.tmp")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was touched: %v", p, err)
		}
	}
}

// A crash on a filesystem without a journal can leave a spare's name on
// disk after the rename that moved it into the tree: the sweep must not
// free the file the tree names.
func TestSweepTempKeepsASpareTheTreeNamesToo(t *testing.T) {
	root := t.TempDir()
	started := time.Now()
	old := started.Add(-time.Hour)
	spares := filepath.Join(root, workspace.SpareDir)
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(spares, 0o700); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(root, "src", "a.txt")
	if err := os.WriteFile(tree, []byte("the new content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]struct {
		content string
		link    bool // another name of src/a.txt
		stale   bool
		remove  bool
	}{
		".hashline-EMPTYAAAAAAAAAAAAAAAAAAAAA.tmp": {stale: true, remove: true},
		".hashline-KILLEDBBBBBBBBBBBBBBBBBBBB.tmp": {content: "half", stale: true, remove: true},
		".hashline-TWICECCCCCCCCCCCCCCCCCCCCC.tmp": {link: true, stale: true, remove: false},
		".hashline-LIVEDDDDDDDDDDDDDDDDDDDDDD.tmp": {stale: false, remove: false},
		".gitignore": {content: "*\n", stale: true, remove: false},
	}
	for name, f := range files {
		p := filepath.Join(spares, name)
		var err error
		if f.link {
			err = os.Link(tree, p)
		} else {
			err = os.WriteFile(p, []byte(f.content), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.stale {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sweepTemp(context.Background(), r, started, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for name, f := range files {
		_, err := os.Stat(filepath.Join(spares, name))
		if gone := os.IsNotExist(err); gone != f.remove {
			t.Errorf("%s: removed = %v, want %v", name, gone, f.remove)
		}
	}
	if b, err := os.ReadFile(tree); err != nil || string(b) != "the new content\n" {
		t.Errorf("src/a.txt: %q, %v", b, err)
	}
}
