package workspace

import (
	"bytes"
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
	// Known, if set, is what the caller holds of the file already. When
	// the file's bytes are exactly Known.Text, compared byte for byte, and
	// are UTF-8 text, ReadFileWith returns a UTF8 File of Known.Text and
	// Known.Version without hashing the bytes again, and the buffer it read
	// them into is reused by a later read instead of becoming garbage.
	// Otherwise Known is not used.
	Known *Known
}

// Known is a file's content as a caller holds it: bytes it read or wrote
// at the path, and their version. Version must be Version(Text) (a caller
// keeps the two together, as a cache keyed by version does): it is the one
// thing ReadFileWith takes on trust. Text is never taken for the file's
// bytes unless it equals them, so a Known that is out of date, or of
// another file, is ignored. Text must not be changed.
type Known struct {
	Version string
	Text    []byte
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
	if k := opts.Known; k != nil && bytes.Equal(raw, k.Text) {
		// The text is checked as any read checks it; only the hash is
		// spared.
		if _, enc, err := decodeText(op, rel, raw); err != nil {
			return nil, err
		} else if enc == UTF8 {
			return &File{Path: rel, Text: k.Text, Raw: k.Text, Version: k.Version, Encoding: UTF8, Mode: fi.Mode()}, nil
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
	return &File{Path: rel, Text: text, Raw: raw, Version: Version(raw), Encoding: enc, Mode: fi.Mode()}, nil
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
