//go:build !unix

package workspace

import (
	"io/fs"
	"os"
)

// openNonblock is zero where there are no FIFOs to block on.
const openNonblock = 0

// inspectReplaced checks that the existing file target may be replaced and
// reads what the new file must keep of it: here, where files have no Unix
// owner and no extended attributes the server copies, its mode (a file
// with the read-only attribute has no write bit).
func (w *Workspace) inspectReplaced(op, rel, target string) (*kept, error) {
	fi, err := w.statChanged(op, rel, target)
	if err != nil {
		return nil, err
	}
	return &kept{mode: fi.Mode() & keptModeBits, uid: -1, gid: -1}, nil
}

// statChanged checks that the server may change the regular file target,
// which a change is to replace, remove or move away: here, that its mode
// has a write bit (a file with the read-only attribute has none).
func (w *Workspace) statChanged(op, rel, target string) (fs.FileInfo, error) {
	fi, err := w.root.Stat(target)
	if err != nil {
		return nil, osErr(op, rel, "", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(op, rel, fi.Mode())
	}
	if err := checkWriteBits(op, rel, fi); err != nil {
		return nil, err
	}
	return fi, nil
}

// mayChange is MayChange's check (see statChanged).
func (w *Workspace) mayChange(op, rel, target string) error {
	_, err := w.statChanged(op, rel, target)
	return err
}

// keepMeta has nothing to keep here but the mode, which fill sets.
func keepMeta(string, string, *os.File, *kept) error { return nil }
