package workspace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// primeSpares gives w a pool of spare files (as WithSpareFiles would, had
// w been opened with it), fills it and returns the spares' inode numbers.
func primeSpares(t *testing.T, w *Workspace) map[uint64]bool {
	t.Helper()
	if w.spare == nil {
		w.spare = newSpares()
	}
	w.spare.mu.Lock()
	w.spare.start(w)
	w.spare.mu.Unlock()
	return readySpares(t, w)
}

// readySpares waits until the worker has made every spare and removed
// every replaced file, and returns the spares' inode numbers.
func readySpares(t *testing.T, w *Workspace) map[uint64]bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := w.spare
		s.mu.Lock()
		names, used, state := slices.Clone(s.ready), len(s.used), s.state
		s.mu.Unlock()
		if state == spareOff {
			t.Fatal("the spare files are off")
		}
		if len(names) == spareFiles && used == 0 {
			inodes := map[uint64]bool{}
			for _, name := range names {
				inodes[inode(t, filepath.Join(w.dir, SpareDir, name))] = true
			}
			return inodes
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spares ready and %d to remove after 10s, want %d and 0", len(names), used, spareFiles)
		}
		time.Sleep(time.Millisecond)
	}
}

// assertSparesClean waits for the worker and checks that the spare
// directory holds the .gitignore and the ready spares, all empty: no new
// content and no replaced file left in it.
func assertSparesClean(t *testing.T, w *Workspace) {
	t.Helper()
	readySpares(t, w)
	w.spare.mu.Lock()
	ready := slices.Clone(w.spare.ready)
	w.spare.mu.Unlock()
	entries, err := os.ReadDir(filepath.Join(w.dir, SpareDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		switch {
		case err != nil:
			t.Error(err)
		case e.Name() == ".gitignore":
		case !slices.Contains(ready, e.Name()):
			t.Errorf("%s in the spare directory is not a ready spare (%d bytes)", e.Name(), fi.Size())
		case fi.Size() != 0 || !fi.Mode().IsRegular():
			t.Errorf("spare %s is %v with %d bytes, want an empty file", e.Name(), fi.Mode(), fi.Size())
		}
	}
	if len(entries) != spareFiles+1 {
		t.Errorf("%d entries in the spare directory, want %d spares and .gitignore", len(entries), spareFiles)
	}
}

func TestWriteFileThroughSpare(t *testing.T) {
	for _, fsync := range []bool{true, false} {
		t.Run(fmt.Sprintf("fsync=%v", fsync), func(t *testing.T) {
			w, root, _ := newWS(t, WithSpareFiles(true), WithFsync(fsync))
			p := filepath.Join(root, "dir", "a.txt")
			mustWrite(t, p, "one\n", 0o640)
			if _, err := w.WriteFile("dir/new.txt", []byte("new\n"), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, SpareDir)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("spare directory after creating a file: %v, want none yet", err)
			}
			// The first replace finds no spare and starts making them.
			if _, err := w.WriteFile("dir/a.txt", []byte("two\n"), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			spares := readySpares(t, w)
			ignore, err := os.ReadFile(filepath.Join(root, SpareDir, ".gitignore"))
			if err != nil || string(ignore) != spareIgnore {
				t.Fatalf(".gitignore = %q, %v", ignore, err)
			}
			reader, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer reader.Close()

			res, err := w.WriteFile("dir/a.txt", []byte("three\n"), WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := inode(t, p); !spares[got] {
				t.Errorf("the file's inode %d is none of the spares' %v", got, spares)
			}
			if b, _ := os.ReadFile(p); string(b) != "three\n" || res.Version != Version(b) || res.Created {
				t.Errorf("file %q, result %+v", b, res)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
			}
			// A reader of the replaced file keeps it whole, as after a rename.
			if b, err := io.ReadAll(reader); err != nil || string(b) != "two\n" {
				t.Errorf("reader of the replaced file got %q, %v", b, err)
			}
			assertSparesClean(t, w)
			assertNoTemp(t, root)

			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, SpareDir)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("spare directory after Close: %v, want removed", err)
			}
		})
	}
}

