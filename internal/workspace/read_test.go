//go:build linux

package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf16"
)

// utf16Bytes encodes s as UTF-16 with a BOM, independently of the code
// under test.
func utf16Bytes(s string, bigEndian bool) string {
	var b []byte
	for _, u := range append([]uint16{0xFEFF}, utf16.Encode([]rune(s))...) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

func TestReadFile(t *testing.T) {
	type setup func(t *testing.T, root, outside string)
	file := func(name, content string) setup {
		return func(t *testing.T, root, _ string) { mustWrite(t, filepath.Join(root, name), content, 0o644) }
	}
	both := func(a, b setup) setup {
		return func(t *testing.T, root, outside string) { a(t, root, outside); b(t, root, outside) }
	}
	link := func(target, name string) setup {
		return func(t *testing.T, root, outside string) {
			target = strings.NewReplacer("$ROOT", root, "$OUT", outside).Replace(target)
			mustSymlink(t, target, filepath.Join(root, name))
		}
	}
	const lf = "package main\n\nfunc main() {}\n"
	tests := []struct {
		name     string
		setup    setup
		path     string
		maxBytes int64
		want     string // the text, for successful reads
		enc      Encoding
		err      error
		msg      string // a substring the error message must contain
	}{
		{name: "a UTF-8 file is read as is", setup: file("main.go", lf), path: "main.go", want: lf, enc: UTF8},
		{name: "an empty file is empty text", setup: file("empty", ""), path: "empty", want: "", enc: UTF8},
		{name: "a UTF-8 BOM is kept in the text", setup: file("bom.txt", "\uFEFFhi\n"), path: "bom.txt", want: "\uFEFFhi\n", enc: UTF8},
		{name: "CRLF endings are kept", setup: file("crlf.txt", "a\r\nb\r\n"), path: "crlf.txt", want: "a\r\nb\r\n", enc: UTF8},
		{name: "an absolute path inside the root works", setup: file("a/b.txt", "x"), path: "$ROOT/a/b.txt", want: "x", enc: UTF8},
		{name: "a NUL after the first 8 KiB is still text", setup: file("late-nul", strings.Repeat("a", 9000)+"\x00"), path: "late-nul", want: strings.Repeat("a", 9000) + "\x00", enc: UTF8},
		{name: "UTF-16LE with a BOM is decoded", setup: file("le.txt", utf16Bytes("héllo 😀\r\n", false)), path: "le.txt", want: "héllo 😀\r\n", enc: UTF16LE},
		{name: "UTF-16BE with a BOM is decoded", setup: file("be.txt", utf16Bytes("héllo 😀\n", true)), path: "be.txt", want: "héllo 😀\n", enc: UTF16BE},
		{name: "a BOM-only UTF-16 file is empty text", setup: file("le0.txt", "\xFF\xFE"), path: "le0.txt", want: "", enc: UTF16LE},
		{name: "a relative symlink inside the root is followed", setup: both(file("real.txt", "real\n"), link("real.txt", "link")), path: "link", want: "real\n", enc: UTF8},
		{name: "an absolute symlink inside the root is followed", setup: both(file("real.txt", "real\n"), link("$ROOT/real.txt", "link")), path: "link", want: "real\n", enc: UTF8},
		{name: "a symlinked directory inside the root is followed", setup: both(file("sub/f.txt", "f\n"), link("sub", "d")), path: "d/f.txt", want: "f\n", enc: UTF8},
		{name: "a symlink with dot-dot that stays inside is followed", setup: both(file("f.txt", "f\n"), both(file("sub/x", ""), link("../f.txt", "sub/up"))), path: "sub/up", want: "f\n", enc: UTF8},

		{name: "a missing file is not found", path: "a/b.go", err: ErrNotFound, msg: `read "a/b.go": no such file`},
		{name: "a path under a file is not found", setup: file("f.txt", "x"), path: "f.txt/x", err: ErrNotFound, msg: "not a directory"},
		{name: "a dangling symlink is not found", setup: link("nowhere", "dangling"), path: "dangling", err: ErrNotFound},
		{name: "a directory is not regular", setup: file("dir/x", ""), path: "dir", err: ErrNotRegular, msg: "directory"},
		{name: "the root is not regular", path: ".", err: ErrNotRegular},
		{name: "a FIFO is refused without blocking", setup: func(t *testing.T, root, _ string) {
			if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, path: "fifo", err: ErrNotRegular, msg: "FIFO"},
		{name: "a unix socket is refused", setup: func(t *testing.T, root, _ string) {
			l, err := net.Listen("unix", filepath.Join(root, "sock"))
			if err != nil {
				t.Skipf("cannot create a unix socket here: %v", err)
			}
			t.Cleanup(func() { l.Close() })
		}, path: "sock", err: ErrNotRegular, msg: "socket"},
		{name: "a device node is refused", setup: func(t *testing.T, root, _ string) {
			// /dev/null is char device 1:3; Linux encodes it as major<<8|minor.
			if err := syscall.Mknod(filepath.Join(root, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Skipf("cannot create a device node (needs CAP_MKNOD): %v", err)
			}
		}, path: "null", err: ErrNotRegular, msg: "character device"},
		{name: "/dev/null through a symlink leads out", setup: link("/dev/null", "null"), path: "null", err: ErrOutsideRoot},
		{name: "an absolute symlink to a file outside is refused", setup: link("$OUT/secret.txt", "s"), path: "s", err: ErrOutsideRoot, msg: `symlink "s" points to`},
		{name: "a relative symlink to a file outside is refused", setup: link("../outside/secret.txt", "s"), path: "s", err: ErrOutsideRoot},
		{name: "a symlinked directory leading out is refused", setup: link("$OUT", "d"), path: "d/secret.txt", err: ErrOutsideRoot},
		{name: "a relative symlinked directory leading out is refused", setup: link("../outside", "d"), path: "d/secret.txt", err: ErrOutsideRoot},
		{name: "a symlink loop is invalid", setup: both(link("b", "a"), link("a", "b")), path: "a", err: ErrInvalidPath, msg: "symbolic links"},
		{name: "dot-dot out of the root is refused", path: "../outside/secret.txt", err: ErrOutsideRoot},
		{name: "an absolute path outside is refused", path: "$OUT/secret.txt", err: ErrOutsideRoot},
		{name: "an empty path is invalid", path: "", err: ErrInvalidPath},
		{name: "a NUL byte early on means binary", setup: file("bin", "abc\x00def"), path: "bin", err: ErrBinary, msg: "offset 3"},
		{name: "invalid UTF-8 is not text", setup: file("bad.txt", "caf\xe9 au lait\n"), path: "bad.txt", err: ErrNotText, msg: "invalid UTF-8 at byte offset 3"},
		{name: "a UTF-16 unpaired surrogate is not text", setup: file("s.txt", "\xFF\xFEa\x00\x00\xD8b\x00"), path: "s.txt", err: ErrNotText, msg: "surrogate at byte offset 4"},
		{name: "UTF-16 with an odd length is not text", setup: file("odd.txt", "\xFF\xFEa\x00b"), path: "odd.txt", err: ErrNotText},
		{name: "a UTF-16 NUL character means binary", setup: file("n.txt", utf16Bytes("a\x00b", false)), path: "n.txt", err: ErrBinary},
		{name: "UTF-32 is not text", setup: file("u32.txt", "\xFF\xFE\x00\x00a\x00\x00\x00"), path: "u32.txt", err: ErrNotText, msg: "UTF-32"},
		{name: "a file over the limit is too large", setup: file("big.txt", strings.Repeat("x", 17)), path: "big.txt", maxBytes: 16, err: ErrTooLarge, msg: "17 bytes, over the 16-byte limit"},
		{name: "a file at the limit is read", setup: file("big.txt", strings.Repeat("x", 16)), path: "big.txt", maxBytes: 16, want: strings.Repeat("x", 16), enc: UTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, root, outside, p, before := caseWS(t, tt.maxBytes, tt.setup, tt.path)
			f, err := within(t, func() (*File, error) { return w.ReadFile(p) })
			assertSameSnapshot(t, before, snapshot(t, root, outside))
			if tt.err != nil {
				assertErr(t, err, tt.err)
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("message %q does not contain %q", err, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(f.Text) != tt.want || f.Encoding != tt.enc {
				t.Errorf("got %q (%s), want %q (%s)", f.Text, f.Encoding, tt.want, tt.enc)
			}
			raw, err := os.ReadFile(filepath.Join(root, f.Path))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.Raw, raw) || f.Version != Version(raw) {
				t.Errorf("Raw/Version do not match the bytes on disk")
			}
			if !f.Mode.IsRegular() {
				t.Errorf("Mode = %v", f.Mode)
			}
		})
	}
}

func TestReadFileTextSharesRawForUTF8(t *testing.T) {
	w, root, _ := newWS(t)
	mustWrite(t, filepath.Join(root, "f"), "abc", 0o644)
	f, err := w.ReadFile("f")
	if err != nil {
		t.Fatal(err)
	}
	if &f.Text[0] != &f.Raw[0] {
		t.Error("Text is a copy of Raw")
	}
	// Appending to one must not write into the other.
	_ = append(f.Text, 'x')
	if len(f.Raw) != 3 || cap(f.Raw) != 3 {
		t.Errorf("Raw has len %d cap %d, want 3 3", len(f.Raw), cap(f.Raw))
	}
}

func TestReadFileUTF16RoundTripsThroughWrite(t *testing.T) {
	for _, big := range []bool{false, true} {
		w, root, _ := newWS(t)
		orig := utf16Bytes("line 1\r\nüñí 😀\n", big)
		mustWrite(t, filepath.Join(root, "u.txt"), orig, 0o644)
		f, err := w.ReadFile("u.txt")
		if err != nil {
			t.Fatal(err)
		}
		res, err := w.WriteFile("u.txt", f.Text, WriteOptions{Mode: ReplaceOnly, Encoding: f.Encoding})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(root, "u.txt"))
		if string(got) != orig || res.Version != f.Version {
			t.Errorf("big-endian=%v: rewrite changed the bytes: %q -> %q", big, orig, got)
		}
	}
}

func TestReadFileErrorsKeepOSCause(t *testing.T) {
	w, _, _ := newWS(t)
	_, err := w.ReadFile("missing")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("errors.Is(err, os.ErrNotExist) = false for %v", err)
	}
}

func TestReadFileFIFOSwappedInAfterStatDoesNotBlock(t *testing.T) {
	t.Parallel()
	var name string
	w, root, _ := newWS(t, withBeforeOpen(func(string) {
		if err := os.Remove(name); err != nil {
			t.Error(err)
		}
		if err := syscall.Mkfifo(name, 0o644); err != nil {
			t.Error(err)
		}
	}))
	name = filepath.Join(root, "f")
	mustWrite(t, name, "text\n", 0o644)
	_, err := within(t, func() (*File, error) { return w.ReadFile("f") })
	assertErr(t, err, ErrNotRegular)
}

func TestReadLimitedStopsAFileThatGrew(t *testing.T) {
	// fstat said 4 bytes, but 10 arrive: the limit of 8 must still hold.
	got, err := readLimited(strings.NewReader("0123456789"), 4, 8, nil)
	if got != nil || err != nil {
		t.Errorf("readLimited = %q, %v; want nil, nil", got, err)
	}
	got, err = readLimited(strings.NewReader("0123456"), 4, 8, nil)
	if string(got) != "0123456" || err != nil {
		t.Errorf("readLimited = %q, %v; want the 7 bytes", got, err)
	}
}

func TestReadFileWithKnownBytes(t *testing.T) {
	w, root, _ := newWS(t)
	mustWrite(t, filepath.Join(root, "a"), "alpha\n", 0o644)
	mustWrite(t, filepath.Join(root, "b"), "beta!\n", 0o644)
	mustWrite(t, filepath.Join(root, "bin"), "x\x00y", 0o644)

	// Not known: the file is checked and hashed as by ReadFile, and keeps
	// bytes of its own (later reads reuse the buffer the bytes were read
	// into to be compared).
	unknown := ReadOptions{Known: &Known{Version: "v-other", Text: []byte("other\n")}}
	a, err := w.ReadFileWith("a", unknown)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.ReadFileWith("b", unknown)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Text) != "alpha\n" || string(b.Text) != "beta!\n" || a.Version != Version([]byte("alpha\n")) {
		t.Errorf("a = %q %s, b = %q: a later read changed an earlier file's bytes, or the version is wrong", a.Text, a.Version, b.Text)
	}
	// The same over a run of files, each read while the earlier ones are
	// kept: the pool drops a buffer now and then (at random under the race
	// detector), not every one.
	var kept []*File
	for i := range 8 {
		name := fmt.Sprintf("run%d", i)
		mustWrite(t, filepath.Join(root, name), fmt.Sprintf("file %d\n", i), 0o644)
		f, err := w.ReadFileWith(name, unknown)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, f)
	}
	for i, f := range kept {
		if want := fmt.Sprintf("file %d\n", i); string(f.Text) != want || string(f.Raw) != want {
			t.Errorf("run%d = %q after later reads, want %q", i, f.Raw, want)
		}
	}
	if _, err := w.ReadFileWith("bin", unknown); !errors.Is(err, ErrBinary) {
		t.Errorf("binary file not known: err = %v, want ErrBinary", err)
	}

	// Known: its version is trusted and its bytes are returned, nothing is
	// hashed.
	mine := []byte("alpha\n")
	known := ReadOptions{Known: &Known{Version: "v-known", Text: mine}}
	k, err := w.ReadFileWith("a", known)
	if err != nil {
		t.Fatal(err)
	}
	if k.Version != "v-known" || &k.Text[0] != &mine[0] || &k.Raw[0] != &mine[0] || k.Encoding != UTF8 || k.Path != "a" {
		t.Errorf("known read = %+v, want the caller's version and bytes", k)
	}
	// Other bytes are not known, whatever their size.
	mustWrite(t, filepath.Join(root, "a"), "alphA\n", 0o644)
	k, err = w.ReadFileWith("a", known)
	if err != nil {
		t.Fatal(err)
	}
	if k.Version != Version([]byte("alphA\n")) || string(k.Text) != "alphA\n" {
		t.Errorf("changed file read as %q %s, want its own bytes and version", k.Text, k.Version)
	}
}

// A Known whose bytes equal the file's is used only for UTF-8 text: the
// text is checked as by ReadFile, so bytes that are not text are refused
// as they are without it, and a UTF-16 file is decoded and hashed (its
// bytes are not its text), whatever the caller says it knows.
func TestReadFileWithKnownChecksTheText(t *testing.T) {
	w, root, _ := newWS(t)
	utf16 := utf16Bytes("h\u00e9llo\n", false)
	for name, tc := range map[string]struct {
		content string
		err     error
	}{
		"bin":       {"x\x00y", ErrBinary},
		"latin1":    {"caf\xe9\n", ErrNotText},
		"utf16.txt": {utf16, nil},
	} {
		mustWrite(t, filepath.Join(root, name), tc.content, 0o644)
		f, err := w.ReadFileWith(name, ReadOptions{Known: &Known{Version: "v-known", Text: []byte(tc.content)}})
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if f.Version != Version([]byte(tc.content)) || f.Encoding != UTF16LE || string(f.Text) != "h\u00e9llo\n" {
			t.Errorf("%s: read as %q, %s, %s; want the decoded text, UTF-16LE and the bytes' own version", name, f.Text, f.Encoding, f.Version)
		}
	}
}
