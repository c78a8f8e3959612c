package grep

import (
	"path"
	"path/filepath"
)

// Globs are globs as Search and List match them (Options.Globs), for other
// code that chooses files by the operator's or a caller's globs: a glob
// without "/" matches a file's name in any directory, one with "/" its path
// from the root, and "**" crosses directories.
type Globs struct{ set globSet }

// CompileGlobs compiles pats; its error, for a glob Search would refuse,
// wraps ErrBadPattern.
func CompileGlobs(pats []string) (Globs, error) {
	g, err := newGlobSet(pats)
	return Globs{set: g}, err
}

// Match reports whether the file at rel (relative to the root, with either
// separator) matches any of the globs.
func (g Globs) Match(rel string) bool {
	rel = filepath.ToSlash(rel)
	return g.set.match(rel, path.Base(rel), false)
}
