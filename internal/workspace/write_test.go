//go:build linux

package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// writeCase is one case of TestWriteFile.
type writeCase struct {
	name     string
	setup    func(t *testing.T, root, outside string)
	path     string
	text     string
	opts     WriteOptions
	maxBytes int64
	// For successful writes: the file that must hold the text (defaults
	// to path), its mode, and whether it was created.
	target  string
	mode    fs.FileMode
	created bool
	err     error
}

func TestWriteFile(t *testing.T) {
	type setup = func(t *testing.T, root, outside string)
	file := func(name, content string, mode fs.FileMode) setup {
		return func(t *testing.T, root, _ string) { mustWrite(t, filepath.Join(root, name), content, mode) }
	}
	both := func(a, b setup) setup {
		return func(t *testing.T, root, outside string) { a(t, root, outside); b(t, root, outside) }
	}
	link := func(target, name string) setup {
		return func(t *testing.T, root, outside string) {
			to := strings.NewReplacer("$ROOT", root, "$OUT", outside).Replace(target)
			mustSymlink(t, to, filepath.Join(root, name))
		}
	}
	tests := []writeCase{
		{name: "a new file is created with mode 0644", path: "new.txt", text: "hi\n", mode: 0o644, created: true},
		{name: "missing parents are created", path: "a/b/c.txt", text: "deep\n", mode: 0o644, created: true},
		{name: "an existing 0600 file keeps its mode", setup: file("p.txt", "old", 0o600), path: "p.txt", text: "new", mode: 0o600},
		{name: "an existing 0755 file keeps its mode", setup: file("run.sh", "old", 0o755), path: "run.sh", text: "#!/bin/sh\n", mode: 0o755},
		{name: "create-only makes a new file", path: "c.txt", text: "c", opts: WriteOptions{Mode: CreateOnly}, mode: 0o644, created: true},
		{name: "replace-only replaces an existing file", setup: file("r.txt", "old", 0o644), path: "r.txt", text: "new", opts: WriteOptions{Mode: ReplaceOnly}, mode: 0o644},
		{name: "an empty text empties the file", setup: file("e.txt", "old", 0o644), path: "e.txt", text: "", mode: 0o644},
		{name: "an absolute path inside the root works", path: "$ROOT/abs.txt", text: "x", target: "abs.txt", mode: 0o644, created: true},
		{name: "a symlink inside the root writes its target", setup: both(file("real.txt", "old", 0o640), link("real.txt", "link")), path: "link", text: "new", target: "real.txt", mode: 0o640},
		{name: "an absolute symlink inside the root writes its target", setup: both(file("real.txt", "old", 0o644), link("$ROOT/real.txt", "link")), path: "link", text: "new", target: "real.txt", mode: 0o644},
		{name: "a dangling symlink inside the root creates its target", setup: link("sub/made.txt", "link"), path: "link", text: "new", target: "sub/made.txt", mode: 0o644, created: true},
		{name: "a symlinked directory inside the root is followed", setup: both(file("sub/x", "", 0o644), link("sub", "d")), path: "d/f.txt", text: "f", target: "sub/f.txt", mode: 0o644, created: true},

		{name: "create-only on an existing file fails", setup: file("x.txt", "old", 0o644), path: "x.txt", text: "new", opts: WriteOptions{Mode: CreateOnly}, err: ErrExists},
		{name: "create-only through a symlink to an existing file fails", setup: both(file("x.txt", "old", 0o644), link("x.txt", "l")), path: "l", text: "new", opts: WriteOptions{Mode: CreateOnly}, err: ErrExists},
		{name: "replace-only on a missing file fails", path: "a/missing.txt", text: "new", opts: WriteOptions{Mode: ReplaceOnly}, err: ErrNotFound},
		{name: "an unknown write mode is invalid", path: "m.txt", text: "x", opts: WriteOptions{Mode: 7}, err: ErrInvalidPath},
		{name: "a symlink leading out is refused", setup: link("$OUT/secret.txt", "s"), path: "s", text: "pwned", err: ErrOutsideRoot},
		{name: "a relative symlink leading out is refused", setup: link("../outside/secret.txt", "s"), path: "s", text: "pwned", err: ErrOutsideRoot},
		{name: "a dangling symlink leading out is refused", setup: link("$OUT/new.txt", "s"), path: "s", text: "pwned", err: ErrOutsideRoot},
		{name: "a symlinked directory leading out is refused", setup: link("$OUT", "d"), path: "d/new.txt", text: "pwned", err: ErrOutsideRoot},
		{name: "dot-dot out of the root is refused", path: "../outside/secret.txt", text: "pwned", err: ErrOutsideRoot},
		{name: "a link through a missing directory and back is not found", setup: both(link("$OUT/secret.txt", "s"), link("missing/../s", "l")), path: "l", text: "pwned", err: ErrNotFound},
		{name: "a directory is not regular", setup: file("dir/x", "", 0o644), path: "dir", text: "x", err: ErrNotRegular},
		{name: "the root is not regular", path: ".", text: "x", err: ErrNotRegular},
		{name: "a symlink to the root is not regular", setup: link(".", "self"), path: "self", text: "x", err: ErrNotRegular},
		{name: "a FIFO is not regular", setup: func(t *testing.T, root, _ string) {
			if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, path: "fifo", text: "x", err: ErrNotRegular},
		{name: "a parent that is a file is not found", setup: file("f.txt", "old", 0o644), path: "f.txt/child.txt", text: "x", err: ErrNotFound},
		{name: "text over the limit is too large", path: "big.txt", text: strings.Repeat("x", 17), maxBytes: 16, err: ErrTooLarge},
		{name: "UTF-16 text over the limit is too large", path: "big.txt", text: "1234567", opts: WriteOptions{Encoding: UTF16LE}, maxBytes: 15, err: ErrTooLarge},
		{name: "invalid UTF-8 text is not text", path: "bad.txt", text: "caf\xe9", err: ErrNotText},
		{name: "invalid UTF-8 text cannot become UTF-16", path: "bad.txt", text: "caf\xe9", opts: WriteOptions{Encoding: UTF16BE}, err: ErrNotText},
		{name: "an unknown encoding is refused", path: "l1.txt", text: "x", opts: WriteOptions{Encoding: "latin1"}, err: ErrNotText},
		{name: "an empty path is invalid", path: " ", text: "x", err: ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testWriteFileCase(t, tt) })
	}
}

