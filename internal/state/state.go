// Package state owns a server's state directory: the files that belong to
// the server rather than to the workspace it serves and that outlive one
// run of it, such as the snapshots of file versions that rebases read
// (internal/versions Disk). There is one directory per workspace root, by
// default under the user's state directory; it is never inside the
// workspace (DESIGN.md: the server writes nothing into the workspace but
// the user's files), and it is private to the user, because what it holds
// decides how edits are applied.
package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/hashline/hashline/internal/versions"
)

// UserDir returns the user's directory for application state:
// $XDG_STATE_HOME when it is set (on any system), else ~/.local/state on
// Unix, %LocalAppData% on Windows and ~/Library/Application Support on
// macOS.
func UserDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return d, nil
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%LocalAppData% is not set; pass a state directory")
	case "darwin", "ios":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}

// DefaultDir returns the default state directory of the workspace root:
// UserDir/hashline/ and a hash of the root's absolute path with symlinks
// evaluated, so that every server of one workspace, by whatever path it was
// given, finds the same directory.
func DefaultDir(root string) (string, error) {
	base, err := DefaultBase()
	if err != nil {
		return "", err
	}
	abs, err := realRoot(root)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, hex.EncodeToString(sum[:8])), nil
}

// Dir is a state directory opened for one workspace.
type Dir struct {
	path string
}

// ErrInsideRoot is wrapped by the error Open returns for a state directory
// inside the workspace root.
var ErrInsideRoot = errors.New("the state directory is inside the workspace root")

// Open opens the state directory dir of the workspace rooted at root (its
// DefaultDir when dir is empty), creating it (mode 0700, with any missing
// parents) if needed. It refuses a
// directory inside root or equal to it, however it is reached (symlinks,
// another spelling of the same directory), before creating anything; and,
// on Unix, a directory that is not the user's own or that other users may
// write to, since its content steers edits.
func Open(dir, root string) (*Dir, error) {
	if dir == "" {
		d, err := DefaultDir(root)
		if err != nil {
			return nil, fmt.Errorf("no default state directory (%v); choose one", err)
		}
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	rootInfo, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	check := func() error {
		in, err := inside(abs, rootInfo)
		if err != nil {
			return fmt.Errorf("state directory %s: %w", abs, err)
		}
		if in {
			return fmt.Errorf("%w: %s is inside %s; the server writes nothing into the workspace but its files: choose a directory outside it", ErrInsideRoot, abs, root)
		}
		return nil
	}
	if err := check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	// Again, now that it exists: a directory created meanwhile under a
	// symlink cannot slip through.
	if err := check(); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	if err := private(real); err != nil {
		return nil, err
	}
	// Say which root the directory belongs to, for whoever lists or
	// prunes state directories (List, Prune).
	rr, err := realRoot(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	if err := writeRoot(real, rr); err != nil {
		return nil, err
	}
	return &Dir{path: real}, nil
}

// Path returns the directory's absolute path, symlinks evaluated.
func (d *Dir) Path() string { return d.path }

// Sub returns the path of the subdirectory name of d, created with mode
// 0700 if missing and checked as Open checks d.
func (d *Dir) Sub(name string) (string, error) {
	p := filepath.Join(d.path, name)
	if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("state directory: %w", err)
	}
	if err := private(p); err != nil {
		return "", err
	}
	return p, nil
}

// Snapshots opens the snapshot store kept in d (its "snapshots"
// subdirectory) with a budget of maxBytes; the caller closes it.
func (d *Dir) Snapshots(maxBytes int64) (*versions.Disk, error) {
	p, err := d.Sub("snapshots")
	if err != nil {
		return nil, err
	}
	return versions.OpenDisk(p, maxBytes)
}

// inside reports whether dir, which need not exist, is root or lies under
// it. It resolves the part of dir that exists (symlinks included) and
// compares every ancestor of that with root by identity, not by name, so
// that case-insensitive names, symlinks and bind mounts cannot hide the
// workspace. The part that does not exist yet has no links to follow.
func inside(dir string, root fs.FileInfo) (bool, error) {
	p := dir
	for {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false, nil
		}
		p = parent
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false, err
	}
	for q := real; ; q = filepath.Dir(q) {
		if fi, err := os.Stat(q); err == nil && os.SameFile(fi, root) {
			return true, nil
		}
		if filepath.Dir(q) == q {
			return false, nil
		}
	}
}
