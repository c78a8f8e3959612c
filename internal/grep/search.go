package grep

import (
	"bytes"
	"context"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// binaryProbe is how much of a file is looked at for a NUL byte.
const binaryProbe = 8 << 10

// window bounds how many files may be read ahead of the one being emitted,
// which bounds the memory held by matching files waiting for their turn.
const window = 1024

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
	start := path.Clean(strings.TrimPrefix(opts.Path, "./"))
	fi, err := fs.Stat(fsys, start)
	if err != nil {
		return Summary{}, err
	}
	s := &search{src: newSource(fsys), m: m, opts: opts, emit: emit}
	s.remaining = opts.MaxMatches
	if !fi.IsDir() {
		if fi.Mode().IsRegular() {
			err = s.single(ctx, start)
		}
		return s.sum, err
	}
	w := &walker{src: s.src, opts: &s.opts, incl: incl, excl: excl}
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

	// Owned by the goroutine that calls emit.
	sum       Summary
	remaining int
	done      bool
}

// job is one file to search. The walker queues it twice: to the workers,
// and in order to the goroutine that emits, which waits for done.
type job struct {
	d    *dir
	name string
	path string
	link bool
	res  result
	done chan struct{}
}

// result is what a worker found in a file.
type result struct {
	scanned bool
	size    int64
	// matched is set when the file has a match; file and ms are filled in
	// unless the search was already probing.
	matched bool
	file    File
	ms      []match
}

// tree searches the directory start.
func (s *search) tree(ctx context.Context, w *walker, start string) error {
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	d, err := s.src.openDir(start)
	if err != nil {
		return err
	}
	jobs := make(chan *job, 16*s.opts.Workers)
	order := make(chan *job, window)
	w.ctx = ictx
	w.send = func(j *job) bool {
		select {
		case order <- j:
		case <-ictx.Done():
			j.d.release()
			return false
		}
		select {
		case jobs <- j:
			return true
		case <-ictx.Done():
			j.d.release()
			return false
		}
	}
	var wg sync.WaitGroup
	var walkErr error
	wg.Go(func() {
		defer close(order)
		defer close(jobs)
		defer d.release()
		parts := strings.Split(start, "/")
		if start == "." {
			parts = nil
		}
		walkErr = w.walk(d, start, parts, w.rootPatterns(start))
	})
	for range s.opts.Workers {
		wg.Go(func() {
			wk := s.newWorker()
			for j := range jobs {
				wk.run(ictx, j)
			}
		})
	}
	err = s.collect(ctx, order)
	cancel()
	wg.Wait()
	if err == nil {
		err = walkErr
	}
	return err
}

// collect takes the jobs in order as they finish and emits their results.
func (s *search) collect(ctx context.Context, order <-chan *job) error {
	for j := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := s.take(&j.res); err != nil || s.done {
			return err
		}
	}
	return ctx.Err()
}

// take accounts for one result and emits it, up to the limit.
func (s *search) take(r *result) error {
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
		f.Lines = buildLines(f.Raw, r.ms[:n], s.opts.Before, s.opts.After, r.ms[n].num)
		s.sum.Truncated, s.done = true, true
	}
	s.remaining -= n
	if s.remaining == 0 {
		s.probing.Store(true)
	}
	s.sum.FilesMatched++
	s.sum.Matches += n
	return s.emit(f)
}

// single searches one file named by the caller.
func (s *search) single(ctx context.Context, rel string) error {
	wk := s.newWorker()
	j := &job{name: path.Base(rel), path: rel, link: true, done: make(chan struct{})}
	wk.run(ctx, j)
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.take(&j.res)
}

// worker reads and searches files with buffers of its own.
type worker struct {
	s   *search
	f   *finder
	buf []byte
	ms  []match
}

func (s *search) newWorker() *worker {
	w := &worker{s: s}
	if s.m.needles != nil {
		w.f = newFinder(s.m.needles)
	}
	return w
}

// maxKeptBuf is the largest read buffer a worker keeps between files.
const maxKeptBuf = 4 << 20

func (w *worker) run(ctx context.Context, j *job) {
	defer close(j.done)
	if ctx.Err() != nil {
		j.d.release()
		return
	}
	data, buf, err := w.s.src.readFile(j.d, j.name, j.path, j.link, w.buf, w.s.opts.MaxFileBytes)
	j.d.release()
	w.buf = buf
	if cap(w.buf) > maxKeptBuf {
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
	w.ms = w.s.m.scan(w.f, data, limit, w.ms[:0])
	// Validating only files that match keeps the UTF-8 check off the
	// common path; a file that is not text is skipped as if it had none.
	if len(w.ms) == 0 || !utf8.Valid(data) {
		return
	}
	r.matched = true
	if probing {
		return
	}
	raw := bytes.Clone(data)
	r.ms = slices.Clone(w.ms)
	r.file = File{Path: j.path, Raw: raw, Lines: buildLines(raw, r.ms, w.s.opts.Before, w.s.opts.After, 0)}
}
