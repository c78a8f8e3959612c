//go:build linux

package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFileVersion(t *testing.T) {
	w, root, outside := newWS(t, WithMaxFileBytes(16))
	big := bytes.Repeat([]byte("0123456789\n"), 100) // over the 16-byte limit
	mustWrite(t, filepath.Join(root, "big.txt"), string(big), 0o644)
	// Read in several pieces and hashed as a stream: many BLAKE3 chunks.
	huge := bytes.Repeat([]byte("0123456789abcde\n"), 20_000)
	mustWrite(t, filepath.Join(root, "huge.txt"), string(huge), 0o644)
	mustWrite(t, filepath.Join(root, "bin"), "a\x00b", 0o644)
	mustWrite(t, filepath.Join(root, "small.txt"), "hi\n", 0o644)
	mustSymlink(t, "small.txt", filepath.Join(root, "link"))
	mustSymlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(root, "out"))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       []byte // the bytes whose Version is expected
		err        error
	}{
		{"a file over the size limit is hashed whole", "big.txt", big, nil},
		{"a 320 KB file streamed gives Version of its bytes", "huge.txt", huge, nil},
		{"a binary file is hashed", "bin", []byte("a\x00b"), nil},
		{"a symlink inside the root gives its target's version", "link", []byte("hi\n"), nil},
		{"a symlink out of the root is refused", "out", nil, ErrOutsideRoot},
		{"a missing file is not found", "nope", nil, ErrNotFound},
		{"a FIFO is refused without blocking", "fifo", nil, ErrNotRegular},
		{"a directory is refused", ".", nil, ErrNotRegular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := within(t, func() (string, error) { return w.FileVersion(tc.path) })
			if tc.err != nil {
				assertErr(t, err, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := Version(tc.want); got != want {
				t.Errorf("FileVersion = %s, want Version of the bytes %s", got, want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	w, root, outside := newWS(t)
	if err := os.MkdirAll(filepath.Join(root, "real", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, "real", filepath.Join(root, "alias"))
	mustSymlink(t, outside, filepath.Join(root, "escape"))
	for _, tc := range []struct {
		name, path, want string
		exists           bool
		err              error
	}{
		{"a directory resolves to itself", "real/sub", "real/sub", true, nil},
		{"a linked directory resolves to its target", "alias/sub", "real/sub", true, nil},
		{"a missing path is its lexical path", "alias/new.txt", "real/new.txt", false, nil},
		{"a link out of the root is refused", "escape/secret.txt", "", false, ErrOutsideRoot},
		{"dot-dot out of the root is refused", "../x", "", false, ErrOutsideRoot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, fi, err := w.Resolve(tc.path)
			if tc.err != nil {
				assertErr(t, err, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || (fi != nil) != tc.exists {
				t.Errorf("Resolve(%q) = %q, exists %v; want %q, exists %v", tc.path, got, fi != nil, tc.want, tc.exists)
			}
		})
	}
}
