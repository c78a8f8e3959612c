package workspace

import (
	"strings"
	"unicode/utf8"
)

// Path limits. The kernel refuses paths over PATH_MAX in one system call,
// but os.Root resolves a path one component at a time, so without these a
// single write of "d/d/d/…" thousands deep would create thousands of
// directories, each step re-walking the ones before it (minutes of work).
const (
	MaxPathBytes = 4096 // PATH_MAX
	MaxPathDepth = 256  // components
)

// The paths no caller may name are refused by rel, which every method that
// takes a caller's path goes through (Rel, Resolve, Stat, FileVersion,
// ReadFile, WriteFile, Stage, CheckWrite, Entry), so the rules hold for any
// user of the package, not only behind the server's interceptors. The
// workspace's own temp files are created, renamed, redone and swept by
// their symlink-free paths, never through rel.

// checkSize refuses a path (as given) over MaxPathBytes or MaxPathDepth.
func checkSize(op, p string) error {
	if len(p) > MaxPathBytes {
		return newErr(op, shortPath(p), ErrInvalidPath, "the path is %d bytes, over the %d-byte limit; use a shorter path", len(p), MaxPathBytes)
	}
	if n := strings.Count(p, "/") + 1; n > MaxPathDepth {
		return newErr(op, shortPath(p), ErrInvalidPath, "the path has %d components, over the limit of %d; use a shallower path", n, MaxPathDepth)
	}
	return nil
}

// checkTemp refuses rel if it names one of the workspace's temp files
// (IsTempName), so that no caller reads, overwrites, deletes or moves what
// a write in progress, or a crash, left there.
func checkTemp(op, rel string) error {
	if IsTempName(rel) {
		return newErr(op, rel, ErrInvalidPath, "is the name of a temporary file the server writes through; choose another name")
	}
	return nil
}

// shortPath is the start of a path too long to repeat whole in an error.
func shortPath(p string) string {
	const keep = 64
	if len(p) <= keep {
		return p
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "…"
}
