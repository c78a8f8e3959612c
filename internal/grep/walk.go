package grep

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/hashline/hashline/internal/workspace"
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
		if n := braceExpansions(p); n > MaxGlobAlternatives {
			return nil, fmt.Errorf("%w: glob %q expands to more than %d patterns through its {a,b} groups; use fewer groups or alternatives, or several globs",
				ErrBadPattern, orig, MaxGlobAlternatives)
		}
		g = append(g, glob{pattern: p, full: strings.Contains(p, "/"), dirOnly: dirOnly})
	}
	return g, nil
}

// MaxGlobAlternatives bounds the patterns one glob's {a,b} groups expand
// to. The matcher tries every combination of alternatives against every
// name it tests, so a short glob of many groups ("{a,a}{a,a}…") would cost
// exponential time per file.
const MaxGlobAlternatives = 256

// braceExpansions returns how many patterns the {a,b} groups of the valid
// glob p expand to, or more than MaxGlobAlternatives once it is past that:
// groups in sequence multiply, alternatives and nested groups add up.
// Brackets and escaped characters are not groups.
func braceExpansions(p string) int {
	n, _ := expandSeq(p, 0, false)
	return n
}

// expandSeq counts the expansions of p from i up to the end, or within a
// group up to its "," or "}" (returning the index of that byte).
func expandSeq(p string, i int, inGroup bool) (int, int) {
	const over = MaxGlobAlternatives + 1
	n := 1
	for i < len(p) {
		switch p[i] {
		case '\\':
			i += 2
			continue
		case '[':
			if j := strings.IndexByte(p[i+1:], ']'); j >= 0 {
				i += j + 2
				continue
			}
		case '{':
			sum := 0
			for {
				k, end := expandSeq(p, i+1, true)
				sum = min(sum+k, over)
				i = end
				if i >= len(p) || p[i] == '}' {
					break
				}
			}
			n = min(n*sum, over)
		case ',', '}':
			if inGroup {
				return n, i
			}
		}
		i++
	}
	return n, i
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

// walker lists directories and filters their entries. It is shared by the
// workers and never changes during a search.
type walker struct {
	src        *source
	opts       *Options
	incl, excl globSet
	// types are the globs of Options.Types.
	types globSet
}

// listBufs are a worker's buffers for listing directories (dir) and
// reading .gitignore files (ignore), and scratch space for paths (parts).
type listBufs struct {
	dir, ignore []byte
	parts       []string
}

// ignoreFile is read in every directory walked; its patterns apply to the
// directory's contents, after (so above) those of the directories above it.
const ignoreFile = ".gitignore"

// rootPatterns returns the ignore patterns that apply inside the directory
// start: .git/info/exclude and the .gitignore files of the directories above
// it. When start itself is ignored, the caller named it explicitly, so the
// rules that ignore it are dropped (ripgrep, too, searches an ignored
// directory it is given). buf is a read buffer, returned for reuse.
func (w *walker) rootPatterns(start string, buf []byte) ([]gitignore.Pattern, []byte) {
	if w.opts.NoIgnore {
		return nil, buf
	}
	pats, buf := w.readIgnore(nil, "", ".git/info/exclude", true, nil, buf)
	if start == "." {
		return pats, buf
	}
	parts := strings.Split(start, "/")
	for i := range parts {
		dir := path.Join(parts[:i]...)
		var more []gitignore.Pattern
		more, buf = w.readIgnore(nil, "", path.Join(dir, ignoreFile), true, parts[:i], buf)
		pats = append(pats, more...)
	}
	if gitignore.NewMatcher(pats).Match(parts, true) {
		return nil, buf
	}
	return pats, buf
}

// readIgnore parses the ignore file name in d (rel from the root), with
// domain as the directory its patterns are relative to.
func (w *walker) readIgnore(d *dir, name, rel string, link bool, domain []string, buf []byte) ([]gitignore.Pattern, []byte) {
	data, buf, err := w.src.readFile(d, name, rel, link, buf, 1<<20)
	if err != nil {
		return nil, buf
	}
	var pats []gitignore.Pattern
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		s := strings.TrimSuffix(string(line), "\r")
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "#") {
			continue
		}
		pats = append(pats, gitignore.ParsePattern(s, domain))
	}
	return pats, buf
}

// list lists the directory of the task it, open as d, and returns the
// entries to search, in walk order: files that pass the filters and
// directories that are not pruned, each holding a reference to d.
func (w *walker) list(it *item, d *dir, bufs *listBufs) ([]*item, error) {
	var out []*item
	err := w.filter(d, it.path, it.parts, it.pats, bufs, func(e entry, child string, pats []gitignore.Pattern) {
		if e.typ.IsDir() {
			out = append(out, &item{key: child + "/", path: child, name: e.name, isDir: true, parent: d,
				parts: append(it.parts[:len(it.parts):len(it.parts)], e.name), pats: pats})
		} else {
			out = append(out, &item{key: child, path: child, name: e.name, parent: d, link: e.typ&fs.ModeSymlink != 0})
		}
		d.retain()
	})
	return out, err
}

// filter lists the directory at rel (open as d; parts are rel's
// components, pats the ignore patterns in force in it) and calls add, in
// walk order, with each entry that passes the filters: files (and links)
// that are to be searched, and directories that are not pruned. child is
// the entry's path from the root, and pats the ignore patterns in force
// inside a directory entry (the directory's own .gitignore included); add
// must not keep parts or pats beyond clipped copies.
func (w *walker) filter(d *dir, rel string, parts []string, pats []gitignore.Pattern, bufs *listBufs, add func(e entry, child string, pats []gitignore.Pattern)) error {
	ents, buf, err := w.src.list(d, rel, bufs.dir)
	bufs.dir = buf
	if err != nil {
		return err
	}
	if !w.opts.NoIgnore {
		for _, e := range ents {
			if e.name == ignoreFile && (e.typ.IsRegular() || e.typ&fs.ModeSymlink != 0) {
				var own []gitignore.Pattern
				own, bufs.ignore = w.readIgnore(d, e.name, join(rel, e.name), e.typ&fs.ModeSymlink != 0, parts, bufs.ignore)
				// Clip so that sibling directories never share appends.
				pats = append(pats[:len(pats):len(pats)], own...)
				break
			}
		}
	}
	ignored := gitignore.NewMatcher(pats)
	for _, e := range ents {
		name, isDir := e.name, e.typ.IsDir()
		if workspace.IsVCSName(name) || (!w.opts.Hidden && name[0] == '.') {
			continue
		}
		child := join(rel, name)
		if len(pats) > 0 {
			bufs.parts = append(append(bufs.parts[:0], parts...), name)
			if ignored.Match(bufs.parts, isDir) {
				continue
			}
		}
		if w.excl.match(child, name, isDir) {
			continue
		}
		switch {
		case isDir:
		case e.typ.IsRegular() || e.typ&fs.ModeSymlink != 0:
			if w.opts.SkipFile != nil && w.opts.SkipFile(name) {
				continue
			}
			if e.typ&fs.ModeSymlink != 0 && w.opts.SkipLink != nil && w.opts.SkipLink(child) {
				continue
			}
			if len(w.incl) > 0 && !w.incl.match(child, name, false) {
				continue
			}
			if len(w.types) > 0 && !w.types.match(child, name, false) {
				continue
			}
		default:
			continue
		}
		add(e, child, pats)
	}
	return nil
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
