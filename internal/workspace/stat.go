package workspace

import (
	"encoding/hex"
	"io"
	"io/fs"
	"os"

	"github.com/zeebo/blake3"
)

// Resolve follows p inside the root as ReadFile and WriteFile do and
// returns the symlink-free relative path of what it names, with its Lstat
// info. A path that does not exist (yet) is not an error: it comes back as
// the path of what would be created, with a nil FileInfo. Paths and
// symlinks leading outside the root are ErrOutsideRoot; version-control
// metadata is ErrVCSPath unless the workspace reads it (WithVCSRead).
func (w *Workspace) Resolve(p string) (string, fs.FileInfo, error) {
	const op = "resolve"
	rel, err := w.rel(op, p)
	if err != nil {
		return "", nil, err
	}
	return w.resolve(op, rel, true, true)
}

// Stat is Resolve for a path that must exist: it follows p inside the root
// as ReadFile does and returns the symlink-free relative path of the file
// or directory it names, with its Lstat info, refusing what ReadFile
// refuses on the way there (ErrNotFound for a missing path, ErrInvalidPath
// for a symlink loop, ErrOutsideRoot, ErrVCSPath).
func (w *Workspace) Stat(p string) (string, fs.FileInfo, error) {
	const op = "stat"
	rel, err := w.rel(op, p)
	if err != nil {
		return "", nil, err
	}
	return w.resolve(op, rel, false, true)
}

// FileVersion returns the version of the regular file at p, as Version of
// its bytes, reading it as a stream: unlike ReadFile it takes files of any
// size and content (binary, not text). It never blocks on a FIFO.
func (w *Workspace) FileVersion(p string) (string, error) {
	const op = "version"
	rel, err := w.rel(op, p)
	if err != nil {
		return "", err
	}
	target, fi, err := w.resolve(op, rel, false, true)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", notRegular(op, rel, fi.Mode())
	}
	f, err := w.root.OpenFile(target, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return "", osErr(op, rel, "", err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return "", osErr(op, rel, "", err)
	}
	if !fi.Mode().IsRegular() {
		return "", notRegular(op, rel, fi.Mode())
	}
	h := blake3.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", osErr(op, rel, "", err)
	}
	return versionOfSum(h.Sum(nil)), nil
}

// versionOfSum formats a BLAKE3 sum as a version token; Version and
// FileVersion share it so the two cannot drift apart.
func versionOfSum(sum []byte) string {
	return "v2-" + hex.EncodeToString(sum[:16])
}
