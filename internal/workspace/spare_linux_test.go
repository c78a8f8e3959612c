package workspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// readySpares waits until the worker has made every spare, and returns
// their inode numbers.
func readySpares(t *testing.T, w *Workspace) map[uint64]bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := w.spare
		s.mu.Lock()
		ready, state := slices.Clone(s.ready), s.state
		s.mu.Unlock()
		if state == spareOff {
			t.Fatal("the spare files are off")
		}
		if len(ready) == spareFiles {
			inodes := map[uint64]bool{}
			for _, sp := range ready {
				inodes[sp.ino] = true
			}
			return inodes
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spares ready after 10s, want %d", len(ready), spareFiles)
		}
		time.Sleep(time.Millisecond)
	}
}

// served is the number of writes w has done through a spare.
func served(w *Workspace) int {
	if w.spare == nil {
		return 0
	}
	w.spare.mu.Lock()
	defer w.spare.mu.Unlock()
	return w.spare.served
}

// spareState is the pool's state.
func stateOf(w *Workspace) spareState {
	w.spare.mu.Lock()
	defer w.spare.mu.Unlock()
	return w.spare.state
}

// assertSparesClean waits for the worker and checks that the spare
// directory holds the .gitignore and the ready spares, all empty: no new
// content left in it.
func assertSparesClean(t *testing.T, w *Workspace) {
	t.Helper()
	readySpares(t, w)
	var ready []string
	w.spare.mu.Lock()
	for _, sp := range w.spare.ready {
		ready = append(ready, sp.name)
	}
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
	w, root, _ := newWS(t, WithSpareFiles(true))
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
	if fi, err := os.Stat(filepath.Join(root, SpareDir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("spare directory: %v, %v; want mode 0700", fi, err)
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
	if got := inode(t, p); !spares[got] || served(w) != 1 {
		t.Errorf("the file's inode %d, spares' %v, %d writes through a spare; want one of them, 1", got, spares, served(w))
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
}

// Without fsync a spare saves nothing, so none is made.
func TestWriteFileWithoutFsyncUsesNoSpares(t *testing.T) {
	w, root, _ := newWS(t, WithSpareFiles(true), WithFsync(false))
	for i := range 3 {
		if _, err := w.WriteFile("a.txt", fmt.Appendf(nil, "%d\n", i), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(root, SpareDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("spare directory with fsync off: %v, want none", err)
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

// Empty spares no server holds (a killed server's) are removed when the
// directory is opened; held ones (another server's) and files with content
// are not.
func TestOpenSpareDirRemovesEmptyLeftovers(t *testing.T) {
	w, root, _ := newWS(t)
	dir := filepath.Join(root, SpareDir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	empty, full, held := filepath.Join(dir, tempPrefix+"EMPTY"+tempSuffix), filepath.Join(dir, tempPrefix+"FULL"+tempSuffix), filepath.Join(dir, tempPrefix+"HELD"+tempSuffix)
	mustWrite(t, empty, "", 0o600)
	mustWrite(t, full, "content\n", 0o600)
	mustWrite(t, held, "", 0o600)
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	primeSpares(t, w)
	for p, want := range map[string]bool{empty: false, full: true, held: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	if !SpareInUse(w.root, filepath.Join(SpareDir, filepath.Base(held))) || SpareInUse(w.root, filepath.Join(SpareDir, filepath.Base(full))) {
		t.Error("SpareInUse tells a held file from one not held wrongly")
	}
}

// Two servers on one root share the spare directory: the second one to
// open it leaves the first one's spares alone.
func TestSpareDirectorySharedByTwoServers(t *testing.T) {
	a, root, _ := newWS(t, WithSpareFiles(true))
	mustWrite(t, filepath.Join(root, "a.txt"), "old\n", 0o644)
	primeSpares(t, a)
	b, err := Open(root, WithSpareFiles(true))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	primeSpares(t, b)
	if _, err := a.WriteFile("a.txt", []byte("new\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if served(a) != 1 {
		t.Error("the first server's write did not go through its spare")
	}
	readySpares(t, a) // the one it took is made again after the write
	entries, _ := os.ReadDir(filepath.Join(root, SpareDir))
	if len(entries) != 2*spareFiles+1 {
		t.Errorf("%d entries in the shared spare directory, want %d spares and .gitignore", len(entries), 2*spareFiles)
	}
}

// A default ACL the root gives the spare directory is removed, so that
// spares have no ACL that a file made beside the target would not have.
func TestSpareDirectoryDropsTheRootsDefaultACL(t *testing.T) {
	w, root, _ := newWS(t)
	mustWrite(t, filepath.Join(root, "sub", "a.txt"), "old\n", 0o640)
	if err := unix.Setxattr(root, "system.posix_acl_default", defaultACL(), 0); err != nil {
		t.Skipf("cannot set a default ACL here: %v", err)
	}
	primeSpares(t, w)
	if _, err := unix.Getxattr(filepath.Join(root, SpareDir), "system.posix_acl_default", nil); !errors.Is(err, unix.ENODATA) {
		t.Errorf("the spare directory's default ACL: %v, want none", err)
	}
	if _, err := w.WriteFile("sub/a.txt", []byte("new\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if served(w) != 1 {
		t.Error("the write did not go through a spare")
	}
	if _, err := unix.Getxattr(filepath.Join(root, "sub", "a.txt"), "system.posix_acl_access", nil); !errors.Is(err, unix.ENODATA) {
		t.Errorf("the file's ACL: %v, want none", err)
	}
}

// defaultACL is a POSIX ACL xattr: version 2, then (tag, perm, id) entries
// for the owner (rwx), a named user 4242 (rwx), the group (r-x), the mask
// (rwx) and others (r-x).
func defaultACL() []byte {
	acl := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range [][3]uint32{{0x01, 7, 0xffffffff}, {0x02, 7, 4242}, {0x04, 5, 0xffffffff}, {0x10, 7, 0xffffffff}, {0x20, 5, 0xffffffff}} {
		acl = binary.LittleEndian.AppendUint16(acl, uint16(e[0]))
		acl = binary.LittleEndian.AppendUint16(acl, uint16(e[1]))
		acl = binary.LittleEndian.AppendUint32(acl, e[2])
	}
	return acl
}

// A spare directory others can write to, or that is not a directory, is
// not used: whoever can put files in it could have them renamed into the
// tree.
func TestSpareDirectoryNotTheServers(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T, dir string){
		"writable by others": func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		},
		"a file":    func(t *testing.T, dir string) { mustWrite(t, dir, "x", 0o600) },
		"a symlink": func(t *testing.T, dir string) { mustSymlink(t, "elsewhere", dir) },
	} {
		t.Run(name, func(t *testing.T) {
			w, root, _ := newWS(t, WithSpareFiles(true))
			setup(t, filepath.Join(root, SpareDir))
			mustWrite(t, filepath.Join(root, "a.txt"), "old\n", 0o644)
			writesWithoutSpares(t, w, root)
		})
	}
}

// writesWithoutSpares replaces a.txt three times, checks each write, and
// that the spare files went off without serving any.
func writesWithoutSpares(t *testing.T, w *Workspace, root string) {
	t.Helper()
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
	for stateOf(w) != spareOff {
		if time.Now().After(deadline) {
			t.Fatal("the spare files are still on")
		}
		time.Sleep(time.Millisecond)
	}
	if served(w) != 0 {
		t.Errorf("%d writes through a spare, want none", served(w))
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
	writesWithoutSpares(t, w, root)
}

// A directory with a default ACL gives new files their ACL, which a spare,
// made elsewhere, would not have: such a directory's files are written the
// usual way.
func TestWriteFileSkipsSpareUnderDefaultACL(t *testing.T) {
	w, root, _ := newWS(t)
	dir := filepath.Join(root, "acl")
	mustWrite(t, filepath.Join(dir, "a.txt"), "old\n", 0o644)
	if err := unix.Setxattr(dir, "system.posix_acl_default", defaultACL(), 0); err != nil {
		t.Skipf("cannot set a default ACL here: %v", err)
	}
	mustWrite(t, filepath.Join(root, "plain.txt"), "old\n", 0o644)
	primeSpares(t, w)
	if _, err := w.WriteFile("acl/a.txt", []byte("new\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if served(w) != 0 {
		t.Errorf("a file under a default ACL was written through a spare")
	}
	if _, err := w.WriteFile("plain.txt", []byte("new\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if served(w) != 1 {
		t.Errorf("a file without one was not") // the test's control
	}
}

// filledSpare is the one file in the spare directory that is not empty:
// the spare being written.
func filledSpare(t *testing.T, root string) string {
	t.Helper()
	spares, _ := filepath.Glob(filepath.Join(root, SpareDir, tempPrefix+"*"))
	var filled []string
	for _, p := range spares {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
			filled = append(filled, p)
		}
	}
	if len(filled) != 1 {
		t.Fatalf("%d spares with content, want 1", len(filled))
	}
	return filled[0]
}

// What is in the way when the spare is renamed into place decides the
// outcome, as it would for a temp file's rename.
func TestWriteFileThroughSpareRaces(t *testing.T) {
	tests := []struct {
		name  string
		race  func(t *testing.T, root, target string)
		err   error
		check func(t *testing.T, root, target string)
		// spared: the write went through the spare (else through a temp
		// file, after the spare could not be used).
		spared bool
	}{
		{name: "a directory put in the file's place stays, and the write fails",
			race: func(t *testing.T, _, target string) {
				if err := os.Remove(target); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(target, "inner"), "x", 0o644)
			},
			err: ErrNotRegular,
			check: func(t *testing.T, _, target string) {
				if b, err := os.ReadFile(filepath.Join(target, "inner")); err != nil || string(b) != "x" {
					t.Errorf("directory content: %q, %v", b, err)
				}
			}},
		{name: "a file deleted meanwhile is created again",
			race: func(t *testing.T, _, target string) {
				if err := os.Remove(target); err != nil {
					t.Fatal(err)
				}
			},
			spared: true},
		{name: "a file put in its place is replaced",
			race: func(t *testing.T, _, target string) {
				if err := os.Remove(target); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, target, "theirs\n", 0o600)
			},
			spared: true},
		{name: "a spare removed meanwhile: written again",
			race: func(t *testing.T, root, _ string) {
				if err := os.Remove(filledSpare(t, root)); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a spare replaced by a link to a file outside: written again, the outside file untouched",
			race: func(t *testing.T, root, _ string) {
				p := filledSpare(t, root)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(filepath.Join(filepath.Dir(root), "outside", "secret.txt"), p); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, root, _ string) {
				if b, _ := os.ReadFile(filepath.Join(filepath.Dir(root), "outside", "secret.txt")); string(b) != "secret\n" {
					t.Errorf("the outside file holds %q", b)
				}
				// The link is left in the spare directory, for the sweep.
				p := filledSpare(t, root)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a rename the filesystem refuses (EXDEV): written again",
			race: func(t *testing.T, _, _ string) {
				spareRename = func(int, string, int, string) error { return unix.EXDEV }
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, root, _ := newWS(t)
			target := filepath.Join(root, "t.txt")
			mustWrite(t, target, "old\n", 0o644)
			primeSpares(t, w)
			testHookBeforeRename = func(string) error { tt.race(t, root, target); return nil }
			defer func() { testHookBeforeRename, spareRename = nil, unix.Renameat }()
			_, err := w.WriteFile("t.txt", []byte("new\n"), WriteOptions{})
			testHookBeforeRename, spareRename = nil, unix.Renameat
			if tt.err != nil {
				assertErr(t, err, tt.err)
			} else if err != nil {
				t.Fatal(err)
			} else if b, _ := os.ReadFile(target); string(b) != "new\n" {
				t.Errorf("file holds %q", b)
			}
			if got := served(w) == 1; got != tt.spared {
				t.Errorf("written through the spare: %v, want %v", got, tt.spared)
			}
			if tt.check != nil {
				tt.check(t, root, target)
			}
			assertNoTemp(t, root)
			assertSparesClean(t, w)
		})
	}
}

// What a write through a spare leaves to do, freeing the replaced file and
// making the next spare, waits until the write is over: nothing of it runs
// beside the write, whose fsyncs a new spare's would delay.
func TestWriteFileLeavesItsBackgroundWorkForAfter(t *testing.T) {
	w, root, _ := newWS(t, WithSpareFiles(true))
	p := filepath.Join(root, "a.txt")
	mustWrite(t, p, "old\n", 0o644)
	primeSpares(t, w)
	old := inode(t, p)
	var later []func()
	testHookAfterWrite = func(fn func()) { later = append(later, fn) }
	defer func() { testHookAfterWrite = nil }()
	if _, err := w.WriteFile("a.txt", []byte("new\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if served(w) != 1 {
		t.Fatal("the write did not go through a spare")
	}
	w.spare.mu.Lock()
	ready := len(w.spare.ready)
	w.spare.mu.Unlock()
	if ready != spareFiles-1 || !heldInodes(t, "a.txt")[old] || len(later) != 2 {
		t.Fatalf("when the write returned: %d spares ready, replaced file held %v, %d things left for after; want %d, true, 2",
			ready, heldInodes(t, "a.txt")[old], len(later), spareFiles-1)
	}
	// A second write before that work runs does not ask for another refill.
	if _, err := w.WriteFile("a.txt", []byte("newer\n"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(later) != 3 {
		t.Fatalf("%d things left for after two writes, want 3 (two releases, one refill)", len(later))
	}
	for _, fn := range later {
		fn()
	}
	readySpares(t, w)
	if heldInodes(t, "a.txt")[old] {
		t.Error("the replaced file is still held after the work left for after ran")
	}
}

// Another server opening the shared directory can take a spare this one
// has just made, before it is locked, for a killed server's leftover: it
// removes the name, or holds the file's lock at that moment. The pool makes
// another spare in its place and stays on, and every spare it keeps still
// has its name.
func TestSpareLostBeforeItsLockIsMadeAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		other func(t *testing.T, dirFd int, name string)
	}{
		{"removed", func(_ *testing.T, dirFd int, name string) { removeStaleSpare(dirFd, name) }},
		{"locked while removed", func(t *testing.T, dirFd int, name string) {
			fd, err := unix.Openat(dirFd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(func() { _ = unix.Close(fd) })
			if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
				t.Error(err)
			}
			_ = unix.Unlinkat(dirFd, name, 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _, _ := newWS(t, WithSpareFiles(true))
			lost := 0
			testHookSpareCreated = func(dirFd int, name string) {
				if lost < 2 {
					lost++
					tc.other(t, dirFd, name)
				}
			}
			defer func() { testHookSpareCreated = nil }()
			primeSpares(t, w)
			assertSparesClean(t, w)
			if lost != 2 {
				t.Errorf("%d spares lost, want 2", lost)
			}
		})
	}
}

// A server that stops leaves the shared spare directory to a server still
// using it, even one with no spare in it at that moment (all taken): that
// one makes its next spares there. The last server to stop removes it.
func TestSpareDirectoryKeptForAServerWithNoSpareReady(t *testing.T) {
	a, root, _ := newWS(t, WithSpareFiles(true))
	primeSpares(t, a)
	a.spare.mu.Lock()
	taken := a.spare.ready
	a.spare.ready = nil
	a.spare.mu.Unlock()
	for _, sp := range taken {
		_ = sp.f.Close()
		if err := unix.Unlinkat(a.spare.dirFd, sp.name, 0); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(root, WithSpareFiles(true))
	if err != nil {
		t.Fatal(err)
	}
	primeSpares(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, SpareDir)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the spare directory after the other server stopped: %v, want kept", err)
	}
	a.spare.mu.Lock()
	a.spare.start(a)
	a.spare.mu.Unlock()
	assertSparesClean(t, a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the spare directory after the last server stopped: %v, want removed", err)
	}
}

// A server that stops can remove the spare directory between another's
// open of it and that one's lock: the directory is made again.
func TestSpareDirectoryRemovedBeforeItsLockIsMadeAgain(t *testing.T) {
	w, root, _ := newWS(t, WithSpareFiles(true))
	dir := filepath.Join(root, SpareDir)
	removed := 0
	testHookSpareDirOpened = func() {
		if removed == 0 {
			removed++
			if err := os.RemoveAll(dir); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { testHookSpareDirOpened = nil }()
	primeSpares(t, w)
	assertSparesClean(t, w)
	if removed != 1 {
		t.Errorf("the directory was removed %d times, want once", removed)
	}
}
