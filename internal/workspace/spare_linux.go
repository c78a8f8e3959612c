package workspace

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// spares is a workspace's pool of spare files (WithSpareFiles). A writer
// takes one, fills it and exchanges it with its target; the worker makes
// new ones and removes the files exchanged out, after the writes.
type spares struct {
	mu      sync.Mutex
	state   spareState
	started bool     // the worker was started (done will be closed)
	dir     *os.File // SpareDir, open from the first top-up until close
	dirFd   int
	dev     uint64   // the device of dir: only files on it can be exchanged
	ready   []string // names in dir of empty spare files
	used    []string // names in dir now holding replaced files, to remove
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

type spareState int

const (
	spareIdle spareState = iota // no replace yet: nothing made
	spareOn
	spareOff // the directory could not be made, or names cannot be exchanged
)

func newSpares() *spares {
	return &spares{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// writeSpare is WriteFile's replace of the existing file target (old is
// its Lstat) through a spare file. It reports false, having done nothing,
// when no spare is ready for target, and the caller writes a temporary
// file instead; otherwise the write is done, or failed with err.
func (w *Workspace) writeSpare(op, rel, target string, raw []byte, mode fs.FileMode, old fs.FileInfo, opts WriteOptions) (bool, error) {
	s := w.spare
	if s == nil {
		return false, nil
	}
	name, sdir, ok := s.take(w, old)
	if !ok {
		return false, nil
	}
	fd, err := unix.Openat(sdir, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil // someone removed it: write the usual way
	}
	drop := func() { _ = unix.Unlinkat(sdir, name, 0) }
	if err := w.fill(op, rel, os.NewFile(uintptr(fd), path.Join(SpareDir, name)), raw, mode, old); err != nil {
		drop()
		return true, err
	}
	if opts.BeforeCommit != nil {
		if err := opts.BeforeCommit(); err != nil {
			drop()
			return true, err
		}
	}
	if testHookBeforeRename != nil {
		if err := testHookBeforeRename(target); err != nil {
			drop()
			return true, osErr(op, rel, "", err)
		}
	}
	dir := path.Dir(target)
	d, err := w.root.Open(dir)
	if err != nil {
		drop()
		return true, osErr(op, rel, dir, err)
	}
	defer d.Close()
	tdir, base := int(d.Fd()), path.Base(target)
	err = unix.Renameat2(sdir, name, tdir, base, unix.RENAME_EXCHANGE)
	switch {
	case err != nil && !existsAt(sdir, name):
		// Someone removed the spare (another server's sweep at its start,
		// git clean): write the content again, the usual way. The check
		// before the commit has passed.
		opts.BeforeCommit = nil
		return true, w.writeRenamed(op, rel, target, raw, mode, old, opts)
	case err != nil:
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
			s.disable() // this filesystem cannot exchange names
		}
		// A rename gives the usual answers: a file deleted meanwhile is
		// created again, and a directory there now is named in the error.
		if err := w.place(op, rel, path.Join(SpareDir, name), target, false); err != nil {
			drop()
			return true, err
		}
	case isDirAt(sdir, name):
		// A directory was put where the file was after it was checked. A
		// rename would have refused to replace it; so does this, by
		// exchanging the two back.
		if unix.Renameat2(sdir, name, tdir, base, unix.RENAME_EXCHANGE) == nil {
			drop()
		}
		return true, notRegular(op, rel, fs.ModeDir)
	default:
		s.discard(name)
	}
	if w.opts.fsync {
		if err := d.Sync(); err != nil {
			return true, syncFailed(op, rel, dir, err)
		}
	}
	return true, nil
}

func existsAt(dirFd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirFd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

func isDirAt(dirFd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirFd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// take returns a ready spare on old's device and the descriptor of the
// directory it is in, and asks the worker to make another. The first call
// starts the worker and returns none.
func (s *spares) take(w *Workspace, old fs.FileInfo) (name string, dirFd int, ok bool) {
	st, _ := old.Sys().(*syscall.Stat_t)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == spareOff {
		return "", 0, false
	}
	s.start(w)
	if st == nil || s.dir == nil || uint64(st.Dev) != s.dev || len(s.ready) == 0 {
		return "", 0, false
	}
	name = s.ready[len(s.ready)-1]
	s.ready = s.ready[:len(s.ready)-1]
	return name, s.dirFd, true
}

// start starts the worker if it is not running yet, and wakes it; s.mu is
// held.
func (s *spares) start(w *Workspace) {
	if s.state == spareIdle {
		s.state, s.started = spareOn, true
		go s.run(w)
	}
	s.wake()
}

// discard hands the worker a spare name that now holds a replaced file.
func (s *spares) discard(name string) {
	s.mu.Lock()
	s.used = append(s.used, name)
	s.wake()
	s.mu.Unlock()
}

// wake asks the worker to run; s.mu is held.
func (s *spares) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *spares) disable() {
	s.mu.Lock()
	s.state = spareOff
	s.mu.Unlock()
}

// run is the worker: each time it is woken it tops the pool up, then
// removes the replaced files, which frees them (on a disk with online
// discard, the slow part of a replace).
func (s *spares) run(w *Workspace) {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		if err := s.topUp(w); err != nil {
			s.disable()
			return
		}
		s.mu.Lock()
		used := slices.Clone(s.used)
		s.mu.Unlock()
		for _, name := range used {
			_ = unix.Unlinkat(s.dirFd, name, 0)
		}
		s.mu.Lock()
		s.used = s.used[len(used):] // discard only appends
		s.mu.Unlock()
	}
}

// topUp makes the directory on its first run, then spare files until
// spareFiles are ready: each created empty and, with fsync on, synced, so
// that a writer's fsync of a spare has little but its content to write (on
// ext4, the first fsync of a new file also writes its directory). Whether
// a spare's name survives a crash does not matter, so the directory itself
// is not synced.
func (s *spares) topUp(w *Workspace) error {
	if s.dir == nil {
		d, dev, err := w.openSpareDir()
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.dir, s.dirFd, s.dev = d, int(d.Fd()), dev
		s.mu.Unlock()
	}
	s.mu.Lock()
	need := spareFiles - len(s.ready)
	s.mu.Unlock()
	if need <= 0 {
		return nil
	}
	made := make([]string, 0, need)
	var err error
	for range need {
		name := tempPrefix + rand.Text() + tempSuffix
		var fd int
		fd, err = unix.Openat(s.dirFd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			break
		}
		if w.opts.fsync {
			err = unix.Fsync(fd)
		}
		_ = unix.Close(fd)
		if err != nil {
			_ = unix.Unlinkat(s.dirFd, name, 0)
			break
		}
		made = append(made, name)
	}
	if err != nil {
		for _, name := range made {
			_ = unix.Unlinkat(s.dirFd, name, 0)
		}
		return err
	}
	s.mu.Lock()
	s.ready = append(s.ready, made...)
	s.mu.Unlock()
	return nil
}

// spareIgnore is the .gitignore in SpareDir.
const spareIgnore = "# hashline keeps spare files here while it runs, and removes them when it stops.\n*\n"

// openSpareDir makes SpareDir (if missing) with its .gitignore and opens
// it, refusing anything but a plain directory in its place.
func (w *Workspace) openSpareDir() (*os.File, uint64, error) {
	if err := w.root.Mkdir(SpareDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, 0, err
	}
	lfi, err := w.root.Lstat(SpareDir)
	if err != nil {
		return nil, 0, err
	}
	if !lfi.IsDir() {
		return nil, 0, errors.New(SpareDir + " is not a directory")
	}
	d, err := w.root.Open(SpareDir)
	if err != nil {
		return nil, 0, err
	}
	fi, err := d.Stat()
	if err != nil || !os.SameFile(lfi, fi) {
		d.Close()
		return nil, 0, errors.Join(err, errors.New(SpareDir+" changed while it was opened"))
	}
	fd, err := unix.Openat(int(d.Fd()), ".gitignore", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	switch {
	case err == nil:
		_, err = unix.Write(fd, []byte(spareIgnore))
		_ = unix.Close(fd)
	case errors.Is(err, unix.EEXIST):
		err = nil
	}
	if err != nil {
		d.Close()
		return nil, 0, err
	}
	return d, uint64(fi.Sys().(*syscall.Stat_t).Dev), nil
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
	for _, name := range append(s.ready, s.used...) {
		_ = unix.Unlinkat(s.dirFd, name, 0)
	}
	s.ready, s.used = nil, nil
	if names, err := s.dir.Readdirnames(-1); err == nil && len(names) == 1 && names[0] == ".gitignore" {
		if unix.Unlinkat(s.dirFd, ".gitignore", 0) == nil {
			_ = w.root.Remove(SpareDir)
		}
	}
	_ = s.dir.Close()
	s.dir = nil
}
