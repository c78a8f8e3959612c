package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// rootFile names the file in a state directory that holds the absolute
// path of the workspace root it belongs to: the directory's own name is a
// hash of that path, which says nothing to a person cleaning up.
const rootFile = "root"

// writeRoot records root in the state directory dir, atomically (a temp
// file renamed into place), unless it already says so.
func writeRoot(dir, root string) error {
	p := filepath.Join(dir, rootFile)
	if b, err := os.ReadFile(p); err == nil && string(b) == root+"\n" {
		return nil
	}
	f, err := os.CreateTemp(dir, ".root-*")
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	_, werr := f.WriteString(root + "\n")
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("state directory: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}

// realRoot is root as writeRoot records it: absolute, symlinks evaluated
// (as DefaultDir hashes it).
func realRoot(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// Entry is a state directory found under the user's state directory.
type Entry struct {
	// Path is the state directory.
	Path string
	// Root is the workspace root it records, "" when it has no root file
	// (made by a version that wrote none, or not a state directory).
	Root string
	// RootGone is true when Root is recorded and no longer exists.
	RootGone bool
	// InUse is true when an engine holds it (its engine or intent log lock).
	InUse bool
}

// List returns the state directories under base (DefaultBase when base is
// empty), sorted by path.
func List(base string) ([]Entry, error) {
	if base == "" {
		b, err := DefaultBase()
		if err != nil {
			return nil, err
		}
		base = b
	}
	des, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		e := Entry{Path: filepath.Join(base, de.Name())}
		if b, err := os.ReadFile(filepath.Join(e.Path, rootFile)); err == nil {
			e.Root = strings.TrimSuffix(string(b), "\n")
			if _, err := os.Stat(e.Root); errors.Is(err, fs.ErrNotExist) {
				e.RootGone = true
			}
		}
		release, err := lockIfPresent(e.Path)
		if errors.Is(err, errLocked) {
			e.InUse = true
		} else if err != nil {
			return nil, err
		} else {
			release()
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// DefaultBase is the directory DefaultDir makes state directories in.
func DefaultBase() (string, error) {
	user, err := UserDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(user, "hashline"), nil
}

// lockIfPresent takes the locks an engine of the state directory dir
// holds, those whose files exist (without creating anything): the
// workspace engine's (engine.lock, internal/daemon) and the intent log's.
// It returns how to release them; errLocked when an engine holds either.
func lockIfPresent(dir string) (release func() error, err error) {
	var held []*os.File
	release = func() error {
		for _, f := range held {
			f.Close()
		}
		return nil
	}
	for _, name := range []string{"engine.lock", filepath.Join("intents", "lock")} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			release()
			return nil, err
		}
		if err := lockFile(f); err != nil {
			f.Close()
			release()
			return nil, err
		}
		held = append(held, f)
	}
	return release, nil
}

// Prune removes the state directories under base (DefaultBase when empty)
// whose recorded root no longer exists, and, with unknown, those that
// record no root; never one an engine holds (its engine or intent log
// lock; the locks are kept while the directory is removed). With dryRun it removes nothing.
// It returns the entries it removed (or would remove), and those it kept
// because an engine holds them.
func Prune(base string, unknown, dryRun bool) (removed, busy []Entry, err error) {
	entries, err := List(base)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if !e.RootGone && !(unknown && e.Root == "") {
			continue
		}
		release, err := lockIfPresent(e.Path)
		if errors.Is(err, errLocked) {
			busy = append(busy, e)
			continue
		}
		if err != nil {
			return removed, busy, err
		}
		if !dryRun {
			err = os.RemoveAll(e.Path)
		}
		release()
		if err != nil {
			return removed, busy, fmt.Errorf("removing %s: %w", e.Path, err)
		}
		removed = append(removed, e)
	}
	return removed, busy, nil
}
