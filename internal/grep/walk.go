package grep

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// glob is one include or exclude glob.
type glob struct {
	pattern string
	// full matches the path from the root rather than the base name.
	full bool
	// dirOnly (a trailing "/") matches directories only.
	dirOnly bool
}

type globSet []glob

func newGlobSet(pats []string) (globSet, error) {
	var g globSet
	for _, p := range pats {
		orig := p
		p = strings.TrimPrefix(p, "./")
		p = strings.TrimLeft(p, "/")
		dirOnly := strings.HasSuffix(p, "/")
		p = strings.TrimRight(p, "/")
		if p == "" || !doublestar.ValidatePattern(p) {
			return nil, fmt.Errorf("%w: bad glob %q", ErrBadPattern, orig)
		}
		g = append(g, glob{pattern: p, full: strings.Contains(p, "/"), dirOnly: dirOnly})
	}
	return g, nil
}

// match reports whether the entry at rel, with base name name, matches any
// glob of g.
func (g globSet) match(rel, name string, isDir bool) bool {
	for _, gl := range g {
		if gl.dirOnly && !isDir {
			continue
		}
		subject := name
		if gl.full {
			subject = rel
		}
		if doublestar.MatchUnvalidated(gl.pattern, subject) {
			return true
		}
	}
	return false
}

// walker lists the tree depth first in path order and hands every file that
// passes the filters to send.
type walker struct {
	ctx        context.Context
	src        *source
	opts       *Options
	incl, excl globSet
	// types are the globs of Options.Types.
	types globSet
	// send queues a job; false means the search is stopping.
	send func(*job) bool
	// dbuf is the buffer for listing directories, fbuf for .gitignore files.
	dbuf, fbuf []byte
}

// ignoreFile is read in every directory walked; its patterns apply to the
// directory's contents, after (so above) those of the directories above it.
const ignoreFile = ".gitignore"

// rootPatterns returns the ignore patterns that apply inside the directory
// start: .git/info/exclude and the .gitignore files of the directories above
// it. When start itself is ignored, the caller named it explicitly, so the
// rules that ignore it are dropped (ripgrep, too, searches an ignored
// directory it is given).
func (w *walker) rootPatterns(start string) []gitignore.Pattern {
	if w.opts.NoIgnore {
		return nil
	}
	pats := w.readIgnore(nil, "", ".git/info/exclude", true, nil)
	if start == "." {
		return pats
	}
	parts := strings.Split(start, "/")
	for i := range parts {
		dir := path.Join(parts[:i]...)
		pats = append(pats, w.readIgnore(nil, "", path.Join(dir, ignoreFile), true, parts[:i])...)
	}
	if gitignore.NewMatcher(pats).Match(parts, true) {
		return nil
	}
	return pats
}

// readIgnore parses the ignore file name in d (rel from the root), with
// domain as the directory its patterns are relative to.
func (w *walker) readIgnore(d *dir, name, rel string, link bool, domain []string) []gitignore.Pattern {
	data, buf, err := w.src.readFile(d, name, rel, link, w.fbuf, 1<<20)
	w.fbuf = buf
	if err != nil {
		return nil
	}
	var pats []gitignore.Pattern
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		s := strings.TrimSuffix(string(line), "\r")
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "#") {
			continue
		}
		pats = append(pats, gitignore.ParsePattern(s, domain))
	}
	return pats
}

// walk lists the directory d at rel (parts are rel's components) and
// everything below it. pats are the ignore patterns in force. Only an error
// listing the directory the search started in is returned; deeper ones skip
// the directory, as unreadable files are skipped.
func (w *walker) walk(d *dir, rel string, parts []string, pats []gitignore.Pattern) error {
	if w.ctx.Err() != nil {
		return nil
	}
	ents, buf, err := w.src.list(d, rel, w.dbuf)
	w.dbuf = buf
	if err != nil {
		return err
	}
	if !w.opts.NoIgnore {
		for _, e := range ents {
			if e.name == ignoreFile && (e.typ.IsRegular() || e.typ&fs.ModeSymlink != 0) {
				own := w.readIgnore(d, e.name, join(rel, e.name), e.typ&fs.ModeSymlink != 0, parts)
				// Clip so that sibling directories never share appends.
				pats = append(pats[:len(pats):len(pats)], own...)
				break
			}
		}
	}
	ignored := gitignore.NewMatcher(pats)
	for _, e := range ents {
		name, isDir := e.name, e.typ.IsDir()
		if name == ".git" || (!w.opts.Hidden && name[0] == '.') {
			continue
		}
		child := join(rel, name)
		if len(pats) > 0 && ignored.Match(append(parts, name), isDir) {
			continue
		}
		if w.excl.match(child, name, isDir) {
			continue
		}
		switch {
		case isDir:
			sub, err := w.src.subdir(d, name, child)
			if err != nil {
				continue
			}
			w.walk(sub, child, append(parts, name), pats)
			sub.release()
		case e.typ.IsRegular() || e.typ&fs.ModeSymlink != 0:
			if w.opts.SkipFile != nil && w.opts.SkipFile(name) {
				continue
			}
			if len(w.incl) > 0 && !w.incl.match(child, name, false) {
				continue
			}
			if len(w.types) > 0 && !w.types.match(child, name, false) {
				continue
			}
			d.retain()
			j := &job{d: d, name: name, path: child, link: e.typ&fs.ModeSymlink != 0, done: make(chan struct{})}
			if !w.send(j) {
				return nil
			}
		}
		if w.ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
