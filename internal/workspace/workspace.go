package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"
)

// DefaultMaxFileBytes is the default size limit for reads and writes.
const DefaultMaxFileBytes = 64 << 20

// maxSymlinks bounds symlink resolution, like the kernel's MAXSYMLINKS, so a
// loop fails instead of spinning.
const maxSymlinks = 40

type options struct {
	maxFileBytes int64
	fsync        bool
	vcsRead      bool
	fold         func(string) string // how the file system compares names; nil: byte for byte
	foldSet      bool                // fold was given (WithNameFold), rather than left to the platform
	// preallocate reserves a temp file's blocks before an unsynced replace
	// fills it (allocate; tests see which writes call it).
	preallocate func(fd uintptr, n int) bool
	// beforeOpen, for tests, runs in ReadFile between the Lstat and the
	// open, so a test can swap a FIFO in where a regular file was checked.
	beforeOpen func(target string)
	// beforeRename, for tests, runs in WriteFile after the temp file is
	// complete and before it is moved into place, so a test can change the
	// target under the write or make the step fail.
	beforeRename func(target string) error
}

// Option configures Open.
type Option func(*options)

// WithMaxFileBytes sets the largest file ReadFile reads and WriteFile writes;
// anything larger fails with ErrTooLarge. The default is 64 MiB. A value of
// zero or less keeps the default.
func WithMaxFileBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxFileBytes = n
		}
	}
}

// WithFsync turns fsync of written files and their directories on (the
// default) or off. Turning it off is unsafe: a crash may then leave an empty
// or old file behind a successful write, or one holding zeros (fill). It exists for benchmarks and tests
// that measure everything but the disk.
func WithFsync(on bool) Option {
	return func(o *options) { o.fsync = on }
}

// WithVCSRead lets ReadFile, FileVersion, Stat and Resolve reach
// version-control metadata (IsVCSPath), which they refuse by default with
// ErrVCSPath. WriteFile refuses it regardless.
func WithVCSRead(on bool) Option {
	return func(o *options) { o.vcsRead = on }
}

// Workspace is a directory tree that every path is confined to. Its methods
// are safe for concurrent use; concurrent writes to one path are each atomic,
// but the last rename wins, so callers serialise writes per path.
type Workspace struct {
	root    *os.Root
	dir     string // absolute, cleaned, as given
	realDir string // dir with symlinks evaluated, for absolute paths and links
	opts    options
}

// Open opens the workspace rooted at the existing directory root.
func Open(root string, opts ...Option) (*Workspace, error) {
	o := options{maxFileBytes: DefaultMaxFileBytes, fsync: true, preallocate: allocate}
	for _, opt := range opts {
		opt(&o)
	}
	if !o.foldSet {
		o.fold = defaultNameFold()
	}
	dir, err := filepath.Abs(root)
	if err != nil {
		return nil, newErr("open", root, ErrInvalidPath, "cannot make the root absolute: %v", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{Op: "open", Path: dir, Kind: ErrNotFound, Err: err,
				Msg: "workspace root does not exist; create it or pass an existing directory"}
		}
		return nil, osErr("open", dir, "", err)
	}
	if !fi.IsDir() {
		return nil, newErr("open", dir, ErrInvalidPath, "workspace root is not a directory; pass a directory")
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, osErr("open", dir, "", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, osErr("open", dir, "", err)
	}
	return &Workspace{root: r, dir: dir, realDir: realDir, opts: o}, nil
}

// Close releases the root directory handle. No write may be in progress.
func (w *Workspace) Close() error {
	return w.root.Close()
}

// Dir returns the absolute, cleaned root directory as it was given to Open
// (symlinks in it are not evaluated).
func (w *Workspace) Dir() string { return w.dir }

// Root returns the underlying os.Root, for walkers (grep) that read many
// files and do their own filtering. It stays owned by the Workspace.
func (w *Workspace) Root() *os.Root { return w.root }

// Fsync reports whether the workspace syncs what it writes (WithFsync).
func (w *Workspace) Fsync() bool { return w.opts.fsync }

// MaxFileBytes returns the size limit in force.
func (w *Workspace) MaxFileBytes() int64 { return w.opts.maxFileBytes }

// Rel normalises a request path to a clean, slash-separated path relative to
// the root. Surrounding spaces are trimmed; an absolute path is accepted only
// if it lies inside the root (compared with Dir and with its symlink-free
// form); ".." that climbs out is ErrOutsideRoot; an empty path or a NUL byte
// is ErrInvalidPath, and so are a path over MaxPathBytes or MaxPathDepth
// and the name of a temp file (IsTempName), which no caller may name. "."
// (the root itself) is returned as ".". Rel is purely lexical: symlinks are
// resolved by ReadFile and WriteFile.
func (w *Workspace) Rel(p string) (string, error) { return w.rel("resolve", p) }

func (w *Workspace) rel(op, p string) (string, error) {
	if err := checkSize(op, p); err != nil {
		return "", err
	}
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return "", newErr(op, p, ErrInvalidPath, "empty path; give a path relative to the workspace root")
	case strings.IndexByte(p, 0) >= 0:
		return "", newErr(op, p, ErrInvalidPath, "path contains a NUL byte; remove it")
	}
	if filepath.IsAbs(p) {
		r, ok := w.inside(filepath.Clean(p))
		if !ok {
			return "", newErr(op, p, ErrOutsideRoot, "absolute path is outside the workspace root %s; %s (or a path relative to it)", strconv.Quote(w.dir), hintInside)
		}
		p = r
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", newErr(op, p, ErrOutsideRoot, "path climbs out of the workspace root with \"..\"; %s", hintInside)
	}
	if err := checkTemp(op, c); err != nil {
		return "", err
	}
	return c, nil
}