// testWriteFileCase is one case of TestWriteFile.
func testWriteFileCase(t *testing.T, tt writeCase) {
	w, root, outside, p, before := caseWS(t, tt.maxBytes, tt.setup, tt.path)
	res, err := within(t, func() (*WriteResult, error) { return w.WriteFile(p, []byte(tt.text), tt.opts) })
	assertNoTemp(t, root, outside)
	if tt.err != nil {
		assertErr(t, err, tt.err)
		assertSameSnapshot(t, before, snapshot(t, root, outside))
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	target := tt.target
	if target == "" {
		target = tt.path
	}
	got, err := os.ReadFile(filepath.Join(root, target))
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(filepath.Join(root, target))
	if string(got) != tt.text || !bytes.Equal(res.Raw, got) || fi.Mode() != tt.mode {
		t.Errorf("on disk %q mode %v; want %q mode %v", got, fi.Mode(), tt.text, tt.mode)
	}
	if res.Created != tt.created || res.Version != Version(got) {
		t.Errorf("Created = %v, Version = %s; want %v, %s", res.Created, res.Version, tt.created, Version(got))
	}
	// Links stay links: compare everything but the target's content.
	after := snapshot(t, root, outside)
	for name, desc := range before {
		if strings.HasPrefix(desc, "L") && after[name] != desc {
			t.Errorf("symlink %s changed: %q -> %q", name, desc, after[name])
		}
	}
	if after[filepath.Join(outside, "secret.txt")] != before[filepath.Join(outside, "secret.txt")] {
		t.Error("the file outside the root changed")
	}
}

func TestWriteFileCreatesParentsWith0755(t *testing.T) {
	old := syscall.Umask(0o022) // the umask applies to Mkdir; pin it
	defer syscall.Umask(old)
	w, root, _ := newWS(t)
	if _, err := w.WriteFile("a/b/c.txt", []byte("x"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a", "a/b"} {
		fi, err := os.Stat(filepath.Join(root, d))
		if err != nil || fi.Mode() != fs.ModeDir|0o755 {
			t.Errorf("%s: %v %v, want a 0755 directory", d, fi.Mode(), err)
		}
	}
}

func TestWriteFileRoundTripsUTF16(t *testing.T) {
	for _, enc := range []Encoding{UTF16LE, UTF16BE} {
		t.Run(string(enc), func(t *testing.T) {
			w, _, _ := newWS(t)
			text := "héllo 😀\r\nwörld\n"
			res, err := w.WriteFile("u.txt", []byte(text), WriteOptions{Encoding: enc})
			if err != nil {
				t.Fatal(err)
			}
			if want := utf16Bytes(text, enc == UTF16BE); string(res.Raw) != want {
				t.Errorf("Raw = %q, want %q", res.Raw, want)
			}
			f, err := w.ReadFile("u.txt")
			if err != nil {
				t.Fatal(err)
			}
			if string(f.Text) != text || f.Encoding != enc || f.Version != res.Version {
				t.Errorf("read back %q %s %s; want %q %s %s", f.Text, f.Encoding, f.Version, text, enc, res.Version)
			}
		})
	}
}

func TestWriteFileVersion(t *testing.T) {
	w, _, _ := newWS(t)
	a1, _ := w.WriteFile("v.txt", []byte("one\n"), WriteOptions{})
	b, _ := w.WriteFile("v.txt", []byte("two\n"), WriteOptions{})
	a2, _ := w.WriteFile("v.txt", []byte("one\n"), WriteOptions{})
	if a1.Version == b.Version || a1.Version != a2.Version {
		t.Errorf("versions %s %s %s: want them to change with content and be stable", a1.Version, b.Version, a2.Version)
	}
	if a1.Created == a2.Created {
		t.Errorf("Created = %v then %v, want true then false", a1.Created, a2.Created)
	}
}

// TestWriteFileVersionIsOfTheBytesWritten: the version WriteFile returns
// is that of the encoded bytes on disk, the one a read of the file
// computes, for a re-encoded file too.
func TestWriteFileVersionIsOfTheBytesWritten(t *testing.T) {
	for _, enc := range []Encoding{UTF8, UTF16LE} {
		t.Run(string(enc), func(t *testing.T) {
			w, _, _ := newWS(t)
			text := []byte("héllo\n")
			raw, err := Encode(text, enc)
			if err != nil {
				t.Fatal(err)
			}
			checkWrittenVersion(t, w, "v.txt", text, WriteOptions{Encoding: enc}, Version(raw))
		})
	}
}

// TestWriteFileVersionOfLargeFile: a file large enough to be hashed in
// parallel with its write gets the same version a read computes.
func TestWriteFileVersionOfLargeFile(t *testing.T) {
	w, _, _ := newWS(t)
	text := bytes.Repeat([]byte("a line of a large file\n"), 2*overlapHashBytes/23)
	checkWrittenVersion(t, w, "big.txt", text, WriteOptions{}, Version(text))
}

// checkWrittenVersion writes text to name with opts and checks that the
// version WriteFile returns, and the one a read then computes, are want.
func checkWrittenVersion(t *testing.T, w *Workspace, name string, text []byte, opts WriteOptions, want string) {
	t.Helper()
	res, err := w.WriteFile(name, text, opts)
	if err != nil {
		t.Fatal(err)
	}
	f, err := w.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != want || f.Version != want {
		t.Errorf("write returned %s, read computes %s, want %s", res.Version, f.Version, want)
	}
}

// TestWriteFileFailureAtRenameLeavesNoTemp makes the last step fail (the
// target becomes a non-empty directory after the checks) to prove the temp
// file is removed and nothing partial is left.
func TestWriteFileFailureAtRenameLeavesNoTemp(t *testing.T) {
	t.Parallel()
	for _, mode := range []WriteMode{Upsert, CreateOnly} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			var root string
			w, root, _ := newWS(t, withBeforeRename(func(string) error {
				mustWrite(t, filepath.Join(root, "t.txt", "inner"), "x", 0o644)
				return nil
			}))
			_, err := w.WriteFile("t.txt", []byte("new"), WriteOptions{Mode: mode})
			want := ErrNotRegular
			if mode == CreateOnly {
				want = ErrExists
			}
			assertErr(t, err, want)
			assertNoTemp(t, root)
			if b, _ := os.ReadFile(filepath.Join(root, "t.txt", "inner")); string(b) != "x" {
				t.Errorf("directory content changed: %q", b)
			}
		})
	}
}

