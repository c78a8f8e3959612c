package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// waitReleases returns once every background release has closed its
// descriptor.
func (w *Workspace) waitReleases() { w.after.Wait() }

// heldInodes lists the inodes this process has descriptors on whose link
// names contain name (a replaced file's link ends in " (deleted)").
func heldInodes(t *testing.T, name string) map[uint64]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	held := map[uint64]bool{}
	for _, e := range ents {
		p := "/proc/self/fd/" + e.Name()
		link, err := os.Readlink(p)
		if err != nil || !strings.Contains(link, name) {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err == nil {
			held[st.Ino] = true
		}
	}
	return held
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// The file a write replaces is held open across the rename, so that the
// rename does not free its blocks, and is let go once the write is over.
func TestWriteFileHoldsTheReplacedFileAcrossTheRename(t *testing.T) {
	for _, fsync := range []bool{true, false} {
		t.Run(fmt.Sprintf("fsync=%v", fsync), func(t *testing.T) {
			w, root, _ := newWS(t, WithFsync(fsync))
			target := filepath.Join(root, "held-target.txt")
			if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			old := inode(t, target)
			var heldAtRename bool
			testHookBeforeRename = func(string) error {
				heldAtRename = heldInodes(t, "held-target.txt")[old]
				return nil
			}
			defer func() { testHookBeforeRename = nil }()
			if _, err := w.WriteFile("held-target.txt", []byte("new\n"), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if !heldAtRename {
				t.Error("nothing held the replaced file when it was renamed over")
			}
			w.waitReleases()
			if held := heldInodes(t, "held-target.txt"); held[old] {
				t.Error("the replaced file is still held after the write returned and releases finished")
			}
			if got, _ := os.ReadFile(target); string(got) != "new\n" {
				t.Errorf("file = %q, want the new text", got)
			}
		})
	}
}

// Many writes leave no descriptor behind, whether their release ran in the
// background or, with every slot taken, in the writer.
func TestWriteFileReleasesEveryHold(t *testing.T) {
	w, root, _ := newWS(t, WithFsync(false))
	if err := os.WriteFile(filepath.Join(root, "many.txt"), []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := count()
	for i := range 200 {
		if _, err := w.WriteFile("many.txt", fmt.Appendf(nil, "%d\n", i), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.waitReleases()
	if after := count(); after > before {
		t.Errorf("%d descriptors open after 200 writes, %d before", after, before)
	}
}

func TestAllocateReservesTheBlocks(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !allocate(f.Fd(), 20_000) {
		t.Skip("this filesystem has no fallocate")
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != 20_000 || st.Blocks*512 < 20_000 {
		t.Errorf("after allocate(20000): size %d, %d bytes of blocks; want 20000 and at least as many", st.Size, st.Blocks*512)
	}
	if allocate(f.Fd(), 0) {
		t.Error("allocate(0) reported an allocation")
	}
}

// Unsynced replaces allocate their temp file before filling it; durable
// writes do not (their fsync writes the data anyway, and allocating first
// would only add work), nor do writes that create the file (no rename over
// a file starts writeback).
func TestUnsyncedWritesAllocateFirst(t *testing.T) {
	for _, fsync := range []bool{false, true} {
		t.Run(fmt.Sprintf("fsync=%v", fsync), func(t *testing.T) {
			var sizes []int
			preallocate = func(fd uintptr, n int) bool { sizes = append(sizes, n); return allocate(fd, n) }
			defer func() { preallocate = allocate }()
			w, root, _ := newWS(t, WithFsync(fsync))
			for _, content := range []string{"one\ntwo\n", "three\n"} { // created, then replaced
				if _, err := w.WriteFile("a.txt", []byte(content), WriteOptions{}); err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(filepath.Join(root, "a.txt")); err != nil || string(b) != content {
					t.Errorf("file holds %q, %v; want %q", b, err, content)
				}
			}
			want := []int{6} // the replace only
			if fsync {
				want = nil
			}
			if !slices.Equal(sizes, want) {
				t.Errorf("allocated %v, want %v", sizes, want)
			}
			assertNoTemp(t, root)
		})
	}
}
