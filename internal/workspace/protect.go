package workspace

import (
	"errors"
	"io/fs"
)

// MayChange checks that the server may change the file at target (the
// symlink-free path Entry returned for rel): replace it (WriteFile, Stage,
// and a move's overwritten target), remove it (a delete) or move it away
// from its name (a move's source). It is the one rule for every change
// that replaces or removes a file, so that a file the server may not
// change is left as it is whatever the call: its mode must have a write
// bit (root too keeps to a mode of 0444), it must not be immutable or
// append-only, and the server's user must be able to open it for writing.
// Otherwise it returns ErrNotWritable, saying which. A rename or an unlink
// needs only the directory's permission, so without this check a server
// could move or delete a file it could not write.
//
// Only regular files are checked: anything else at target (nothing, a
// symbolic link, which is itself the entry, or a directory) is nil here,
// and the caller's own checks decide. op names the call in the error.
func (w *Workspace) MayChange(op, rel, target string) error {
	fi, err := w.root.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return osErr(op, rel, "", err)
	case !fi.Mode().IsRegular():
		return nil
	}
	return w.mayChange(op, rel, target)
}
