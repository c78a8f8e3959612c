package workspace

import (
	"io"
	"io/fs"
	"os"
	"sync"
)

// File is a text file as read from the workspace.
type File struct {
	// Path is the cleaned path relative to the root, as requested (not the
	// target of a symlink it went through).
	Path string
	// Text is the content as UTF-8. A UTF-8 BOM, if the file has one, is
	// kept here; for UTF-16 files it is the decoded text without the BOM.
	Text []byte
	// Raw is the exact bytes on disk. For UTF-8 files Text and Raw share
	// memory; treat both as read-only.
	Raw []byte
	// Version is Version(Raw).
	Version string
	// Encoding is how Raw encodes Text.
	Encoding Encoding
	// Mode is the file's mode.
	Mode fs.FileMode
}

// ReadOptions tune ReadFileWith.
type ReadOptions struct {
	// Known, if set, is shown the file's bytes once they are read, before
	// they are checked and hashed; raw is only valid during the call. If
	// the caller already holds exactly these bytes as UTF-8 text (it
	// compared them byte for byte, not by size or time), Known returns
	// their version and its own copy of them, and ReadFileWith trusts it:
	// it skips the text check and the hash and returns a UTF8 File of
	// that copy and version. The buffer it read into is then reused by a
	// later read instead of becoming garbage. Otherwise Known returns ""
	// and nil.
	Known func(raw []byte) (version string, same []byte)
	// Beside, if set, is given the text of a file of overlapReadHashBytes
	// or more once it is checked, and runs while the file's version is
	// hashed on another goroutine (and another P, in a process that serves
	// on one), so that work the caller does with the text (parsing it)
	// costs no extra time. A smaller file, or one Known knew, is not given
	// to it: the caller does that work itself once it has the version,
	// which may name work already done (a cached parse). text is the
	// File's Text and must not be changed.
	Beside func(text []byte)
}

// ReadFile reads the text file at p. It refuses (in this order) bad paths,
// paths and symlinks leading outside the root, version-control metadata
// (unless WithVCSRead), missing files, non-regular
// files, files over the size limit, and content that is not text, each with
// its own sentinel error. It never blocks on a FIFO.
func (w *Workspace) ReadFile(p string) (*File, error) {
	return w.ReadFileWith(p, ReadOptions{})
}

// ReadFileWith is ReadFile with options.
func (w *Workspace) ReadFileWith(p string, opts ReadOptions) (*File, error) {
	const op = "read"
	rel, err := w.rel(op, p)
	if err != nil {
		return nil, err
	}
	target, fi, err := w.resolve(op, rel, false, true)
	if err != nil {
		return nil, err
	}
	// Checking before opening keeps us from opening devices at all, which
	// can have side effects (tape rewinds, terminal control).
	if !fi.Mode().IsRegular() {
		return nil, notRegular(op, rel, fi.Mode())
	}
	if fi.Size() > w.opts.maxFileBytes {
		return nil, w.tooLarge(op, rel, fi.Size())
	}
	if w.opts.beforeOpen != nil {
		w.opts.beforeOpen(target)
	}
	// O_NONBLOCK and the fstat below close the race where a FIFO replaces
	// the file between the Lstat above and this open.
	f, err := w.root.OpenFile(target, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, osErr(op, rel, "", err)
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, osErr(op, rel, "", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(op, rel, fi.Mode())
	}
	var buf *[]byte
	if opts.Known != nil && fi.Size() <= maxPooledRead {
		buf = readBufs.Get().(*[]byte)
		defer readBufs.Put(buf)
	}
	raw, err := readLimited(f, fi.Size(), w.opts.maxFileBytes, buf)
	if err != nil {
		return nil, osErr(op, rel, "", err)
	}
	if raw == nil {
		return nil, w.tooLarge(op, rel, -1)
	}
	if opts.Known != nil {
		if v, same := opts.Known(raw); v != "" {
			return &File{Path: rel, Text: same, Raw: same, Version: v, Encoding: UTF8, Mode: fi.Mode()}, nil
		}
	}
	if buf != nil {
		// The pooled buffer goes back to the pool; the File keeps a copy
		// of exactly its length (append neither zeroes nor over-allocates
		// by more than a size class).
		raw = append([]byte(nil), raw...)
		raw = raw[:len(raw):len(raw)]
	}
	text, enc, err := decodeText(op, rel, raw)
	if err != nil {
		return nil, err
	}
	return &File{Path: rel, Text: text, Raw: raw, Version: hashBeside(raw, text, opts.Beside), Encoding: enc, Mode: fi.Mode()}, nil
}

// overlapReadHashBytes is the smallest file whose version hashBeside
// hashes on another goroutine: below it, handing the hash to another
// goroutine costs more than running it beside the split saves
// (BENCHMARKS.md has the measurements).
const overlapReadHashBytes = 1 << 20

// hashBeside returns Version(raw), running beside(text) while it hashes if
// beside is set and raw is large enough; see ReadOptions.Beside.
func hashBeside(raw, text []byte, beside func(text []byte)) string {
	if beside == nil || len(raw) < overlapReadHashBytes {
		return Version(raw)
	}
	hashed := hashApart(raw)
	beside(text)
	return <-hashed
}

func (w *Workspace) tooLarge(op, p string, size int64) error {
	if size < 0 {
		return newErr(op, p, ErrTooLarge, "file grew over the %d-byte limit while being read; retry or raise the server's limit", w.opts.maxFileBytes)
	}
	return newErr(op, p, ErrTooLarge, "file is %d bytes, over the %d-byte limit; work on a smaller file or raise the server's limit", size, w.opts.maxFileBytes)
}

// readBufs holds read buffers for ReadFileWith calls that may find the
// bytes already known, so that rereading an unchanged file allocates
// nothing.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledRead is the largest file read into a pooled buffer. A larger
// one is read into a buffer of its own, which the File keeps when the
// bytes are new: a pooled buffer that large would cost a copy of the file
// on every read of new bytes, and stay in memory after the read, held by
// the pool until the collector empties it, outside any bound the caller
// keeps on what its reads hold.
const maxPooledRead = 1 << 20

// readLimited reads r to EOF, sized for the size fstat reported. It returns
// nil if there turn out to be more than max bytes: the file may have grown
// since the fstat, and the limit must hold regardless. With into, it reads
// into *into (growing it and storing it back) instead of a new buffer.
func readLimited(r io.Reader, size, max int64, into *[]byte) (raw []byte, err error) {
	// One spare byte lets the final read see EOF without growing the buffer.
	want := int(min(size, max) + 1)
	var buf []byte
	if into != nil {
		if cap(*into) < want {
			*into = make([]byte, 0, want)
		}
		buf = (*into)[:0]
		defer func() { *into = buf[:0] }()
	} else {
		buf = make([]byte, 0, want)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, nil
		}
		if err == io.EOF {
			// Cap the slice so appending to Text or Raw can never write
			// into the other.
			return buf[:len(buf):len(buf)], nil
		}
		if err != nil {
			return nil, err
		}
	}
}
