//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// openNonblock makes opening a FIFO return at once instead of waiting for a
// writer; it has no effect on regular files.
const openNonblock = syscall.O_NONBLOCK

// whoami names the server's user in error messages.
func whoami() string { return "uid " + strconv.Itoa(os.Geteuid()) }

// inspectReplaced checks that the existing file target may be replaced and
// reads what the new file must keep of it. The file is opened for reading
// (as a read would) and everything is decided from that descriptor: the
// server may change it (mayChangeOpen), and its owner, group and extended
// attributes are what the temp file gets.
func (w *Workspace) inspectReplaced(op, rel, target string) (*kept, error) {
	f, fi, err := w.openChanged(op, rel, target)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fd := int(f.Fd())
	k := &kept{mode: fi.Mode() & keptModeBits, uid: -1, gid: -1}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.uid, k.gid = int(st.Uid), int(st.Gid)
	}
	if k.xattrs, err = readXattrs(fd); err != nil {
		return nil, osErr(op, rel, "", err)
	}
	return k, nil
}

// openChanged opens the regular file target, which a change is to replace,
// remove or move away, and checks on that descriptor that the server may
// change it: its mode has a write bit, it is not immutable or append-only,
// and the server's user could open it for writing (writeAccess). The
// caller closes the file.
func (w *Workspace) openChanged(op, rel, target string) (*os.File, fs.FileInfo, error) {
	f, err := w.root.OpenFile(target, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, osErr(op, rel, "", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(op, rel, fi.Mode())
	}
	if err == nil {
		err = checkWriteBits(op, rel, fi)
	}
	if err == nil {
		err = checkInodeFlags(op, rel, int(f.Fd()))
	}
	if err == nil {
		if aerr := w.writeAccess(int(f.Fd()), target); aerr != nil {
			err = notWritable(op, rel, aerr)
		}
	}
	if err != nil {
		f.Close()
		return nil, nil, osErr(op, rel, "", err)
	}
	return f, fi, nil
}

// keepMeta gives the new file f the owner, group and extended attributes
// of the file it replaces. Chown comes first: it clears the setuid and
// setgid bits (restored by the chmod after) and the file capabilities
// (security.capability, one of the attributes set after it).
func keepMeta(op, rel string, f *os.File, k *kept) error {
	if err := keepOwner(f, k); err != nil {
		return ownerNotKept(op, rel, k, err)
	}
	return setXattrs(op, rel, int(f.Fd()), k.xattrs)
}

// keepOwner gives f the owner and group k names, when they differ from the
// new file's: a file created in a setgid directory takes the directory's
// group, so the new file's are compared, not the server's. A server that is
// not root may give its own files a group it is in; any other change fails
// (EPERM), and the write is refused rather than change the file's owner.
func keepOwner(f *os.File, k *kept) error {
	if k.uid < 0 {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if cur, ok := fi.Sys().(*syscall.Stat_t); ok && int(cur.Uid) == k.uid && int(cur.Gid) == k.gid {
		return nil
	}
	err = f.Chown(k.uid, k.gid)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the temp file's name means nothing to the caller
	}
	return err
}

// mayChange is MayChange's check (see openChanged).
func (w *Workspace) mayChange(op, rel, target string) error {
	f, _, err := w.openChanged(op, rel, target)
	if err != nil {
		return err
	}
	_ = f.Close() // read-only: nothing was written to lose
	return nil
}