// A spare directory that holds something else (another server's spares)
// is left to its owner by Close.
func TestCloseLeavesASharedSpareDirectory(t *testing.T) {
	w, root, _ := newWS(t, WithSpareFiles(true))
	primeSpares(t, w)
	other := filepath.Join(root, SpareDir, tempPrefix+"other"+tempSuffix)
	mustWrite(t, other, "", 0o600)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, SpareDir))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{".gitignore", filepath.Base(other)}; !slices.Equal(names, want) {
		t.Errorf("spare directory after Close holds %q, want %q", names, want)
	}
}

// The spare directory removed under a running workspace (git clean -x):
// writes go on, the usual way.
func TestWriteFileAfterSpareDirectoryRemoved(t *testing.T) {
	w, root, _ := newWS(t, WithSpareFiles(true))
	mustWrite(t, filepath.Join(root, "a.txt"), "one\n", 0o644)
	primeSpares(t, w)
	if err := os.RemoveAll(filepath.Join(root, SpareDir)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		text := fmt.Sprintf("write %d\n", i)
		if _, err := w.WriteFile("a.txt", []byte(text), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != text {
			t.Fatalf("file holds %q, want %q", b, text)
		}
	}
	assertNoTemp(t, root)
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.spare.mu.Lock()
		off := w.spare.state == spareOff
		w.spare.mu.Unlock()
		if off {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the spare files are still on without their directory")
		}
		time.Sleep(time.Millisecond)
	}
}

// What is in the target's place when the spare is exchanged decides the
// outcome, as it would for a rename.
func TestWriteFileThroughSpareRaces(t *testing.T) {
	tests := []struct {
		name  string
		race  func(t *testing.T, target string)
		err   error
		check func(t *testing.T, target string)
		// respawned: the content was written again, through a temp file.
		respawned bool
	}{
		{name: "a directory put in the file's place stays, and the write fails",
			race: func(t *testing.T, target string) {
				if err := os.Remove(target); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(target, "inner"), "x", 0o644)
			},
			err: ErrNotRegular,
			check: func(t *testing.T, target string) {
				if b, err := os.ReadFile(filepath.Join(target, "inner")); err != nil || string(b) != "x" {
					t.Errorf("directory content: %q, %v", b, err)
				}
			}},
		{name: "a file deleted meanwhile is created again",
			race: func(t *testing.T, target string) {
				if err := os.Remove(target); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, target string) {
				if b, err := os.ReadFile(target); err != nil || string(b) != "new\n" {
					t.Errorf("file holds %q, %v", b, err)
				}
			}},
		{name: "a spare removed meanwhile (another server's sweep) is written again",
			race: func(t *testing.T, target string) {
				spares, _ := filepath.Glob(filepath.Join(filepath.Dir(target), SpareDir, tempPrefix+"*"))
				for _, p := range spares {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				}
			},
			check: func(t *testing.T, target string) {
				if b, err := os.ReadFile(target); err != nil || string(b) != "new\n" {
					t.Errorf("file holds %q, %v", b, err)
				}
			},
			respawned: true},
		{name: "a file put in its place is replaced",
			race: func(t *testing.T, target string) {
				if err := os.Remove(target); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, target, "theirs\n", 0o600)
			},
			check: func(t *testing.T, target string) {
				if b, err := os.ReadFile(target); err != nil || string(b) != "new\n" {
					t.Errorf("file holds %q, %v", b, err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, root, _ := newWS(t)
			target := filepath.Join(root, "t.txt")
			mustWrite(t, target, "old\n", 0o644)
			spares := primeSpares(t, w)
			testHookBeforeRename = func(string) error { tt.race(t, target); return nil }
			defer func() { testHookBeforeRename = nil }()
			_, err := w.WriteFile("t.txt", []byte("new\n"), WriteOptions{})
			testHookBeforeRename = nil
			if tt.err != nil {
				assertErr(t, err, tt.err)
			} else if err != nil {
				t.Fatal(err)
			} else if !tt.respawned && !spares[inode(t, target)] {
				// (A respawned write's temp file may reuse a removed
				// spare's inode number: nothing to check there.)
				t.Error("the write did not go through a spare")
			}
			tt.check(t, target)
			assertNoTemp(t, root)
			if tt.respawned {
				return // the worker's list names the removed spares
			}
			assertSparesClean(t, w)
		})
	}
}
