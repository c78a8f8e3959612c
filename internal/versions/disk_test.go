package versions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// ver is a version: "v2-" and 32 hex digits, as workspace.Version gives.
func ver(i int) string { return fmt.Sprintf("v2-%032x", i) }

// openDisk opens a store in dir, closed with the test.
func openDisk(t *testing.T, dir string, maxBytes int64) *versions.Disk {
	t.Helper()
	d, err := versions.OpenDisk(dir, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// snapshotFiles lists the snapshot files in dir and fails on any other
// entry (a temp file left behind, a file outside the naming).
func snapshotFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(e.Name(), ".snap") || !info.Mode().IsRegular() {
			t.Errorf("unexpected entry %s (%v) in the store", e.Name(), info.Mode())
			continue
		}
		if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", e.Name(), info.Mode().Perm())
		}
		out[strings.TrimSuffix(e.Name(), ".snap")] = info.Size()
	}
	return out
}

func TestDiskKeepsWhatItIsGivenAcrossReopening(t *testing.T) {
	dir := t.TempDir()
	d := openDisk(t, dir, 1<<20)
	content := map[string]string{
		ver(0xaa): "one\ntwo\n",
		ver(0xbb): "\ufeffbom\r\ncrlf",
		ver(0xcc): "",
	}
	for v, c := range content {
		d.Put(v, []byte(c))
	}
	for v, c := range content { // pending or written, Get finds it
		if got, ok := d.Get(v); !ok || string(got) != c {
			t.Errorf("Get(%s) = %q, %v; want %q", v, got, ok, c)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if files := snapshotFiles(t, dir); len(files) != len(content) {
		t.Fatalf("files %v, want one per version", files)
	}
	again := openDisk(t, dir, 1<<20)
	for v, c := range content {
		if got, ok := again.Get(v); !ok || string(got) != c {
			t.Errorf("after reopening, Get(%s) = %q, %v; want %q", v, got, ok, c)
		}
	}
	if s := again.Stats(); s.Entries != 3 || s.Hits != 3 || s.Bytes <= 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestDiskTreatsADamagedFileAsAMiss(t *testing.T) {
	const content = "line one\nline two\nline three\n"
	v := ver(0x0123456789abcdef)
	tests := []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"cut in its header", func(b []byte) []byte { return b[:10] }},
		{"empty, as a crash can leave it", func([]byte) []byte { return nil }},
		{"a byte of content flipped", func(b []byte) []byte { b[len(b)-5] ^= 0x20; return b }},
		{"a byte appended", func(b []byte) []byte { return append(b, 'x') }},
		{"the checksum changed", func(b []byte) []byte {
			i := strings.IndexByte(string(b), '\n')
			b[i-1] ^= 1
			return b
		}},
		{"another version's file under this name", func([]byte) []byte {
			other := t.TempDir()
			d := openDisk(t, other, 1<<20)
			d.Put(ver(0xffff), []byte(content))
			d.Close()
			b, err := os.ReadFile(filepath.Join(other, ver(0xffff)+".snap"))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
		{"garbage", func([]byte) []byte { return []byte("not a snapshot at all\n" + content) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			d := openDisk(t, dir, 1<<20)
			d.Put(v, []byte(content))
			d.Close()
			p := filepath.Join(dir, v+".snap")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, tt.damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			d = openDisk(t, dir, 1<<20)
			if got, ok := d.Get(v); ok {
				t.Fatalf("Get = %q, true; a damaged file must be a miss", got)
			}
			if s := d.Stats(); s.Corrupt != 1 || s.Misses != 1 || s.Hits != 0 || s.Entries != 0 || s.Bytes != 0 {
				t.Errorf("stats %+v, want one corrupt miss and nothing held", s)
			}
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("the damaged file is still there (%v)", err)
			}
			// It can be stored again.
			d.Put(v, []byte(content))
			if got, ok := d.Get(v); !ok || string(got) != content {
				t.Errorf("after storing it again, Get = %q, %v", got, ok)
			}
		})
	}
}

func TestDiskStaysWithinItsBudget(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("a line of text\n", 64) // ~1 KB
	// Room for three files.
	d := openDisk(t, dir, 3*int64(len(content)+100)) // a header is under 100 bytes
	for i := range 10 {
		d.Put(ver(i), []byte(content))
	}
	d.Close()
	files := snapshotFiles(t, dir)
	var total int64
	for _, n := range files {
		total += n
	}
	s := d.Stats()
	if total > s.MaxBytes || s.Bytes != total || s.Entries != len(files) || len(files) != 3 {
		t.Fatalf("files %v (%d bytes), stats %+v: want 3 files within the budget", files, total, s)
	}
	for _, v := range []string{ver(7), ver(8), ver(9)} {
		if _, ok := files[v]; !ok {
			t.Errorf("the newest snapshot %s is gone: %v", v, files)
		}
	}
	if s.Spills != 10 || s.Evictions != 7 {
		t.Errorf("stats %+v, want 10 spills and 7 evictions", s)
	}
	// Reopened with a smaller budget, it drops the oldest to fit.
	small := openDisk(t, dir, int64(len(content)+100))
	if files := snapshotFiles(t, dir); len(files) != 1 || small.Stats().Entries != 1 {
		t.Errorf("after reopening with room for one: files %v, stats %+v", files, small.Stats())
	}
	if _, ok := files[ver(9)]; !ok {
		t.Errorf("the newest snapshot did not survive: %v", files)
	}
	// A snapshot larger than the whole budget is not kept.
	small.Put(ver(99), []byte(strings.Repeat("x", 10*len(content))))
	small.Close()
	if _, ok := snapshotFiles(t, dir)[ver(99)]; ok {
		t.Error("a snapshot over the budget was written")
	}
}

func TestDiskRefusesNamesThatAreNotVersions(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "store")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	d := openDisk(t, dir, 1<<20)
	for _, v := range []string{
		"", "../escape", "..", ".hidden", "-flag", "a/b", `a\b`, "con", "nul", "aux",
		"v2-" + strings.Repeat("0", 31) + "\x00", "v2 " + strings.Repeat("0", 32),
		"v2-" + strings.Repeat("A", 32), // a real version's name in upper case: one file on some disks
		"v2-../" + strings.Repeat("0", 32), "v2-" + strings.Repeat("0", 200), "v-" + strings.Repeat("0", 32),
	} {
		d.Put(v, []byte("x\n"))
		if _, ok := d.Get(v); ok {
			t.Errorf("Get(%q) found something", v)
		}
	}
	d.Close()
	if files := snapshotFiles(t, dir); len(files) != 0 {
		t.Errorf("files %v written for names that are not versions", files)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("the store's parent holds %d entries, want only the store", len(entries))
	}
}

func TestDiskSharedByTwoServers(t *testing.T) {
	dir := t.TempDir()
	a := openDisk(t, dir, 1<<20)
	b := openDisk(t, dir, 1<<20) // opened before a writes anything
	a.Put(ver(1000), []byte("shared\n"))
	a.Close()
	if got, ok := b.Get(ver(1000)); !ok || string(got) != "shared\n" {
		t.Fatalf("the other store's Get = %q, %v", got, ok)
	}
	// Both write the same version: one file, whole.
	var wg sync.WaitGroup
	for _, d := range []*versions.Disk{b, openDisk(t, dir, 1<<20)} {
		wg.Go(func() {
			for i := range 20 {
				d.Put(ver(i), []byte(strings.Repeat("same\n", i)))
			}
			d.Close()
		})
	}
	wg.Wait()
	c := openDisk(t, dir, 1<<20)
	for i := range 20 {
		if got, ok := c.Get(ver(i)); !ok || string(got) != strings.Repeat("same\n", i) {
			t.Errorf("%s = %q, %v", ver(i), got, ok)
		}
	}
	if files := snapshotFiles(t, dir); len(files) != 21 {
		t.Errorf("%d files, want 21", len(files))
	}
}

func TestDiskRemovesOnlyOldTempFiles(t *testing.T) {
	dir := t.TempDir()
	old, young := filepath.Join(dir, ".tmp-old"), filepath.Join(dir, ".tmp-young")
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, []byte("half a snap"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	openDisk(t, dir, 1<<20)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a temp file a crash left hours ago is still there (%v)", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a temp file another server may be writing was removed: %v", err)
	}
}

