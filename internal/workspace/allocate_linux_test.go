package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

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
	t.Parallel()
	for _, fsync := range []bool{false, true} {
		t.Run(fmt.Sprintf("fsync=%v", fsync), func(t *testing.T) {
			t.Parallel()
			var sizes []int
			w, root, _ := newWS(t, WithFsync(fsync),
				withPreallocate(func(fd uintptr, n int) bool { sizes = append(sizes, n); return allocate(fd, n) }))
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
