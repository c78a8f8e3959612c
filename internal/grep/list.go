package grep

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ListOptions configures List. Path, Globs, Hidden, NoIgnore, SkipFile and
// SkipLink mean what they mean in Options: a listing sees what a search
// would search, plus the directories and the symbolic links themselves.
type ListOptions struct {
	Path     string
	Globs    []string
	Hidden   bool
	NoIgnore bool
	SkipFile func(name string) bool
	SkipLink func(rel string) bool
	// Recursive lists the whole tree under Path; otherwise only the
	// entries of Path itself.
	Recursive bool
	// After, when set, is the Key of an entry: the listing starts after it.
	After string
}

// ListEntry is one entry of a listing.
type ListEntry struct {
	// Path is relative to the root of the file system, "/"-separated.
	Path string
	// Type is 0 for a regular file, fs.ModeDir or fs.ModeSymlink.
	Type fs.FileMode
	// Size is the Lstat size of a file or link; 0 for a directory.
	Size int64
}

// Key returns the entry's place in listing order: its path, with "/" after
// a directory's, so that a directory sorts right before its contents.
func (e ListEntry) Key() string {
	if e.Type.IsDir() {
		return e.Path + "/"
	}
	return e.Path
}

// ErrStop, returned by List's emit, ends the listing without an error.
var ErrStop = errors.New("stop listing")

// List walks fsys under opts.Path and calls emit for every entry, in
// ascending order of Key, never concurrently. It uses the walker of Search,
// so the same .gitignore, hidden and version-control rules decide what is
// seen. Directories are walked whatever their names (a glob selects which
// entries are emitted, not which directories are entered). Symbolic links
// are emitted and never followed; other special files (FIFOs, sockets,
// devices) and names that are not valid UTF-8 are left out.
//
// The walk holds the listing of each directory on the way down from Path
// to the current one, and a few batches of directories read ahead, no
// more, whatever the size of the tree. With After, directories that sort
// wholly before it are not entered at all, so a listing resumed deep into
// a large tree costs about as much as the part of it that is still to
// come. SkipFile and SkipLink may be called on another goroutine than
// emit, while emit runs.
//
// A Path naming something other than a directory is emitted alone. A Path
// that does not exist is an error wrapping fs.ErrNotExist; a bad glob one
// wrapping ErrBadPattern; ctx's error soon after ctx is done.
func List(ctx context.Context, fsys fs.FS, opts ListOptions, emit func(ListEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	incl, err := newGlobSet(opts.Globs)
	if err != nil {
		return err
	}
	start := path.Clean(opts.Path)
	fi, err := fs.Stat(fsys, start)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		e := ListEntry{Path: start, Size: fi.Size()}
		if !fi.Mode().IsRegular() {
			return nil
		}
		if opts.After != "" && e.Key() <= opts.After {
			return nil
		}
		return stopped(emit(e))
	}
	src := newSource(fsys)
	gopts := &Options{Hidden: opts.Hidden, NoIgnore: opts.NoIgnore, SkipFile: opts.SkipFile, SkipLink: opts.SkipLink}
	l := &lister{w: &walker{src: src, opts: gopts}, incl: incl, opts: &opts, emit: emit}
	d, err := src.openDir(start)
	if err != nil {
		return err
	}
	defer d.release()
	root := &listing{d: d, path: start}
	if start != "." {
		root.parts = strings.Split(start, "/")
	}
	// Read buffers from the pool Search draws on: a listing in pages
	// starts over at every page.
	dbuf := getBuf()
	l.bufs.dir = dbuf[:cap(dbuf)]
	var pats []gitignore.Pattern
	pats, l.bufs.ignore = l.w.rootPatterns(start, getBuf())
	defer func() {
		putBuf(l.bufs.ignore)
		putBuf(l.bufs.dir)
	}()
	if err := l.load(root, pats); err != nil {
		return err
	}
	if opts.Recursive {
		l.start(root)
		defer l.stop()
	}
	return stopped(l.walk(ctx, root))
}