func TestDiskConcurrentUse(t *testing.T) {
	d := openDisk(t, t.TempDir(), 64<<10)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				v := ver(g<<8 | i%30)
				want := strings.Repeat(v+"\n", 50)
				d.Put(v, []byte(want))
				if got, ok := d.Get(v); ok && string(got) != want {
					t.Errorf("Get(%s) = %d bytes of something else", v, len(got))
				}
			}
		})
	}
	wg.Wait()
	d.Close()
	if s := d.Stats(); s.Bytes > s.MaxBytes {
		t.Errorf("stats %+v: over the budget", s)
	}
}

func TestCacheSpillsWhatMemoryLetsGo(t *testing.T) {
	dir := t.TempDir()
	docs := map[string]*hashline.Document{
		ver(1): hashline.ParseDocument([]byte("a\nb\n")),
		ver(2): hashline.ParseDocument([]byte("\ufeffwith a bom\r\n")),
		ver(3): sized(500),
	}
	t.Run("with no memory, every snapshot goes to disk and comes back whole", func(t *testing.T) {
		c := versions.NewCache(0, versions.WithDisk(openDisk(t, dir, 1<<20)))
		for v, d := range docs {
			c.Put(v, d)
		}
		for v, want := range docs {
			got, ok := c.Get(v)
			if !ok || string(got.Bytes()) != string(want.Bytes()) || got.Len() != want.Len() {
				t.Errorf("Get(%s) = %v; want the document back", v, ok)
			}
		}
		s := c.Stats()
		if s.Hits != 0 || s.Misses != 0 || s.Disk.Hits != 3 || s.Entries != 0 {
			t.Errorf("stats %+v: want three disk hits and nothing in memory", s)
		}
		if _, ok := c.Get(ver(99)); ok || c.Stats().Misses != 1 {
			t.Errorf("a version held nowhere: stats %+v", c.Stats())
		}
	})
	t.Run("with room in memory, nothing is written until Save", func(t *testing.T) {
		dir := t.TempDir()
		disk := openDisk(t, dir, 1<<20)
		c := versions.NewCache(1<<20, versions.WithDisk(disk))
		for v, d := range docs {
			c.Put(v, d)
			c.Get(v)
		}
		disk.Close() // drains anything pending
		if files := snapshotFiles(t, dir); len(files) != 0 {
			t.Fatalf("files %v written while memory had room", files)
		}
		disk = openDisk(t, dir, 1<<20)
		c = versions.NewCache(1<<20, versions.WithDisk(disk))
		for v, d := range docs {
			c.Put(v, d)
		}
		c.Save()
		disk.Close()
		if files := snapshotFiles(t, dir); len(files) != 3 {
			t.Fatalf("files %v after Save, want all three", files)
		}
		// A new cache finds them, and keeps what it read in memory.
		c = versions.NewCache(1<<20, versions.WithDisk(openDisk(t, dir, 1<<20)))
		for v := range docs {
			c.Get(v)
			c.Get(v)
		}
		if s := c.Stats(); s.Disk.Hits != 3 || s.Hits != 3 || s.Entries != 3 {
			t.Errorf("stats %+v: want each read from disk once, then from memory", s)
		}
	})
	t.Run("evicted snapshots are spilled", func(t *testing.T) {
		dir := t.TempDir()
		disk := openDisk(t, dir, 1<<20)
		d := sized(1000)
		c := versions.NewCache(2*versions.Size(ver(0), d), versions.WithDisk(disk))
		for i := range 5 {
			c.Put(ver(i), d)
		}
		disk.Close()
		files := snapshotFiles(t, dir)
		if len(files) != 3 || c.Stats().Evictions != 3 {
			t.Errorf("files %v, stats %+v: want the three evicted snapshots on disk", files, c.Stats())
		}
	})
}

// TestCacheSpillsOnlyWhatAgentsHold: with WithSpillOnly, a snapshot memory
// lets go reaches the disk only if keep holds its version; Save spills
// everything.
func TestCacheSpillsOnlyWhatAgentsHold(t *testing.T) {
	dir := t.TempDir()
	d, err := versions.OpenDisk(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{ver(1): true}
	c := versions.NewCache(1, versions.WithDisk(d), versions.WithSpillOnly(func(v string) bool { return held[v] }))
	c.Put(ver(1), hashline.ParseText("held\n"))
	c.Put(ver(2), hashline.ParseText("nobody's\n"))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	got := snapshotFiles(t, dir)
	if _, ok := got[ver(1)]; !ok || len(got) != 1 {
		t.Errorf("the store holds %v, want only %s", got, ver(1))
	}

	dir = t.TempDir()
	d = openDisk(t, dir, 1<<20)
	c = versions.NewCache(1<<20, versions.WithDisk(d), versions.WithSpillOnly(func(string) bool { return false }))
	c.Put(ver(3), hashline.ParseText("kept in memory\n"))
	c.Save()
	if _, ok := d.Get(ver(3)); !ok {
		t.Errorf("Save left %s off the disk", ver(3))
	}
}
