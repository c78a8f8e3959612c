package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// WriteMode says whether a write may create the file, replace it, or both.
type WriteMode int

const (
	// Upsert creates the file or replaces it.
	Upsert WriteMode = iota
	// CreateOnly fails with ErrExists if the file exists.
	CreateOnly
	// ReplaceOnly fails with ErrNotFound if the file does not exist.
	ReplaceOnly
)

// String names the mode as the API does.
func (m WriteMode) String() string {
	switch m {
	case Upsert:
		return "upsert"
	case CreateOnly:
		return "create"
	case ReplaceOnly:
		return "replace"
	}
	return "WriteMode(" + strconv.Itoa(int(m)) + ")"
}

// WriteOptions controls WriteFile.
type WriteOptions struct {
	// Mode decides whether the file must or must not exist already.
	Mode WriteMode
	// Encoding is how the UTF-8 text is stored: "" or UTF8 writes it as is;
	// UTF16LE and UTF16BE re-encode it and write the byte-order mark.
	Encoding Encoding
	// Committing, when set, is called with the new content's version
	// before the content takes the file's place, which it does only once
	// Committing has returned: the caller records the change it is about
	// to make while the write can still end either way (WriteFile only).
	// With fsync on, it runs on a goroutine of its own while the content
	// is written and synced beside the file, so that its work waits for
	// the disk alongside the write's instead of after it; it is then
	// called even for a write that goes on to fail (WriteFile's error says
	// so), as it is already when the rename itself fails.
	Committing func(version string)
}

// WriteResult describes a completed write.
type WriteResult struct {
	Path    string // the cleaned relative path, as requested
	Raw     []byte // the bytes written
	Version string // Version(Raw)
	Created bool   // the file did not exist before
}

// hashApart hashes raw's version on another goroutine and sends it on the
// channel it returns. The channel is buffered, so a caller that returns
// early leaves no goroutine behind.
func hashApart(raw []byte) <-chan string {
	hashed := make(chan string, 1)
	go func() {
		hashed <- Version(raw)
	}()
	return hashed
}

// overlapHashBytes is the size from which WriteFile hashes the content in
// parallel with writing and syncing it; below it a goroutine costs more
// than it saves.
const overlapHashBytes = 256 << 10

// newFileMode is the mode of files WriteFile creates. It is set with fchmod,
// so the process umask does not apply: the result is predictable whatever
// the server was started with.
const newFileMode fs.FileMode = 0o644

// keptModeBits are the bits of an existing file's mode a rewrite keeps.
const keptModeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// WriteFile replaces the file at p with text, atomically and durably: it
// writes a temp file (named as IsTempName says) in the target's directory,
// gives it the old file's owner, group, extended attributes and mode (0644
// for new files), fsyncs it, renames it over the target and fsyncs the
// directory. A crash at any point leaves the old file or the new one,
// never a mix; on error the temp file is removed. With fsync off
// (WithFsync(false)) the same steps run without the two fsyncs: readers
// still see the old file or the new one, but what a crash leaves is up to
// the filesystem.
//
// An existing file is replaced only if the server's user could open it for
// writing and its mode has a write bit (root too keeps to a mode of 0444),
// it is not immutable or append-only, and the new file can be given its
// owner, group and extended attributes; otherwise the write fails with
// ErrNotWritable and the file is left as it was. A server that is not root
// can therefore replace only its own files, with a group it is in. The
// file's capabilities (security.capability) are the exception: where the
// server's user may not set them they are dropped, as the kernel drops them
// when that user writes to the file. Extended attributes are kept on Linux
// and macOS; macOS ACLs, and the attributes of other systems, are not.
//
// If p is a symlink inside the root, its target is written and the link is
// left alone. Missing parent directories are created with mode 0755.
//
// CreateOnly is decided by link(2), which refuses to replace an existing
// name, so it holds even against other processes; on filesystems without
// hard links it falls back to a check just before the rename. ReplaceOnly is
// a check before the rename: a file deleted by another process in between
// is created again. The server serialises writes per path, so neither race
// arises between its own requests.
func (w *Workspace) WriteFile(p string, text []byte, opts WriteOptions) (*WriteResult, error) {
	const op = "write"
	rel, target, raw, old, keep, err := w.prepare(op, p, text, opts)
	if err != nil {
		return nil, err
	}

	// The version is hashed while the write waits for the disk: a large
	// file's hash would otherwise add to its fsync.
	var hashed <-chan string
	if w.opts.fsync && len(raw) >= overlapHashBytes {
		hashed = hashApart(raw)
	}
	var version string
	hashedNow := func() {
		if hashed != nil {
			version, hashed = <-hashed, nil
		} else if version == "" {
			version = Version(raw)
		}
	}
	var committing func()
	if opts.Committing != nil {
		committing = func() {
			hashedNow()
			opts.Committing(version)
		}
	}
	if err := w.writeRenamed(op, rel, target, raw, keep, opts, committing); err != nil {
		return nil, err
	}
	hashedNow()
	return &WriteResult{Path: rel, Raw: raw, Version: version, Created: old == nil}, nil
}