func stopped(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// lister is the state of one List call.
//
// Nearly all of a listing's time is spent in system calls: reading
// directories and stating files. A recursive listing spreads them over
// two goroutines in a pipeline that keeps the walk's order: a reader opens
// and reads the directories, depth-first, and hands them on in batches;
// the calling goroutine states the files of each (those the reader has
// not stated while it waited) and emits its entries, walking the
// directories in the order they come. Handing directories
// over one by one would cost a goroutine wake-up for about as much work
// as it saves, hence the batches; and the reader runs at most a few
// batches ahead, so the listing's memory and open descriptors stay
// bounded whatever the size of the tree.
type lister struct {
	w    *walker
	incl globSet
	opts *ListOptions
	emit func(ListEntry) error
	// bufs are the reader's (the calling goroutine's until it starts).
	bufs listBufs

	// batches are the reader's, closed when it is done; quit tells it to
	// stop. batch[next:] are the directories received and not yet walked.
	batches chan []*listing
	quit    chan struct{}
	batch   []*listing
	next    int
}

// Limits of a batch of directories handed from the reader to the walk:
// the entries that fill one, and the directories (each open).
const (
	batchEntries = 256
	batchDirs    = 32
)

// listing is a directory read for the walk, open as d (nil on the
// generic path) until the walk is done with it.
type listing struct {
	d     *dir
	path  string
	parts []string
	// children are the entries to walk, those before opts.After left out.
	children []listed
}

// listed is an entry of a directory being listed.
type listed struct {
	entry
	path string
	// pats are the ignore patterns in force inside a directory.
	pats []gitignore.Pattern
	// emit is whether the entry is emitted, once a file is stated.
	emit bool
	// stated is whether the reader stated the file already: size is its
	// size, or emit false if it was gone.
	stated bool
	size   int64
}

// key is the entry's ListEntry.Key.
func (c *listed) key() string {
	if c.typ.IsDir() {
		return c.path + "/"
	}
	return c.path
}

// load reads the entries of the directory of x, with pats the ignore
// patterns in force in it, from the first after opts.After on.
func (l *lister) load(x *listing, pats []gitignore.Pattern) error {
	var children []listed
	err := l.w.filter(x.d, x.path, x.parts, pats, &l.bufs, func(e entry, child string, pats []gitignore.Pattern) {
		if utf8.ValidString(e.name) { // else no request can name it, nor anything in it
			children = append(children, listed{entry: e, path: child, pats: pats})
		}
	})
	if err != nil {
		return err
	}
	after := l.opts.After
	// Entries wholly before After: skip them, and the directories whose
	// contents come before it too. The one directory After lies in (if
	// any) is entered without being emitted.
	first := 0
	if after != "" {
		first = sort.Search(len(children), func(i int) bool { return children[i].key() > after })
		if first > 0 && children[first-1].typ.IsDir() && strings.HasPrefix(after, children[first-1].key()) {
			first--
		}
	}
	x.children = children[first:]
	for i := range x.children {
		c := &x.children[i]
		c.emit = c.key() > after && (len(l.incl) == 0 || l.incl.match(c.path, c.name, c.typ.IsDir()))
	}
	return nil
}

// start starts the reader on the subdirectories of root, loaded.
func (l *lister) start(root *listing) {
	l.batches = make(chan []*listing, 1)
	l.quit = make(chan struct{})
	root.d.retain()
	go func() {
		defer close(l.batches)
		defer root.d.release()
		r := reader{l: l}
		r.read(root)
		if len(r.batch) > 0 {
			r.send()
		}
	}()
}

// stop stops the reader, and closes the directories it read that the
// walk did not reach.
func (l *lister) stop() {
	close(l.quit)
	for _, x := range l.batch[l.next:] {
		x.d.release()
	}
	for b := range l.batches {
		for _, x := range b {
			x.d.release()
		}
	}
}

// reader is the state of the goroutine reading directories ahead.
type reader struct {
	l       *lister
	batch   []*listing
	entries int
}

// read reads the subdirectories of x, depth-first, into batches,
// holding x open meanwhile; false once the walk has stopped.
func (r *reader) read(x *listing) bool {
	for i := range x.children {
		c := &x.children[i]
		if !c.typ.IsDir() {
			continue
		}
		select {
		case <-r.l.quit:
			return false
		default:
		}
		sub, err := r.l.w.src.subdir(x.d, c.name, c.path)
		if err != nil {
			continue // left out, as Search leaves it out
		}
		y := &listing{d: sub, path: c.path, parts: append(x.parts[:len(x.parts):len(x.parts)], c.name)}
		if r.l.load(y, c.pats) != nil {
			sub.release()
			continue
		}
		sub.retain() // the walk's, released once it has walked y
		r.batch = append(r.batch, y)
		r.entries += len(y.children)
		if (r.entries >= batchEntries || len(r.batch) >= batchDirs) && !r.send() {
			sub.release()
			return false
		}
		ok := r.read(y)
		sub.release()
		if !ok {
			return false
		}
	}
	return true
}

// send hands the batch to the walk; false, the batch closed, once the
// walk has stopped.
//
// While the walk is still busy with the batch before, the reader states
// the batch's files itself, so that whichever goroutine has less to do
// takes on more of the stating.
func (r *reader) send() bool {
	for _, x := range r.batch {
		for i := range x.children {
			select {
			case r.l.batches <- r.batch:
				r.batch, r.entries = nil, 0
				return true
			case <-r.l.quit:
				return r.drop()
			default:
			}
			if c := &x.children[i]; c.emit && !c.typ.IsDir() {
				c.stated = true
				c.emit, c.size = r.l.stat(x, c)
			}
		}
	}
	select {
	case r.l.batches <- r.batch:
		r.batch, r.entries = nil, 0
		return true
	case <-r.l.quit:
		return r.drop()
	}
}

// drop closes the batch the walk will never take.
func (r *reader) drop() bool {
	for _, x := range r.batch {
		x.d.release()
	}
	r.batch = nil
	return false
}

// stat returns whether the file c of x is still one to emit, and its size.
func (l *lister) stat(x *listing, c *listed) (bool, int64) {
	mode, size, err := l.w.src.lstat(x.d, c.name, c.path)
	if err != nil || (!mode.IsRegular() && mode&fs.ModeSymlink == 0) {
		return false, 0 // gone, or replaced by something else since
	}
	return true, size
}

// peek returns the next directory the reader read, nil if there are no
// more.
func (l *lister) peek() *listing {
	if l.next == len(l.batch) {
		b, ok := <-l.batches
		if !ok {
			return nil
		}
		l.batch, l.next = b, 0
	}
	return l.batch[l.next]
}

// walk emits the entries of x and, when the listing is recursive, walks
// its subdirectories as the reader hands them on.
func (l *lister) walk(ctx context.Context, x *listing) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i := range x.children {
		c := &x.children[i]
		isDir := c.typ.IsDir()
		if c.emit {
			e := ListEntry{Path: c.path}
			switch {
			case isDir:
				e.Type = fs.ModeDir
			case c.typ&fs.ModeSymlink != 0:
				e.Type = fs.ModeSymlink
			}
			emit := true
			switch {
			case c.stated:
				e.Size = c.size
			case !isDir:
				emit, e.Size = l.stat(x, c)
			}
			if emit {
				if err := l.emit(e); err != nil {
					return err
				}
			}
		}
		if !isDir || !l.opts.Recursive {
			continue
		}
		// The reader leaves out a directory it could not open or list.
		if y := l.peek(); y != nil && y.path == c.path {
			l.next++
			err := l.walk(ctx, y)
			y.d.release()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckGlobs returns an error wrapping ErrBadPattern for the first glob of
// globs that Search or List would refuse; nil if all are valid.
func CheckGlobs(globs []string) error {
	_, err := newGlobSet(globs)
	return err
}
