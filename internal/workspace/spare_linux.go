package workspace

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// spares is a workspace's pool of spare files (WithSpareFiles). A writer
// takes one, fills it and renames it over its target; the worker makes new
// ones, after the writes.
type spares struct {
	mu      sync.Mutex
	state   spareState
	started bool // the worker was started (done will be closed)
	// refilling: a refill is scheduled and has not run yet.
	refilling bool
	dir       *os.File // SpareDir, open from the first top-up until close
	dirFd     int
	dev       uint64    // the device of dir: only files on it can take a spare's place
	traits    dirTraits // what a file created in dir takes from it
	ready     []*spare
	served    int // writes done through a spare, for tests
	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
}

// spare is an empty file the worker created, and keeps open for writing.
type spare struct {
	f    *os.File
	name string // in SpareDir
	ino  uint64
}

type spareState int

const (
	spareIdle spareState = iota // no replace yet: nothing made
	spareOn
	spareOff // the directory could not be made or is not the server's alone
)

// spareRename is renameat(2), replaced by tests to make it fail.
var spareRename = unix.Renameat

func newSpares() *spares {
	return &spares{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// writeSpare is WriteFile's durable replace of the existing file target
// (old is its Lstat) through a spare file. It reports false, having done
// nothing, when it cannot use one, and the caller writes a temporary file
// instead; otherwise the write is done, or failed with err.
func (w *Workspace) writeSpare(op, rel, target string, raw []byte, mode fs.FileMode, old fs.FileInfo, opts WriteOptions) (bool, error) {
	s := w.spare
	if s == nil || !w.opts.fsync || len(raw) == 0 {
		// Without fsync no spare is used: the temp file is allocated
		// before it is filled instead (fill), which saves more.
		// An empty file is not written through one, so that an empty
		// file in the spare directory is always a spare.
		return false, nil
	}
	// Whatever happens, the pool is topped up once the write is over.
	defer s.refill(w)
	if !s.anyReady() {
		return false, nil // the directory is not opened for nothing
	}
	dir := path.Dir(target)
	d, err := w.root.Open(dir)
	if err != nil {
		return false, nil // the usual way reports it
	}
	defer d.Close()
	dfi, err := d.Stat()
	if err != nil {
		return false, nil
	}
	tdir := int(d.Fd())
	sp := s.take(old, dfi, tdir)
	if sp == nil {
		return false, nil
	}
	// drop removes the spare when it will not become the file.
	drop := func() { _ = unix.Unlinkat(s.dirFd, sp.name, 0) }
	// fill closes the file.
	if err := w.fill(op, rel, sp.f, raw, mode, old); err != nil {
		drop()
		return true, err
	}
	if testHookBeforeRename != nil {
		if err := testHookBeforeRename(target); err != nil {
			drop()
			return true, osErr(op, rel, "", err)
		}
	}
	// Write the content again, the usual way, when the spare is gone or
	// not what was filled (someone removed or replaced it), or the rename
	// fails (a directory in the file's place now, a directory that refuses
	// renames from others): the temp file's rename gives the usual answers.
	again := func() (bool, error) {
		return true, w.writeRenamed(op, rel, target, raw, mode, old, opts, false)
	}
	if !sameInode(s.dirFd, sp.name, sp.ino, s.dev) {
		return again()
	}
	// The directory was opened before the write: it must still be the
	// one the path leads to inside the root, not one moved elsewhere.
	if fi, err := w.root.Lstat(dir); err != nil || !os.SameFile(fi, dfi) {
		drop()
		return again()
	}
	// The replaced file is held across the rename, so that the rename does
	// not free its blocks (release.go).
	defer w.holdReplaced(target)()
	if err := spareRename(s.dirFd, sp.name, tdir, path.Base(target)); err != nil {
		drop()
		return again()
	}
	s.mu.Lock()
	s.served++
	s.mu.Unlock()
	if err := d.Sync(); err != nil {
		return true, syncFailed(op, rel, dir, err)
	}
	return true, nil
}

// anyReady reports whether a spare may be ready: the pool is on and not
// empty. take decides.
func (s *spares) anyReady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state != spareOff && s.dir != nil && len(s.ready) > 0
}

// take returns a ready spare for a file like old in the directory dfi,
// open as tdir, or nil (always before the first refill). A spare is only
// for files on its device, in a directory that gives a new file what the
// spare directory gave the spare (dirTraits): otherwise the new file would
// differ from one made beside it.
func (s *spares) take(old, dfi fs.FileInfo, tdir int) *spare {
	st, _ := old.Sys().(*syscall.Stat_t)
	if st == nil {
		return nil
	}
	s.mu.Lock()
	if s.state == spareOff {
		s.mu.Unlock()
		return nil
	}
	ok := s.dir != nil && uint64(st.Dev) == s.dev && len(s.ready) > 0
	want := s.traits
	s.mu.Unlock()
	if !ok || traitsOf(tdir, dfi) != want {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ready) == 0 || s.state == spareOff {
		return nil
	}
	sp := s.ready[len(s.ready)-1]
	s.ready = s.ready[:len(s.ready)-1]
	return sp
}

// refill has the worker top the pool up (the first call starts it),
// shortly after the write that calls it has returned (afterWrite): making a
// spare syncs it, and beside the write's own fsyncs that one would delay
// them.
func (s *spares) refill(w *Workspace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refilling || s.state == spareOff {
		return
	}
	s.refilling = true
	w.afterWrite(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.refilling = false
		if s.state != spareOff {
			s.start(w)
		}
	})
}