// TestWriteFileCreateOnlyRace creates the target between the checks and the
// commit, as another process could: create-only must still refuse.
func TestWriteFileCreateOnlyRace(t *testing.T) {
	t.Parallel()
	var root string
	w, root, _ := newWS(t, withBeforeRename(func(string) error {
		mustWrite(t, filepath.Join(root, "c.txt"), "theirs", 0o644)
		return nil
	}))
	_, err := w.WriteFile("c.txt", []byte("ours"), WriteOptions{Mode: CreateOnly})
	assertErr(t, err, ErrExists)
	assertNoTemp(t, root)
	if b, _ := os.ReadFile(filepath.Join(root, "c.txt")); string(b) != "theirs" {
		t.Errorf("other writer's file was replaced: %q", b)
	}
}

// TestWriteFileNoFsync: without fsync, the file holds exactly the content,
// whatever was there before.
func TestWriteFileNoFsync(t *testing.T) {
	w, root, _ := newWS(t, WithFsync(false))
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	for _, step := range []struct{ name, content string }{
		{"created", "x"},
		{"grown", big},
		{"shrunk", "short\n"},
		{"emptied", ""},
		{"filled again", big[:4097]},
	} {
		res, err := w.WriteFile("f.txt", []byte(step.content), WriteOptions{})
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		b, err := os.ReadFile(filepath.Join(root, "f.txt"))
		if err != nil || string(b) != step.content {
			t.Fatalf("%s: file holds %d bytes (%v), want %d", step.name, len(b), err, len(step.content))
		}
		if res.Version != Version(b) {
			t.Errorf("%s: version %s, want %s", step.name, res.Version, Version(b))
		}
	}
	assertNoTemp(t, root)
}

