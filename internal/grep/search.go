package grep

import (
	"bytes"
	"context"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// binaryProbe is how much of a file is looked at for a NUL byte.
const binaryProbe = 8 << 10

// Search walks fsys under opts.Path and calls emit once for every file with
// at least one matching line, in ascending order of path. Files are read and
// searched in parallel, but emit is never called concurrently, and the files
// it gets and their order do not depend on timing.
//
// The search stops after opts.MaxMatches matching lines; the file that
// reaches the limit is emitted with the matches up to it (its context stops
// short of the first match left out) and Summary.Truncated is set if any
// match was left out.
//
// Search returns ctx.Err() soon after ctx is done, and emit's error, as is,
// if emit fails; either way emit is not called again. A pattern or glob that
// does not compile is an error wrapping ErrBadPattern with the parser's
// message; a Path that does not exist is an error wrapping fs.ErrNotExist.
// fsys is typically an os.Root's FS, which keeps symlinks from leading out.
func Search(ctx context.Context, fsys fs.FS, opts Options, emit func(File) error) (Summary, error) {
	t0 := time.Now()
	sum, err := find(ctx, fsys, opts, emit)
	sum.Elapsed = time.Since(t0)
	return sum, err
}

// find is Search without the timing.
func find(ctx context.Context, fsys fs.FS, opts Options, emit func(File) error) (Summary, error) {
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	opts = withDefaults(opts)
	m, err := compile(opts)
	if err != nil {
		return Summary{}, err
	}
	incl, err := newGlobSet(opts.Globs)
	if err != nil {
		return Summary{}, err
	}
	excl, err := newGlobSet(opts.ExcludeGlobs)
	if err != nil {
		return Summary{}, err
	}
	types, err := typeGlobSet(opts.Types)
	if err != nil {
		return Summary{}, err
	}
	start := path.Clean(opts.Path)
	fi, err := fs.Stat(fsys, start)
	if err != nil {
		return Summary{}, err
	}
	s := &search{src: newSource(fsys), m: m, opts: opts, emit: emit, acct: newAccount(opts.Budget, opts.MaxHeldBytes)}
	defer s.acct.close()
	s.redo = s.newWorker()
	s.redo.wait = true
	defer s.redo.close()
	s.remaining = opts.MaxMatches
	if !fi.IsDir() {
		if fi.Mode().IsRegular() {
			err = s.single(ctx, start)
		}
		return s.sum, err
	}
	w := &walker{src: s.src, opts: &s.opts, incl: incl, excl: excl, types: types}
	return s.sum, s.tree(ctx, w, start)
}

func withDefaults(o Options) Options {
	if o.MaxMatches <= 0 {
		o.MaxMatches = DefaultMaxMatches
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.MaxHeldBytes <= 0 {
		o.MaxHeldBytes = DefaultMaxHeldBytes
	}
	if o.window <= 0 {
		o.window = defaultWindow
	}
	return o
}

// search is the state of one Search call.
type search struct {
	src  *source
	m    *matcher
	opts Options
	emit func(File) error
	// probing is set once the limit is reached: from then on the only
	// question about a file is whether it has a match at all.
	probing atomic.Bool
	// acct counts the bytes of the results the search holds.
	acct *account
	// redo is the emitting goroutine's own worker: it runs the tasks the
	// workers have not started when their turn comes, and reads deferred
	// files again.
	redo *worker
	// w lists directories; q holds the tasks of a tree search.
	w *walker
	q *queue

	// Owned by the goroutine that calls emit.
	sum       Summary
	remaining int
	done      bool
}

// result is what a worker found in a file.
type result struct {
	scanned bool
	size    int64
	// matched is set when the file has a match; file and ms are filled in
	// unless the search was already probing or the file was deferred.
	matched bool
	// deferred means the file matched but was not kept (or was evicted),
	// for the search's bounds on what it holds.
	deferred bool
	file     File
	ms       []match
}

// take accounts for one result and emits it, up to the limit. The File's
// bytes are given back unless it goes to a caller that releases them.
func (s *search) take(ctx context.Context, r *result) error {
	emitted := false
	defer func() {
		if !emitted || s.opts.Budget == nil {
			r.file.Release()
		}
	}()
	// A result made while ctx was ending may be cut short.
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.scanned {
		s.sum.FilesScanned++
		s.sum.BytesScanned += r.size
	}
	if !r.matched {
		return nil
	}
	if s.remaining == 0 {
		s.sum.Truncated, s.done = true, true
		return nil
	}
	f := r.file
	n := len(r.ms)
	if n > s.remaining {
		n = s.remaining
		f.Lines = s.m.buildLines(ctx, f.Raw, r.ms[:n], s.opts.Before, s.opts.After, r.ms[n].num)
		if err := ctx.Err(); err != nil {
			return err
		}
		s.sum.Truncated, s.done = true, true
	}
	s.remaining -= n
	if s.remaining == 0 {
		s.probing.Store(true)
	}
	s.sum.FilesMatched++
	s.sum.Matches += n
	emitted = true
	return s.emit(f)
}

// single searches one file named by the caller.
func (s *search) single(ctx context.Context, rel string) error {
	it := &item{name: path.Base(rel), path: rel, link: true}
	s.redo.runFile(ctx, it)
	return s.take(ctx, &it.res)
}

// worker lists directories and reads and searches files with buffers of
// its own.
type worker struct {
	s    *search
	f    *finder
	buf  []byte
	ms   []match
	bufs listBufs
	// wait is set for the emitting goroutine's worker, which waits for the
	// bytes of a result (it is taken right away); the others keep a
	// result only if its bytes are there.
	wait bool
}

func (s *search) newWorker() *worker {
	w := &worker{s: s, buf: getBuf()}
	if s.m.needles != nil {
		w.f = newFinder(s.m.needles)
	}
	return w
}

// close gives the worker's buffer back, for the next search or until the
// worker has a file to read again: a worker that waits holds none.
func (w *worker) close() {
	if w.buf != nil {
		putBuf(w.buf)
		w.buf = nil
	}
}

// runFile reads and searches the file of a task.
func (w *worker) runFile(ctx context.Context, j *item) {
	if ctx.Err() != nil {
		j.parent.release()
		return
	}
	if w.buf == nil {
		w.buf = getBuf()
	}
	data, buf, err := w.s.src.readFile(j.parent, j.name, j.path, j.link, w.buf, w.s.opts.MaxFileBytes)
	j.parent.release()
	w.buf = buf
	if cap(w.buf) > maxPooledBuf {
		w.buf = nil
	}
	if err != nil || bytes.IndexByte(data[:min(len(data), binaryProbe)], 0) >= 0 {
		return
	}
	r := &j.res
	r.scanned, r.size = true, int64(len(data))
	probing := w.s.probing.Load()
	limit := w.s.opts.MaxMatches + 1
	if probing {
		limit = 1
	}
	w.ms = w.s.m.scan(ctx, w.f, data, limit, w.ms[:0])
	// Validating only files that match keeps the UTF-8 check off the
	// common path; a file that is not text is skipped as if it had none.
	// A scan cut short by ctx found nothing that counts.
	if len(w.ms) == 0 || ctx.Err() != nil || !utf8.Valid(data) {
		return
	}
	r.matched = true
	if probing {
		return
	}
	// The lines copy what they show, so they can be built, and the result
	// sized, before the bytes are counted and the file copied.
	lines := w.s.m.buildLines(ctx, data, w.ms, w.s.opts.Before, w.s.opts.After, 0)
	n := resultBytes(j.path, len(data), lines, w.ms)
	if w.wait {
		h, err := w.s.acct.acquire(ctx, n)
		if err != nil {
			return // cut short: ctx is done
		}
		r.file = File{Path: j.path, Raw: bytes.Clone(data), Lines: lines, hold: h}
		r.ms = slices.Clone(w.ms)
		return
	}
	h := w.s.acct.tryAhead(j, n)
	if h == nil {
		r.deferred = true
		return
	}
	w.s.acct.keep(j, h, File{Path: j.path, Raw: bytes.Clone(data), Lines: lines}, slices.Clone(w.ms))
}