// prepare is the part of WriteFile and Stage before anything is written:
// it cleans p, encodes text, checks the size and the mode against what is
// at p, and inspects the file it replaces (old, keep; nil for a new file).
func (w *Workspace) prepare(op, p string, text []byte, opts WriteOptions) (rel, target string, raw []byte, old fs.FileInfo, keep *kept, err error) {
	rel, err = w.rel(op, p)
	if err != nil {
		return "", "", nil, nil, nil, err
	}
	if opts.Mode < Upsert || opts.Mode > ReplaceOnly {
		return "", "", nil, nil, nil, newErr(op, rel, ErrInvalidPath, "unknown write mode %d; use upsert, create or replace", int(opts.Mode))
	}
	if rel == "." {
		return "", "", nil, nil, nil, notRegular(op, rel, fs.ModeDir)
	}
	raw, err = encodeText(op, rel, text, opts.Encoding)
	if err != nil {
		return "", "", nil, nil, nil, err
	}
	if int64(len(raw)) > w.opts.maxFileBytes {
		return "", "", nil, nil, nil, newErr(op, rel, ErrTooLarge, "content is %d bytes, over the %d-byte limit; write a smaller file or raise the server's limit", len(raw), w.opts.maxFileBytes)
	}
	target, old, err = w.resolve(op, rel, true, false)
	if err != nil {
		return "", "", nil, nil, nil, err
	}
	switch {
	case target == ".":
		return "", "", nil, nil, nil, notRegular(op, rel, fs.ModeDir)
	case old != nil && !old.Mode().IsRegular():
		return "", "", nil, nil, nil, notRegular(op, rel, old.Mode())
	}
	if err := opts.Mode.Check(op, rel, old != nil); err != nil {
		return "", "", nil, nil, nil, err
	}
	if old != nil {
		if keep, err = w.inspectReplaced(op, rel, target); err != nil {
			return "", "", nil, nil, nil, err
		}
	}
	return rel, target, raw, old, keep, nil
}

// writeRenamed is WriteFile's write through a new temp file renamed over
// the target (or linked, for CreateOnly), with the target's directory
// synced after, and any directories it had to create. keep is what it keeps
// of the file it replaces, nil for a new file; committing, if not nil, is
// called before the rename (see WriteOptions.Committing).
func (w *Workspace) writeRenamed(op, rel, target string, raw []byte, keep *kept, opts WriteOptions, committing func()) error {
	dir := path.Dir(target)
	created, err := w.mkdirs(op, rel, dir)
	if err != nil {
		return err
	}
	// With fsync on, committing is done while the temp file is written
	// and synced: the sync is a wait for the disk, and what committing
	// does (the change's record in the history) need not add to it.
	var committed chan struct{}
	if committing != nil && w.opts.fsync {
		committed = make(chan struct{})
		go func() {
			defer close(committed)
			committing()
		}()
	}
	tmp, err := w.writeTemp(op, rel, dir, raw, keep)
	if committed != nil {
		<-committed
	} else if err == nil && committing != nil {
		committing()
	}
	if err == nil {
		if err = w.commit(op, rel, tmp, target, opts.Mode == CreateOnly); err != nil {
			_ = w.root.Remove(tmp)
		}
	}
	if err != nil {
		// A failed write leaves the tree as it found it. Remove fails on
		// a directory someone else has put a file in meanwhile, as it should.
		for i := len(created) - 1; i >= 0; i-- {
			_ = w.root.Remove(created[i])
		}
		return err
	}
	if w.opts.fsync {
		// The rename is durable once the directory holding it is synced;
		// a directory we created is durable once its parent is.
		dirs := []string{dir}
		for i := len(created) - 1; i >= 0; i-- {
			dirs = append(dirs, path.Dir(created[i]))
		}
		for _, d := range dirs {
			if err := w.syncDir(d); err != nil {
				return syncFailed(op, rel, d, err)
			}
		}
	}
	return nil
}

// mkdirs creates dir and any missing parents, returning those it created,
// top-down. resolve has already followed every existing link, so what is
// missing here is a plain lexical path. The root needs no look: the
// workspace holds it open.
func (w *Workspace) mkdirs(op, rel, dir string) ([]string, error) {
	if dir == "." {
		return nil, nil
	}
	if fi, err := w.root.Stat(dir); err == nil && fi.IsDir() {
		return nil, nil
	}
	var created []string
	parts := strings.Split(dir, "/")
	for i := range parts {
		d := path.Join(parts[:i+1]...)
		err := w.root.Mkdir(d, 0o755)
		switch {
		case err == nil:
			created = append(created, d)
		case errors.Is(err, fs.ErrExist):
			// Existing (or made concurrently); if it is a file, the next
			// Mkdir or the temp file's creation reports ENOTDIR.
		default:
			return created, osErr(op, rel, d, err)
		}
	}
	return created, nil
}