// TestConcurrentReadsAndWrites runs under -race: readers of a file being
// rewritten see the old or the new content, never a mix.
func TestConcurrentReadsAndWrites(t *testing.T) {
	w, root, _ := newWS(t)
	olds, news := strings.Repeat("a", 5000), strings.Repeat("b", 5000)
	if _, err := w.WriteFile("shared.txt", []byte(olds), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 20 {
				if _, err := w.WriteFile(fmt.Sprintf("own/%d.txt", i), []byte{byte('0' + j%10)}, WriteOptions{}); err != nil {
					t.Error(err)
				}
				text := olds
				if j%2 == 1 {
					text = news
				}
				if _, err := w.WriteFile("shared.txt", []byte(text), WriteOptions{}); err != nil {
					t.Error(err)
				}
				f, err := w.ReadFile("shared.txt")
				if err != nil {
					t.Error(err)
				} else if s := string(f.Text); s != olds && s != news {
					t.Errorf("torn read: %d bytes", len(s))
				}
			}
		})
	}
	wg.Wait()
	assertNoTemp(t, root)
}

// TestWriteFileKeepsOwner: a rewrite keeps the owner, group and mode,
// also when the file is the server's but a new file in its directory takes
// a setgid directory's group.
func TestWriteFileKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	setgid := func(t *testing.T, dir string) {
		t.Helper()
		if err := os.Chown(dir, -1, 4321); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755|fs.ModeSetgid); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name            string
		setgidRoot, sub bool
		uid, gid        int
		mode            fs.FileMode
	}{
		{name: "another user's file", uid: 1234, gid: 5678, mode: 0o640 | fs.ModeSetgid},
		{name: "the server's file in a setgid directory", sub: true, uid: os.Geteuid(), gid: os.Getegid(), mode: 0o640},
		{name: "the server's file, root and directory setgid alike", setgidRoot: true, sub: true, uid: os.Geteuid(), gid: os.Getegid(), mode: 0o640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, root, _ := newWS(t)
			name := filepath.Join(root, "sub", "theirs.txt")
			mustWrite(t, name, "old", 0o640)
			if tt.setgidRoot {
				setgid(t, root)
			}
			if tt.sub {
				setgid(t, filepath.Dir(name))
			}
			if err := os.Chown(name, tt.uid, tt.gid); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(name, tt.mode); err != nil {
				t.Fatal(err)
			}
			if _, err := w.WriteFile("sub/theirs.txt", []byte("new"), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if int(st.Uid) != tt.uid || int(st.Gid) != tt.gid || fi.Mode() != tt.mode {
				t.Errorf("owner %d:%d mode %v; want %d:%d %v", st.Uid, st.Gid, fi.Mode(), tt.uid, tt.gid, tt.mode)
			}
		})
	}
}

func TestWriteFileFailureRemovesDirectoriesItCreated(t *testing.T) {
	t.Parallel()
	w, root, _ := newWS(t, withBeforeRename(func(string) error { return syscall.EIO }))
	mustWrite(t, filepath.Join(root, "a", "keep.txt"), "k", 0o644)
	before := snapshot(t, root)
	_, err := w.WriteFile("a/b/c/t.txt", []byte("new"), WriteOptions{})
	assertErr(t, err, ErrIO)
	assertSameSnapshot(t, before, snapshot(t, root))
}