// dirTraits is what a file created in a directory takes from it, besides
// what WriteFile sets (mode, owner and group, when it may).
type dirTraits struct {
	gid   uint32 // the group: the directory's if it is setgid, else the server's
	acl   bool   // the directory has a default ACL
	label string // the SELinux label, which a new file's derives from
	flags uint32 // the inode flags new files inherit (chattr: no COW, sync, ...)
}

// inheritedFlags are the inode flags (FS_*_FL) a new file takes from its
// directory: SECRM, UNRM, COMPR, SYNC, NODUMP, NOATIME, NOCOMP,
// JOURNAL_DATA, NOTAIL, NOCOW, DAX and PROJINHERIT.
const inheritedFlags = 0x1 | 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x400 | 0x4000 | 0x8000 | 0x800000 | 0x2000000 | 0x20000000

// traitsOf reads the traits of the directory fi, open as fd.
func traitsOf(fd int, fi fs.FileInfo) dirTraits {
	t := dirTraits{gid: uint32(os.Getegid())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode()&fs.ModeSetgid != 0 {
		t.gid = st.Gid
	}
	n, err := unix.Fgetxattr(fd, "system.posix_acl_default", nil)
	t.acl = err == nil && n > 0
	t.label = selinuxLabel(fd)
	if flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS); err == nil {
		t.flags = flags & inheritedFlags
	}
	return t
}

// selinuxLabel returns the SELinux label of the open file fd, "" if it has
// none, or a string no label equals if it cannot be read.
func selinuxLabel(fd int) string {
	n, err := unix.Fgetxattr(fd, "security.selinux", nil)
	if err != nil || n <= 0 {
		return ""
	}
	buf := make([]byte, n)
	if n, err = unix.Fgetxattr(fd, "security.selinux", buf); err != nil {
		return "\x00unreadable"
	}
	return string(buf[:n])
}