// writeTemp writes raw to a new temp file in dir with the final metadata
// (fill), synced, and returns its path. On error nothing is left behind.
func (w *Workspace) writeTemp(op, rel, dir string, raw []byte, keep *kept) (name string, err error) {
	var f *os.File
	for range 3 {
		// Unguessable (tempName), so nobody can pre-create or pre-link it.
		name = path.Join(dir, tempName())
		f, err = w.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", osErr(op, rel, dir, err)
	}
	if err = w.fill(op, rel, f, raw, keep); err != nil {
		_ = w.root.Remove(name)
		return "", err
	}
	return name, nil
}

// fill writes raw to the empty file f, gives it the metadata of the file
// it replaces (keep; a new file gets newFileMode), syncs it (with fsync on)
// and closes it, on error too.
func (w *Workspace) fill(op, rel string, f *os.File, raw []byte, keep *kept) (err error) {
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = osErr(op, rel, "", cerr)
		}
	}()
	if !w.opts.fsync && keep != nil {
		// Only a rename over a file starts the writeback (allocate).
		w.opts.preallocate(f.Fd(), len(raw))
	}
	if _, err = f.Write(raw); err != nil {
		return osErr(op, rel, "", err)
	}
	// Owner, group, extended attributes and mode are set on the descriptor
	// before the rename, so the target is never visible with other ones;
	// the mode last, because chown clears the setuid and setgid bits.
	mode := newFileMode
	if keep != nil {
		if err = keepMeta(op, rel, f, keep); err != nil {
			return err
		}
		mode = keep.mode
	}
	if err = f.Chmod(mode); err != nil {
		return osErr(op, rel, "", err)
	}
	if w.opts.fsync {
		if err = f.Sync(); err != nil {
			return osErr(op, rel, "", err)
		}
	}
	return nil
}

// commit moves the finished temp file to target. For create-only writes it
// hard-links instead, which fails if target exists, and then drops the temp
// name; the caller removes the temp file on error.
func (w *Workspace) commit(op, rel, tmp, target string, createOnly bool) error {
	if w.opts.beforeRename != nil {
		if err := w.opts.beforeRename(target); err != nil {
			return osErr(op, rel, "", err)
		}
	}
	if createOnly {
		err := w.root.Link(tmp, target)
		switch {
		case err == nil:
			_ = w.root.Remove(tmp)
			return nil
		case errors.Is(err, fs.ErrExist):
			return existsErr(op, rel)
		case !linkUnsupported(err):
			return osErr(op, rel, "", err)
		}
		if _, err := w.root.Lstat(target); err == nil {
			return existsErr(op, rel)
		}
	}
	if err := w.root.Rename(tmp, target); err != nil {
		// Something replaced the file with a directory since the checks;
		// say so rather than relay ENOTEMPTY.
		if fi, lerr := w.root.Lstat(target); lerr == nil && !fi.Mode().IsRegular() {
			return notRegular(op, rel, fi.Mode())
		}
		return osErr(op, rel, "", err)
	}
	return nil
}

// linkUnsupported reports whether link(2) failed because the filesystem has
// no hard links (FAT, some network and FUSE filesystems), not because of the
// target.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) ||
		errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EXDEV) ||
		errors.Is(err, syscall.EMLINK) || errors.Is(err, syscall.ENOSYS)
}

func (w *Workspace) syncDir(dir string) error {
	d, err := w.root.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncFailed is the error of a write whose directory could not be synced
// after the file was replaced.
func syncFailed(op, rel, dir string, err error) error {
	e := osErr(op, rel, dir, err).(*Error)
	e.Msg = "the file was replaced, but syncing its directory failed, so the change may not survive a crash: " + e.Msg
	return e
}

// Check returns the error a write in mode m meets when the file at p
// exists or not: ErrExists for CreateOnly over a file, ErrNotFound for
// ReplaceOnly without one, else nil. A change set checks it while it plans,
// before anything is staged, so that the refusal names its change.
func (m WriteMode) Check(op, p string, exists bool) error {
	switch {
	case exists && m == CreateOnly:
		return existsErr(op, p)
	case !exists && m == ReplaceOnly:
		return newErr(op, p, ErrNotFound, "no such file to replace; %s, or use mode create or upsert to create it", hintRelative)
	}
	return nil
}

func existsErr(op, p string) error {
	return newErr(op, p, ErrExists, "file already exists; read it and edit it, or write with mode upsert or replace to overwrite it")
}
