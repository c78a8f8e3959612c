package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"syscall"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers (the gRPC error mapping) can branch with errors.Is and
// never on message text.
var (
	// ErrNotFound means the file, or one of its parent directories, does not
	// exist (or a parent is not a directory).
	ErrNotFound = errors.New("workspace: not found")
	// ErrExists means a create-only write found the file already there.
	ErrExists = errors.New("workspace: already exists")
	// ErrOutsideRoot means the path, or a symlink on it, leads outside the
	// workspace root.
	ErrOutsideRoot = errors.New("workspace: outside root")
	// ErrVCSPath means the path, or the file it resolves to through
	// symlinks, is in version-control metadata (IsVCSPath): never written,
	// and read only by a workspace opened WithVCSRead.
	ErrVCSPath = errors.New("workspace: version-control metadata")
	// ErrNotRegular means the path names a directory, FIFO, socket, device or
	// other non-regular file.
	ErrNotRegular = errors.New("workspace: not a regular file")
	// ErrBinary means the file has a NUL byte in its first 8 KiB.
	ErrBinary = errors.New("workspace: binary file")
	// ErrNotText means the content is neither valid UTF-8 nor UTF-16 with a
	// byte-order mark that decodes losslessly, or cannot be encoded as asked.
	ErrNotText = errors.New("workspace: not text")
	// ErrTooLarge means the file or the text to write is over the size limit
	// (see WithMaxFileBytes).
	ErrTooLarge = errors.New("workspace: too large")
	// ErrInvalidPath means the path is empty, contains a NUL byte, names the
	// root itself where a file is needed, or cannot be resolved (too many
	// levels of symlinks, name too long).
	ErrInvalidPath = errors.New("workspace: invalid path")
	// ErrPermission means the operating system refused access (for example
	// a file the server's user may not read, or a read-only directory).
	ErrPermission = errors.New("workspace: permission denied")
	// ErrNotWritable means an existing file may not be replaced: the
	// server's user could not open it for writing, it has no write bit at
	// all, it is immutable or append-only, or the new file could not be
	// given its owner, group or extended attributes. The message says which.
	ErrNotWritable = errors.New("workspace: not writable")
	// ErrNotEmpty means a directory to delete is not empty.
	ErrNotEmpty = errors.New("workspace: directory not empty")
	// ErrIO means the filesystem failed in a way the caller cannot fix by
	// changing the request (disk full, I/O error). The message includes the
	// underlying error.
	ErrIO = errors.New("workspace: i/o error")
)

// Error is the error type returned by every Workspace method. It wraps Kind,
// one of the sentinels above, and Err, the underlying operating-system error
// when there is one, so errors.Is(err, fs.ErrNotExist) keeps working too.
type Error struct {
	Op   string // "read", "write", "open" or "resolve"
	Path string // the cleaned relative path, or the path as given if it could not be cleaned (its start, for one over MaxPathBytes or MaxPathDepth)
	Kind error  // one of the package's sentinel errors
	Msg  string // what went wrong and what to do about it
	Err  error  // underlying cause, or nil
}

// Error formats as `op "path": message`.
func (e *Error) Error() string {
	return e.Op + " " + strconv.Quote(e.Path) + ": " + e.Msg
}

// Unwrap exposes both the sentinel and the underlying cause to errors.Is and
// errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func newErr(op, p string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Path: p, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Hints shared by several errors, so the wording stays consistent.
const (
	hintRelative = "check the path (paths are relative to the workspace root)"
	hintInside   = "use a path inside the workspace root"
)

// osErr turns an error from os.Root or a file operation into an *Error.
// subject names what failed when it is not the requested path itself (for
// example a parent directory); it may be empty.
func osErr(op, p, subject string, err error) error {
	var we *Error
	if errors.As(err, &we) {
		return err
	}
	what := ""
	if subject != "" && subject != p {
		what = strconv.Quote(subject) + ": "
	}
	e := &Error{Op: op, Path: p, Err: err}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e.Kind, e.Msg = ErrNotFound, what+"no such file; "+hintRelative
	case errors.Is(err, syscall.ENOTDIR):
		e.Kind, e.Msg = ErrNotFound, what+"a parent is a file, not a directory; "+hintRelative
	case isEscape(err):
		e.Kind, e.Msg = ErrOutsideRoot, what+"leads outside the workspace root (through .. or a symlink); "+hintInside
	case errors.Is(err, syscall.ELOOP):
		e.Kind, e.Msg = ErrInvalidPath, what+"too many levels of symbolic links; fix the symlink loop or use the target's path"
	case errors.Is(err, syscall.ENAMETOOLONG):
		e.Kind, e.Msg = ErrInvalidPath, what+"name too long; use a shorter path"
	case errors.Is(err, syscall.EISDIR):
		e.Kind, e.Msg = ErrNotRegular, what+"is a directory, not a regular file; name a file"
	case errors.Is(err, fs.ErrPermission):
		e.Kind, e.Msg = ErrPermission, what+"permission denied by the operating system; the server's user may not access this path"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		e.Kind, e.Msg = ErrIO, what+"no space left on the device; free space on the server and retry"
	default:
		e.Kind, e.Msg = ErrIO, what+"filesystem error: "+err.Error()+"; retry, and report it if it persists"
	}
	return e
}

// isEscape reports whether err is os.Root refusing a path that leaves the
// root. The os package does not export that error, so its text is compared;
// this only matters when a symlink is swapped in after our own resolution
// (which reports escapes itself, with a better message).
func isEscape(err error) bool {
	for err != nil {
		if err.Error() == "path escapes from parent" {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}

// describeMode names a non-regular file type for error messages.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "not a regular file"
	}
}

func notRegular(op, p string, m fs.FileMode) error {
	return newErr(op, p, ErrNotRegular, "is %s, not a regular file; only regular files can be read or written", describeMode(m))
}