// inside maps a cleaned absolute path to a slash-separated path relative to
// the root, if it lies inside the root by either of the root's names.
func (w *Workspace) inside(abs string) (string, bool) {
	for _, base := range []string{w.dir, w.realDir} {
		if abs == base {
			return ".", true
		}
		prefix := base
		if !strings.HasSuffix(prefix, string(filepath.Separator)) {
			prefix += string(filepath.Separator)
		}
		if rest, ok := strings.CutPrefix(abs, prefix); ok {
			return filepath.ToSlash(rest), true
		}
	}
	return "", false
}

// resolve follows rel inside the root to the file it names and returns that
// file's symlink-free relative path and its Lstat info. If the file (or a
// trailing part of the path) does not exist, allowMissing decides between
// returning the lexical path of what would be created with a nil FileInfo,
// and ErrNotFound. Links are resolved here rather than left to os.Root for
// two reasons: os.Root refuses absolute link targets even when they point
// inside the root, and our errors can name the link that leads out.
//
// Version-control metadata is refused with ErrVCSPath, unless read is set
// and the workspace was opened WithVCSRead: the path as named, what it
// resolves to, and for a missing file what would be created. The check
// runs on the symlink-free path, so no link leads into metadata either. It
// is a rule about the files the API names, not confinement: a link swapped
// in between this check and the access is only a concern for confinement,
// which os.Root keeps, and whoever can swap links in can write the
// metadata directly.
func (w *Workspace) resolve(op, rel string, allowMissing, read bool) (string, fs.FileInfo, error) {
	guard := !read || !w.opts.vcsRead
	if guard && IsVCSPath(rel) {
		return "", nil, vcsError(op, rel, rel, !read)
	}
	if fi, ok := w.plainInfo(rel); ok {
		return rel, fi, nil
	}
	target, fi, err := w.walk(op, rel, allowMissing)
	if guard && target != "" && IsVCSPath(target) {
		return "", nil, vcsError(op, rel, target, !read)
	}
	if err != nil {
		return "", nil, err
	}
	return target, fi, nil
}

// plainInfo is the fast path of resolve and LockKey: when every component
// of rel exists and none is a symbolic link, rel is already the
// symlink-free path, and the Lstat of its last component is its info. The components are looked
// up by absolute path under the resolved root, one lstat each (through
// os.Root, each lookup would open every directory above it again). It
// only looks: every file is still opened through os.Root.
func (w *Workspace) plainInfo(rel string) (fs.FileInfo, bool) {
	if rel == "." {
		return nil, false
	}
	abs := w.realDir
	var fi fs.FileInfo
	for part := range strings.SplitSeq(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return nil, false
		}
		abs = filepath.Join(abs, part)
		var err error
		if fi, err = os.Lstat(abs); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return nil, false
		}
	}
	return fi, true
}

