//go:build linux

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRel(t *testing.T) {
	w, root, _ := newWS(t)
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"a relative path is kept", "a/b.go", "a/b.go", nil},
		{"a leading ./ is dropped", "./a", "a", nil},
		{"dot-dot inside the root is cleaned", "a/../b", "b", nil},
		{"duplicate and trailing slashes are cleaned", "a//b/", "a/b", nil},
		{"surrounding spaces are trimmed", "  a/b.go \t", "a/b.go", nil},
		{"dot is the root", ".", ".", nil},
		{"an absolute path inside the root is made relative", filepath.Join(root, "a", "b.go"), "a/b.go", nil},
		{"the root's absolute path is the root", root, ".", nil},
		{"an absolute path with dot-dot inside is cleaned", root + "/x/../a", "a", nil},
		{"dot-dot climbing out is refused", "../x", "", ErrOutsideRoot},
		{"dot-dot climbing out later is refused", "a/../../x", "", ErrOutsideRoot},
		{"an absolute path outside is refused", "/etc/passwd", "", ErrOutsideRoot},
		{"a sibling sharing the root's prefix is refused", root + "x/a", "", ErrOutsideRoot},
		{"an absolute path climbing out is refused", root + "/../outside/secret.txt", "", ErrOutsideRoot},
		{"an empty path is invalid", "", "", ErrInvalidPath},
		{"a blank path is invalid", "   ", "", ErrInvalidPath},
		{"a NUL byte is invalid", "a\x00b", "", ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := w.Rel(tt.in)
			if tt.err != nil {
				assertErr(t, err, tt.err)
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Rel(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestRelWithSymlinkedRoot(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	mustSymlink(t, real, link)
	w, err := Open(link)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Dir() != link {
		t.Errorf("Dir() = %q, want %q", w.Dir(), link)
	}
	for _, in := range []string{link + "/a/b", real + "/a/b"} {
		if got, err := w.Rel(in); err != nil || got != "a/b" {
			t.Errorf("Rel(%q) = %q, %v; want a/b", in, got, err)
		}
	}
	if _, err := w.Rel(filepath.Dir(real)); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("Rel(parent of real root) = %v, want ErrOutsideRoot", err)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	mustWrite(t, file, "x", 0o644)
	tests := []struct {
		name, root string
		err        error
	}{
		{"a missing root is not found", filepath.Join(dir, "missing"), ErrNotFound},
		{"a file as root is invalid", file, ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(tt.root)
			assertErr(t, err, tt.err)
		})
	}
	t.Run("a relative root is made absolute", func(t *testing.T) {
		w, err := Open(".")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		wd, _ := os.Getwd()
		if w.Dir() != wd || w.Root() == nil {
			t.Errorf("Dir() = %q, want %q", w.Dir(), wd)
		}
	})
}

func TestVersion(t *testing.T) {
	// BLAKE3("abc") starts 6437b3ac38465133ffb63b75273a8db5 (the published
	// test vector); a fixed value proves tokens are the same across runs
	// and machines.
	if got, want := Version([]byte("abc")), "v2-6437b3ac38465133ffb63b75273a8db5"; got != want {
		t.Errorf("Version(abc) = %q, want %q", got, want)
	}
	if Version([]byte("abc")) == Version([]byte("abd")) {
		t.Error("different content, same version")
	}
	if Version(nil) != Version([]byte{}) {
		t.Error("nil and empty differ")
	}
}

func TestIsTempName(t *testing.T) {
	const exact = ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp" // 26 of A-Z
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"a name of the exact form is a temp name", exact, true},
		{"the digits 2 to 7 are in the alphabet", ".hashline-234567234567234567234567AB.tmp", true},
		{"a temp name in a directory is one", "dir/sub/" + exact, true},
		{"a user's notes are not", ".hashline-notes.tmp", false},
		{"an empty random part is not", ".hashline-.tmp", false},
		{"three characters are not", ".hashline-ABC.tmp", false},
		{"25 characters are not", ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXY.tmp", false},
		{"27 characters are not", ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZA.tmp", false},
		{"lower case is not", ".hashline-abcdefghijklmnopqrstuvwxyz.tmp", false},
		{"the digits 0, 1, 8 and 9 are not", ".hashline-0123456789ABCDEFGHIJKLMNOP.tmp", false},
		{"base32 padding is not", ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXY=.tmp", false},
		{"a non-ASCII character is not", ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXé.tmp", false},
		{"another suffix is not", ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.TMP", false},
		{"a name that goes on is not", exact + ".bak", false},
		{"a name with something before it is not", "x" + exact, false},
		{"a directory of that name with a file in it is the file's name", "a/" + exact + "/b", false},
		{"an ordinary file is not", "main.go", false},
		{"the empty name is not", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTempName(tt.path); got != tt.want {
				t.Errorf("IsTempName(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
	t.Run("every name WriteFile makes is a temp name", func(t *testing.T) {
		for range 1000 {
			if n := tempName(); !IsTempName(n) || len(n) != 40 {
				t.Fatalf("tempName() = %q (%d bytes): IsTempName says %v", n, len(n), IsTempName(n))
			}
		}
	})
}

func TestErrorMessage(t *testing.T) {
	w, _, _ := newWS(t)
	_, err := w.ReadFile("a/b.go")
	want := `read "a/b.go": no such file; check the path (paths are relative to the workspace root)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
}