// start starts the worker if it is not running yet, and wakes it; s.mu is
// held.
func (s *spares) start(w *Workspace) {
	if s.state == spareIdle {
		s.state, s.started = spareOn, true
		go s.run(w)
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// run is the worker: each time it is woken it tops the pool up.
func (s *spares) run(w *Workspace) {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		if err := s.topUp(w); err != nil {
			s.mu.Lock()
			s.state = spareOff
			s.mu.Unlock()
			return
		}
	}
}

// topUp makes the directory on its first run, then spare files until
// spareFiles are ready: each created empty and synced, so that a writer's
// fsync of a spare has little but its content to write (on ext4 without a
// journal, a new file's first fsync also writes its directory). Whether a
// spare's name survives a crash does not matter, so the directory itself
// is not synced.
func (s *spares) topUp(w *Workspace) error {
	if s.dir == nil {
		d, fi, err := w.openSpareDir()
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.dir, s.dirFd, s.dev, s.traits = d, int(d.Fd()), uint64(fi.Sys().(*syscall.Stat_t).Dev), traitsOf(int(d.Fd()), fi)
		s.mu.Unlock()
	}
	s.mu.Lock()
	need := spareFiles - len(s.ready)
	s.mu.Unlock()
	// A spare can be lost to another server between its creation and its
	// lock (makeSpare); each loss costs one more try, up to need more.
	for tries := 2 * need; need > 0 && tries > 0; tries-- {
		sp, err := s.makeSpare()
		if err != nil {
			return err
		}
		if sp == nil {
			continue
		}
		s.mu.Lock()
		s.ready = append(s.ready, sp)
		s.mu.Unlock()
		need--
	}
	return nil
}

// testHookSpareCreated, if set, runs between a spare's creation and its
// lock, so tests can play another server there.
var testHookSpareCreated func(dirFd int, name string)

// makeSpare creates, locks and syncs one spare file. It returns nil, and no
// error, when another server took the new file for a killed server's
// leftover before it was locked (removeStaleSpare): that server holds the
// lock, or has removed the name already.
func (s *spares) makeSpare() (*spare, error) {
	name := tempPrefix + rand.Text() + tempSuffix
	fd, err := unix.Openat(s.dirFd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if testHookSpareCreated != nil {
		testHookSpareCreated(s.dirFd, name)
	}
	// The lock tells other servers sharing the directory that the spare is
	// in use (removeStaleSpare); it goes with the descriptor.
	var st unix.Stat_t
	err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		err = unix.Fstat(fd, &st)
	}
	if errors.Is(err, unix.EWOULDBLOCK) || err == nil && !sameInode(s.dirFd, name, st.Ino, uint64(st.Dev)) {
		_ = unix.Close(fd)
		return nil, nil
	}
	if err == nil {
		err = unix.Fsync(fd)
	}
	if err != nil {
		_ = unix.Close(fd)
		_ = unix.Unlinkat(s.dirFd, name, 0)
		return nil, err
	}
	return &spare{f: os.NewFile(uintptr(fd), path.Join(SpareDir, name)), name: name, ino: st.Ino}, nil
}

// sameInode reports whether name in the directory dirFd is the file with
// inode number ino on device dev (not a symlink to it).
func sameInode(dirFd int, name string, ino, dev uint64) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirFd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Ino == ino && uint64(st.Dev) == dev
}

// spareIgnore is the .gitignore in SpareDir.
const spareIgnore = "# hashline keeps spare files here while it runs, and removes them when it stops.\n*\n"

// openSpareDir makes SpareDir (if missing) with its .gitignore and opens
// it. It must be a plain directory that only the server's user can write
// to, since whoever can put files in it could have them written and
// renamed into the tree. A default ACL it took from the root is removed,
// so that spares have none. Empty spares no server holds are removed;
// anything else is left to the sweep (hashlined --clean-temp).
//
// The directory stays locked shared (flock) while it is open, which tells
// a server sharing it that stops (spares.close) not to remove it. If that
// server removed it between the open and the lock, it is made again.
func (w *Workspace) openSpareDir() (*os.File, fs.FileInfo, error) {
	for tries := 3; ; tries-- {
		d, fi, err := w.openSpareDirOnce()
		if err != nil {
			return nil, nil, err
		}
		if testHookSpareDirOpened != nil {
			testHookSpareDirOpened()
		}
		err = unix.Flock(int(d.Fd()), unix.LOCK_SH)
		if err == nil {
			if lfi, lerr := w.root.Lstat(SpareDir); lerr != nil || !os.SameFile(lfi, fi) {
				if tries > 1 {
					_ = d.Close()
					continue
				}
				err = errors.New(SpareDir + " keeps being removed while it is opened")
			}
		}
		if err == nil {
			err = writeSpareIgnore(int(d.Fd()))
		}
		if err != nil {
			_ = d.Close()
			return nil, nil, err
		}
		removeStaleSpares(d)
		return d, fi, nil
	}
}

// testHookSpareDirOpened, if set, runs between the spare directory's open
// and its lock.
var testHookSpareDirOpened func()

// openSpareDirOnce makes SpareDir if missing, opens it and checks it.
func (w *Workspace) openSpareDirOnce() (*os.File, fs.FileInfo, error) {
	if err := w.root.Mkdir(SpareDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, nil, err
	}
	lfi, err := w.root.Lstat(SpareDir)
	if err != nil {
		return nil, nil, err
	}
	if !lfi.IsDir() {
		return nil, nil, errors.New(SpareDir + " is not a directory")
	}
	d, err := w.root.Open(SpareDir)
	if err != nil {
		return nil, nil, err
	}
	fi, err := d.Stat()
	if err == nil && !os.SameFile(lfi, fi) {
		err = errors.New(SpareDir + " changed while it was opened")
	}
	if err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
			err = errors.New(SpareDir + " is not the server's alone")
		}
	}
	if err == nil {
		if rerr := unix.Fremovexattr(int(d.Fd()), "system.posix_acl_default"); rerr != nil && !errors.Is(rerr, unix.ENODATA) && !errors.Is(rerr, unix.EOPNOTSUPP) {
			err = rerr
		}
	}
	if err != nil {
		_ = d.Close()
		return nil, nil, err
	}
	return d, fi, nil
}