// WriteFile checks and encodes the text it is given, whoever calls it:
// text that is not UTF-8 is refused and nothing is written, whatever the
// encoding, and the encoded bytes count against the size limit.
func TestWriteFileChecksAndEncodesText(t *testing.T) {
	w, root, _ := newWS(t, WithMaxFileBytes(64))
	utf16, err := Encode([]byte("h\u00e9llo\n"), UTF16LE)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		enc     Encoding
		text    string
		want    []byte
		wantErr error
	}{
		{"checked, invalid", UTF8, "a\xffb\n", nil, ErrNotText},
		{"re-encoded, invalid", UTF16LE, "a\xffb\n", nil, ErrNotText},
		{"encoded here", UTF16LE, "h\u00e9llo\n", utf16, nil},
		{"UTF-8 as it is", UTF8, "h\u00e9llo\n", []byte("h\u00e9llo\n"), nil},
		{"UTF-8 over the limit", UTF8, strings.Repeat("x", 65), nil, ErrTooLarge},
		{"over the limit once encoded", UTF16LE, strings.Repeat("x", 32), nil, ErrTooLarge},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("f%d.txt", i)
			res, err := w.WriteFile(name, []byte(tt.text), WriteOptions{Encoding: tt.enc})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			got, statErr := os.ReadFile(filepath.Join(root, name))
			if tt.wantErr != nil {
				if statErr == nil {
					t.Errorf("file written after err %v", err)
				}
				return
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
			if res.Version != Version(tt.want) {
				t.Errorf("version %s, want the version of the bytes written", res.Version)
			}
		})
	}
}

// TestWriteFileCommittingComesBeforeTheRename: Committing is called with
// the version of the bytes written while the file still holds what it
// held, and has returned before the rename; with fsync on it runs beside
// the temp file's write and sync, off it inline, and either way a write
// that fails after it (here at the rename) returns the error.
func TestWriteFileCommittingComesBeforeTheRename(t *testing.T) {
	t.Parallel()
	large := strings.Repeat("a line of a large file\n", 2*overlapHashBytes/23)
	for _, fsync := range []bool{true, false} {
		for _, tc := range []struct {
			name, old, text string // old "": no file before
			failRename      bool
		}{
			{name: "created", text: "new\n"},
			{name: "replaced", old: "old\n", text: "new\n"},
			{name: "replaced by a large file", old: "old\n", text: large},
			{name: "failing at the rename", old: "old\n", text: "new\n", failRename: true},
		} {
			t.Run(fmt.Sprintf("fsync=%v/%s", fsync, tc.name), func(t *testing.T) {
				t.Parallel()
				var (
					mu       sync.Mutex
					called   int
					returned bool
					version  string
					saw      string
				)
				renameErr := errors.New("the rename fails")
				var root string
				w, root, _ := newWS(t, WithFsync(fsync), withBeforeRename(func(string) error {
					mu.Lock()
					defer mu.Unlock()
					if !returned {
						t.Error("the rename came before Committing returned")
					}
					if tc.failRename {
						return renameErr
					}
					return nil
				}))
				p := filepath.Join(root, "f.txt")
				if tc.old != "" {
					mustWrite(t, p, tc.old, 0o644)
				}
				res, err := w.WriteFile("f.txt", []byte(tc.text), WriteOptions{Committing: func(v string) {
					b, _ := os.ReadFile(p)
					mu.Lock()
					defer mu.Unlock()
					called++
					version, saw, returned = v, string(b), true
				}})
				if called != 1 || version != Version([]byte(tc.text)) || saw != tc.old {
					t.Fatalf("Committing called %d times, with %s while the file held %q; want once, with %s, the file holding %q",
						called, version, saw, Version([]byte(tc.text)), tc.old)
				}
				want := tc.text
				if tc.failRename {
					if !errors.Is(err, renameErr) {
						t.Fatalf("WriteFile: %v, want the rename's error", err)
					}
					want = tc.old
				} else if err != nil || res.Version != version {
					t.Fatalf("WriteFile: %+v, %v; want version %s", res, err, version)
				}
				if b, _ := os.ReadFile(p); string(b) != want {
					t.Errorf("the file holds %d bytes, want %d", len(b), len(want))
				}
				assertNoTemp(t, root)
			})
		}
	}
}
