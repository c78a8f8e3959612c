//go:build linux

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newWS opens a workspace on a fresh temp dir and returns it with its root
// and a sibling "outside" directory that holds a file no operation may touch.
func newWS(t testing.TB, opts ...Option) (w *Workspace, root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(t, filepath.Join(outside, "secret.txt"), "secret\n", 0o644)
	w, err := Open(root, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, root, outside
}

func mustWrite(t testing.TB, name, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(name, mode); err != nil { // undo the umask
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// snapshot describes every entry under dirs (type, mode, bytes, link
// target) without following links or opening special files, so a test can
// assert that a failed operation changed nothing on disk.
func snapshot(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	s := map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			desc := fi.Mode().String()
			switch {
			case fi.Mode().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				desc += " " + string(b)
			case fi.Mode()&fs.ModeSymlink != 0:
				l, err := os.Readlink(p)
				if err != nil {
					return err
				}
				desc += " -> " + l
			}
			s[p] = desc
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func assertSameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok {
			t.Errorf("%s disappeared", p)
		} else if a != b {
			t.Errorf("%s changed:\nbefore %q\nafter  %q", p, b, a)
		}
	}
	for p, a := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s appeared: %q", p, a)
		}
	}
}

func assertNoTemp(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && IsTempName(d.Name()) {
				t.Errorf("temp file left behind: %s", p)
			}
			return nil
		})
	}
}

// assertErr checks the sentinel and that the message names the operation
// and reads as advice (it has a "; " clause saying what to do).
func assertErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	var we *Error
	if !errors.As(err, &we) {
		t.Fatalf("err %T is not *Error", err)
	}
	if n := countSentinels(err); n != 1 {
		t.Errorf("err %v wraps %d sentinels, want 1", err, n)
	}
	if !strings.Contains(we.Error(), "; ") {
		t.Errorf("message %q does not say what to do", we.Error())
	}
}

var sentinels = []error{ErrNotFound, ErrExists, ErrOutsideRoot, ErrNotRegular, ErrBinary,
	ErrNotText, ErrTooLarge, ErrInvalidPath, ErrPermission, ErrNotWritable, ErrIO, ErrVCSPath}

func countSentinels(err error) int {
	n := 0
	for _, s := range sentinels {
		if errors.Is(err, s) {
			n++
		}
	}
	return n
}

// within runs f and fails the test if it takes over 5s, so a read that
// blocks on a FIFO fails instead of hanging the test binary.
func within[T any](t *testing.T, f func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(5 * time.Second):
		t.Fatal("operation blocked for 5s")
		panic("unreachable")
	}
}

// caseWS opens a workspace for one table case: with a file-size limit if
// maxBytes > 0, after setup has prepared root and outside, and with $ROOT
// and $OUT in path replaced. It returns the path and a snapshot of both
// directories taken before the call under test.
func caseWS(t *testing.T, maxBytes int64, setup func(t *testing.T, root, outside string), path string) (w *Workspace, root, outside, p string, before map[string]string) {
	t.Helper()
	var opts []Option
	if maxBytes > 0 {
		opts = append(opts, WithMaxFileBytes(maxBytes))
	}
	w, root, outside = newWS(t, opts...)
	if setup != nil {
		setup(t, root, outside)
	}
	p = strings.NewReplacer("$ROOT", root, "$OUT", outside).Replace(path)
	return w, root, outside, p, snapshot(t, root, outside)
}
