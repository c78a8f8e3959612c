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
// to the current one, and no more, whatever the size of the tree. With
// After, directories that sort wholly before it are not entered at all,
// so a listing resumed deep into a large tree costs about as much as the
// part of it that is still to come.
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
	var parts []string
	if start != "." {
		parts = strings.Split(start, "/")
	}
	// Read buffers from the pool Search draws on: a listing in pages
	// starts over at every page.
	dbuf := getBuf()
	l.bufs.dir = dbuf[:cap(dbuf)]
	var pats []gitignore.Pattern
	pats, l.bufs.ignore = l.w.rootPatterns(start, getBuf())
	err = l.dir(ctx, d, start, parts, pats, 0)
	putBuf(l.bufs.ignore)
	putBuf(l.bufs.dir)
	return stopped(err)
}

func stopped(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// lister is the state of one List call. It walks depth-first on the
// calling goroutine, so a directory stays open while its entries are
// emitted and its subdirectories walked, and is closed after.
type lister struct {
	w    *walker
	incl globSet
	opts *ListOptions
	emit func(ListEntry) error
	bufs listBufs
	// levels holds the entries of each directory on the way down, reused
	// by the next directory at the same depth.
	levels [][]listed
}

// listed is an entry of a directory being listed.
type listed struct {
	entry
	path string
	// pats are the ignore patterns in force inside a directory.
	pats []gitignore.Pattern
}

// key is the entry's ListEntry.Key.
func (c *listed) key() string {
	if c.typ.IsDir() {
		return c.path + "/"
	}
	return c.path
}

// dir lists the directory at rel, open as d (nil on the generic path),
// at depth levels below the start, emitting its entries after opts.After
// and, when recursive, walking its subdirectories. Only the start
// directory's errors are returned (depth 0); a subdirectory that cannot
// be opened or listed is left out, as Search leaves it out.
func (l *lister) dir(ctx context.Context, d *dir, rel string, parts []string, pats []gitignore.Pattern, depth int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if depth == len(l.levels) {
		l.levels = append(l.levels, nil)
	}
	children := l.levels[depth][:0]
	err := l.w.filter(d, rel, parts, pats, &l.bufs, func(e entry, child string, pats []gitignore.Pattern) {
		children = append(children, listed{entry: e, path: child, pats: pats})
	})
	// Kept for the next directory at this depth, without what this one
	// referenced past its length.
	defer func() { l.levels[depth] = children[:0] }()
	defer clear(children)
	if err != nil {
		if depth == 0 {
			return err
		}
		return nil
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
	for i := first; i < len(children); i++ {
		if err := l.entry(ctx, d, parts, &children[i], depth); err != nil {
			return err
		}
	}
	return nil
}

// entry emits the entry c of the directory d (with components parts) and
// walks it if it is a directory and the listing is recursive.
func (l *lister) entry(ctx context.Context, d *dir, parts []string, c *listed, depth int) error {
	if !utf8.ValidString(c.name) {
		return nil // no request can name it, nor anything in it
	}
	isDir := c.typ.IsDir()
	if c.key() > l.opts.After {
		e := ListEntry{Path: c.path}
		switch {
		case isDir:
			e.Type = fs.ModeDir
		case c.typ&fs.ModeSymlink != 0:
			e.Type = fs.ModeSymlink
		}
		emit := len(l.incl) == 0 || l.incl.match(c.path, c.name, isDir)
		if emit && !isDir {
			mode, size, err := l.w.src.lstat(d, c.name, c.path)
			if err != nil || (!mode.IsRegular() && mode&fs.ModeSymlink == 0) {
				emit = false // gone, or replaced by something else since
			} else {
				e.Size = size
			}
		}
		if emit {
			if err := l.emit(e); err != nil {
				return err
			}
		}
	}
	if !isDir || !l.opts.Recursive {
		return nil
	}
	sub, err := l.w.src.subdir(d, c.name, c.path)
	if err != nil {
		return nil
	}
	defer sub.release()
	return l.dir(ctx, sub, c.path, append(parts[:len(parts):len(parts)], c.name), c.pats, depth+1)
}

// CheckGlobs returns an error wrapping ErrBadPattern for the first glob of
// globs that Search or List would refuse; nil if all are valid.
func CheckGlobs(globs []string) error {
	_, err := newGlobSet(globs)
	return err
}
