package workspace

import (
	"errors"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// The inode flags (chattr) that forbid replacing a file; linux/fs.h.
const (
	fsImmutableFl = 0x10 // FS_IMMUTABLE_FL, chattr +i
	fsAppendFl    = 0x20 // FS_APPEND_FL, chattr +a
)

// checkInodeFlags refuses an immutable or append-only file. The rename
// would fail on either (EPERM) once the temp file is written; this says
// why, before writing it. A filesystem without the flags has none set.
func checkInodeFlags(op, rel string, fd int) error {
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	switch {
	case err != nil:
		return nil
	case flags&fsImmutableFl != 0:
		return newErr(op, rel, ErrNotWritable, "the file is immutable (chattr +i): nobody may change it; leave it as it is, or ask the operator to clear the flag (chattr -i) if it must change")
	case flags&fsAppendFl != 0:
		return newErr(op, rel, ErrNotWritable, "the file is append-only (chattr +a): it may only grow in place, and the server replaces files whole; leave it as it is, or ask the operator to clear the flag (chattr -a) if it must change")
	}
	return nil
}

// writeAccess reports whether the server's user could open the file fd
// (at target) for writing, as the kernel decides it: mode bits, ACLs, a
// read-only mount. It asks faccessat2 with the effective ids rather than
// opening the file for writing, which has effects of its own: it breaks a
// lease another process holds on the file, wakes inotify watchers with a
// close-after-write, and fails on a running executable (ETXTBSY) that a
// rename may replace. Where faccessat2 is missing (Linux before 5.8, or a
// seccomp filter that refuses it), faccessat(2) answers for the real ids,
// which are the effective ones in a server that did not change them;
// otherwise nothing is checked here, and the rename still answers. It
// returns nil or the kernel's refusal (EACCES, EPERM, EROFS).
func (w *Workspace) writeAccess(fd int, target string) error {
	err := unix.Faccessat2(fd, "", unix.W_OK, unix.AT_EACCESS|unix.AT_EMPTY_PATH)
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EINVAL) {
		return refusal(err)
	}
	if os.Getuid() != os.Geteuid() || os.Getgid() != os.Getegid() {
		return nil
	}
	d, derr := w.root.Open(path.Dir(target))
	if derr != nil {
		return nil
	}
	defer d.Close()
	return refusal(unix.Faccessat(int(d.Fd()), path.Base(target), unix.W_OK, 0))
}

// refusal keeps the errors of an access check that mean "no"; any other
// (the file vanished meanwhile, an I/O error) is left to the write itself.
func refusal(err error) error {
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
		return err
	}
	return nil
}