// writeSpareIgnore creates the .gitignore in the spare directory dirFd, if
// missing.
func writeSpareIgnore(dirFd int) error {
	fd, err := unix.Openat(dirFd, ".gitignore", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = unix.Write(fd, []byte(spareIgnore))
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// removeStaleSpares removes the empty temp files in the spare directory
// that no server holds: spares a killed server left. Files with content
// are left to the sweep, which sees the whole tree: on a filesystem without
// a journal, a crash can leave a spare's name on disk beside the file it
// became (never an empty one: see writeSpare).
func removeStaleSpares(d *os.File) {
	entries, err := d.ReadDir(-1)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && IsTempName(e.Name()) {
			removeStaleSpare(int(d.Fd()), e.Name())
		}
	}
}

// removeStaleSpare removes name, in the spare directory dirFd, if it is an
// empty file no server holds. It holds the file's lock while it removes
// it, so that a server that has just made the file (makeSpare) either
// fails to lock it or finds its name gone, and makes another.
func removeStaleSpare(dirFd int, name string) {
	fd, ok := lockSpare(dirFd, name)
	if fd < 0 {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if !ok || unix.Fstat(fd, &st) != nil ||
		st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != 0 || !sameInode(dirFd, name, st.Ino, uint64(st.Dev)) {
		return
	}
	_ = unix.Unlinkat(dirFd, name, 0)
}

// spareInUse reports whether a server holds the spare name in the spare
// directory dirFd (the worker locks each spare it makes), or whether that
// cannot be told.
func spareInUse(dirFd int, name string) bool {
	fd, ok := lockSpare(dirFd, name)
	if fd >= 0 {
		_ = unix.Close(fd)
	}
	return !ok
}

// lockSpare opens name in the spare directory dirFd (not following a
// symlink, not blocking on a FIFO) and tries to take its lock without
// waiting. It returns the descriptor (-1 if the open failed), which the
// caller closes, and whether it holds the lock.
func lockSpare(dirFd int, name string) (fd int, locked bool) {
	fd, err := unix.Openat(dirFd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, false
	}
	return fd, unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil
}

// SpareInUse reports whether the file at rel, in SpareDir under root, is a
// spare a running server holds, or whether that cannot be told; a sweep
// leaves those alone.
func SpareInUse(root *os.Root, rel string) bool {
	d, err := root.Open(path.Dir(rel))
	if err != nil {
		return true
	}
	defer d.Close()
	return spareInUse(int(d.Fd()), path.Base(rel))
}

// close stops the worker and removes the spare files, and the directory
// too when nothing but its .gitignore is left in it (another process may
// be using it).
func (s *spares) close(w *Workspace) {
	s.mu.Lock()
	s.state = spareOff
	started := s.started
	s.started = false // a second close has nothing to stop
	s.mu.Unlock()
	if started {
		close(s.stop)
		<-s.done
	}
	if s.dir == nil {
		return
	}
	for _, sp := range s.ready {
		_ = sp.f.Close()
		_ = unix.Unlinkat(s.dirFd, sp.name, 0)
	}
	s.ready = nil
	// Every server using the directory holds it locked shared
	// (openSpareDir): only the last one gets it exclusive, and removes it.
	if unix.Flock(s.dirFd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		_ = s.dir.Close()
		s.dir = nil
		return
	}
	if entries, err := fs.ReadDir(w.root.FS(), SpareDir); err == nil && len(entries) == 1 && entries[0].Name() == ".gitignore" {
		if unix.Unlinkat(s.dirFd, ".gitignore", 0) == nil && w.root.Remove(SpareDir) != nil {
			// Another server put a spare in meanwhile: keep the
			// directory out of git status for it.
			_ = writeSpareIgnore(s.dirFd)
		}
	}
	_ = s.dir.Close()
	s.dir = nil
}