// walk is resolve's slow path: it resolves rel one component at a time,
// following links. With an error, the path it returns (when not "") is the
// one the error is about, for resolve's metadata check: a missing file's,
// as it would be created.
func (w *Workspace) walk(op, rel string, allowMissing bool) (string, fs.FileInfo, error) {
	var todo []string
	if rel != "." {
		todo = strings.Split(rel, "/")
	}
	var (
		done     []string    // symlink-free components resolved so far
		doneInfo fs.FileInfo // Lstat of the last component of done
		links    int
		lastLink string // the last link followed, to name it when ".." leads out
	)
	escape := func() error {
		return newErr(op, rel, ErrOutsideRoot, "symlink %q leads outside the workspace root; only symlinks that stay inside the root are followed", lastLink)
	}
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", nil, escape()
			}
			done, doneInfo = done[:len(done)-1], nil
			continue
		}
		cur := path.Join(slices.Concat(done, []string{c})...)
		fi, err := w.root.Lstat(cur)
		if err != nil {
			missing := path.Join(slices.Concat(done, []string{c}, todo)...)
			// Like the kernel, refuse to climb out of a directory that does
			// not exist: cleaning "missing/../x" to "x" lexically could land
			// on a link this walk has not checked.
			if errors.Is(err, fs.ErrNotExist) && allowMissing && !slices.Contains(todo, "..") {
				return missing, nil, nil
			}
			if errors.Is(err, fs.ErrNotExist) {
				cur = "" // "no such file" for the whole path reads best
			}
			return missing, nil, osErr(op, rel, cur, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if links++; links > maxSymlinks {
				return "", nil, newErr(op, rel, ErrInvalidPath, "too many levels of symbolic links at %q; fix the symlink loop or use the target's path", cur)
			}
			target, err := w.root.Readlink(cur)
			if err != nil {
				return "", nil, osErr(op, rel, cur, err)
			}
			lastLink = cur
			if filepath.IsAbs(target) {
				r, ok := w.inside(filepath.Clean(target))
				if !ok {
					return "", nil, newErr(op, rel, ErrOutsideRoot, "symlink %q points to %q, outside the workspace root; only symlinks that stay inside the root are followed", cur, target)
				}
				done, target = nil, r
			}
			todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
			continue
		}
		if len(todo) > 0 && !fi.IsDir() {
			return cur, nil, &Error{Op: op, Path: rel, Kind: ErrNotFound,
				Msg: strconv.Quote(cur) + " is a file, not a directory; " + hintRelative}
		}
		done, doneInfo = append(done, c), fi
	}
	if len(done) == 0 {
		fi, err := w.root.Lstat(".")
		if err != nil {
			return "", nil, osErr(op, rel, "", err)
		}
		return ".", fi, nil
	}
	if doneInfo == nil { // the path ended in ".."
		fi, err := w.root.Lstat(path.Join(done...))
		if err != nil {
			return "", nil, osErr(op, rel, path.Join(done...), err)
		}
		doneInfo = fi
	}
	return path.Join(done...), doneInfo, nil
}

// Version returns the version token of a file's exact bytes: "v2-" and the
// first 32 hex digits (128 bits) of their BLAKE3 hash. It depends on nothing
// but the bytes, so it is the same across restarts and servers.
//
// Every read of a changed file hashes all of it, so the hash is chosen for
// speed among collision-resistant ones: versions key the snapshots edits
// are rebased from and decide Write's compare-and-swap, so two contents
// with one version must not be made on purpose either. BLAKE3 is that, and
// faster than SHA-256 (the "v1-" versions of earlier releases).
func Version(raw []byte) string {
	sum := blake3.Sum256(raw)
	return versionOfSum(sum[:])
}

// LockKey returns a key naming the file that rel resolves to, so callers
// that serialise writes per file give one lock to every path that reaches
// the same file (a symlink and its target, a path through a linked
// directory, a name spelled in another case on a file system that folds
// case, see WithNameFold). It is for locking and for telling two paths
// apart (one file, or one inside the other) and never used to open
// anything.
//
// The key is the path resolve gives, the one every read, write and access
// check of rel uses: links are followed one component at a time (at most
// 40), to their target even where that target does not exist yet, so a
// link to a directory still to be created keys its files by the
// directory's own name, and a missing directory is taken as the directory
// it will be when created. A path that resolve refuses (a link out of the
// root, a loop) is keyed by rel as written: every use of it is refused
// too.
func (w *Workspace) LockKey(rel string) string {
	target := rel
	if _, ok := w.plainInfo(rel); !ok {
		// walk returns, with its error, the path the error is about: for a
		// missing directory followed by a link's "..", the whole path
		// taken lexically (the directory the writes will create); for a
		// file on the way, that file (one key with it, which is as
		// strict as needed for a path that cannot be written).
		if t, _, _ := w.walk("lock", rel, true); t != "" {
			target = t
		}
	}
	if w.opts.fold != nil {
		target = w.opts.fold(target)
	}
	// The root was resolved when it was opened: keys are built on it, so
	// they do not depend on the name the workspace was opened by.
	return filepath.Join(w.realDir, filepath.FromSlash(target))
}

// IsEscape reports whether err (from this package or from os.Root, e.g.
// through Root().FS()) is a refusal to leave the root.
func IsEscape(err error) bool { return errors.Is(err, ErrOutsideRoot) || isEscape(err) }
