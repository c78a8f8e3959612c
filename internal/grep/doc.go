// Package grep is the search engine behind the Grep RPC: it walks a tree in
// parallel, finds the lines that match an RE2 pattern and hands each matching
// file to the caller in ascending path order, with its raw bytes, so that the
// server can compute the file's version and line hashes from exactly the bytes
// that were searched.
//
// Results equal a naive scan that runs the regexp on every line; everything
// else is there to make that fast on large trees:
//
//   - A pool of workers sized to the machine lists directories and reads
//     whole files into per-worker buffers, taking tasks in path order, while
//     the caller's goroutine emits results in exact order (and does the next
//     task itself when no worker has started it). On Linux,
//     when the tree is an os.Root's file system given as RootFS, directories
//     and files are opened relative to their parent's descriptor instead of
//     being resolved from the root for every file, which is most of the cost
//     of a search over many small files.
//
//   - What a search holds is bounded: results its workers find ahead of
//     the caller count against Options.MaxHeldBytes, and, with a Budget,
//     against what all searches sharing it may hold. A worker keeps a
//     result only if it fits at once, and otherwise only the fact that the
//     file matched, so that the file is read again in its turn; the
//     emitting goroutine waits for the bytes of what it emits, after taking
//     back what the workers hold ahead, so that it never waits for bytes
//     only it could free.
//
//   - A required literal is extracted from the parsed pattern: a string, or a
//     small set of strings, one of which every match must contain. It is
//     searched for over the whole file with a vectorised byte search on its
//     rarest byte, and the regexp runs only on the lines that contain it. A
//     file without the literal is never regexp-scanned. When the pattern is
//     nothing but such literals the regexp does not run at all.
//
// Lines split on "\n"; the "\r" of a "\r\n" ending and a leading UTF-8 BOM
// are not part of a line's content and are never matched against, as in the
// Read RPC. "^" and "$" anchor at the start and end of each line.
//
// Which files are searched follows ripgrep: hidden files and directories,
// files ignored by .gitignore files (collected while walking, so nested files
// and negations work) and version-control metadata (".git", ".hg", ...) are
// skipped, as are binary files (a NUL byte
// in the first 8 KiB), files that are not valid UTF-8, files larger than a
// limit, and anything that is not a regular file. Symbolic links to files are
// followed when the file system lets them be opened (an os.Root refuses links
// that lead outside it); symbolic links to directories are never followed.
package grep

import (
	"errors"
	"time"
)

// ErrBadPattern is wrapped by the error Search returns for a pattern or glob
// that does not compile; the message carries the parser's explanation.
var ErrBadPattern = errors.New("invalid pattern")

// Defaults applied when the corresponding Options field is zero or negative.
const (
	DefaultMaxMatches   = 100
	DefaultMaxFileBytes = 64 << 20
	// DefaultMaxHeldBytes is enough for every worker to keep a few matching
	// files of ordinary size while the emitting goroutine catches up, which
	// is what keeps the CPUs busy; much more only lets a search whose
	// caller does not take its results sit on more memory.
	DefaultMaxHeldBytes = 2 << 20
)

// Options selects what Search looks for and where.
type Options struct {
	// Pattern is an RE2 regular expression, or a plain string with Literal.
	Pattern string
	// Literal makes Pattern a plain string rather than a regexp.
	Literal bool
	// CaseInsensitive matches with Unicode simple case folding, as (?i).
	CaseInsensitive bool
	// Path is the file or directory to search, slash-separated and relative
	// to the root of the file system; "" or "." is the whole tree. A file
	// named here is searched even if it is hidden, ignored or excluded by a
	// glob (as when a file is given to ripgrep), unless it is binary. A
	// directory named here is walked even if it is hidden or ignored (and
	// then the .gitignore files above it are disregarded); the rules apply
	// to what is inside it as usual.
	Path string
	// Globs, when not empty, restricts the search to files matching at
	// least one of them. Globs use doublestar syntax ("**" crosses
	// directories). A glob without "/" matches the base name anywhere in the
	// tree (like rg -g '*.go'); a glob with "/" matches the path relative to
	// the root of the file system (a leading "/" or "./" is ignored).
	Globs []string
	// ExcludeGlobs skips files, and directories with everything in them,
	// that match any of them. Same syntax as Globs.
	ExcludeGlobs []string
	// Types, when not empty, restricts the search to files of at least one
	// of these types ("go", "ts", "py", ...; see TypeNames), matched by base
	// name. It combines with Globs: a file must pass both. An unknown type
	// is an error wrapping ErrUnknownType.
	Types []string
	// Before and After are the number of context lines to return before and
	// after each matching line.
	Before, After int
	// MaxMatches stops the search after this many matching lines in total
	// (<= 0 means DefaultMaxMatches).
	MaxMatches int
	// MaxFileBytes skips files larger than this (<= 0 means
	// DefaultMaxFileBytes).
	MaxFileBytes int64
	// Hidden includes files and directories whose names start with ".";
	// version-control metadata (".git", ".hg", "CVS", ...: see
	// workspace.IsVCSName) is skipped regardless.
	Hidden bool
	// NoIgnore disregards .gitignore files.
	NoIgnore bool
	// Workers is the number of files searched in parallel (<= 0 means
	// runtime.GOMAXPROCS(0)).
	Workers int
	// MaxHeldBytes bounds the bytes of results the search holds at once (<=
	// 0 means DefaultMaxHeldBytes): found by workers ahead of emit, and
	// with a Budget, emitted and not yet released. Past it, workers keep
	// only the fact that a file matched, and it is read again when its turn
	// comes. A file larger than the bound is still searched and emitted:
	// it is let in when the search holds nothing else.
	MaxHeldBytes int64
	// Budget, if set, is shared with other searches and bounds what they
	// all hold together (MaxHeldBytes is then at most its size). Every
	// File emitted then stays counted in it until its Release is called,
	// so that the caller can keep Files in a queue of its own, bounded by
	// the same budget; the caller must call Release once it is done with
	// each (a File never released keeps its bytes, and the search may wait
	// for them). Without a Budget, Search releases each File when emit
	// returns.
	Budget *Budget
	// SkipFile, if set, is called with the base name of every file found
	// while walking (not of directories, nor of a file named by Path); files
	// for which it reports true are skipped. The server uses it to hide its
	// own temporary files.
	SkipFile func(name string) bool
	// SkipLink, if set, is called with the path of every symbolic link found
	// while walking, before it is followed; links for which it reports true
	// are skipped. The server uses it to skip links into version-control
	// metadata, which the walk itself skips only by name.
	SkipLink func(path string) bool

	// window, for tests, bounds how far workers run ahead of emit (tree.go);
	// 0 is defaultWindow.
	window int
}

// Line is one line of a File's result: a match or context around one.
type Line struct {
	// Number is the 1-based line number.
	Number int
	// Content is the line without its line ending: no "\n", no "\r" of a
	// "\r\n", and no UTF-8 BOM on line 1.
	Content string
	// Match reports whether the line matches; false for a context line.
	Match bool
	// Submatches are the byte ranges of Content that the pattern matches,
	// left to right and not overlapping (as regexp's FindAllIndex finds
	// them), for a matching line. Empty matches are left out, so a line
	// matched only by one (as by "^$") has none.
	Submatches []Span
}

// Span is a byte range [Start, End) of a line's Content.
type Span struct {
	Start, End int
}

// File is one file with at least one matching line.
type File struct {
	// Path is slash-separated and relative to the root of the file system.
	Path string
	// Raw is the whole file exactly as it was read and searched. It is
	// allocated for this File alone and Search never touches it again after
	// emit is called, so emit may keep it (to cache it by version, say)
	// without copying. The same holds for Lines.
	Raw []byte
	// Lines are the matching lines and their context, in ascending order of
	// Number, each line at most once: context of nearby matches is merged.
	Lines []Line

	// hold is what the File counts against its search's bounds.
	hold *hold
}

// Release gives back the bytes the File counts against its search's
// MaxHeldBytes and Budget (see Options.Budget). Calls after the first, and
// on copies of the File, do nothing; the File itself stays usable.
func (f File) Release() { f.hold.release() }

// Summary describes a finished search.
type Summary struct {
	// FilesScanned counts the text files whose content was searched.
	FilesScanned int
	// FilesMatched counts the files passed to emit.
	FilesMatched int
	// Matches counts the matching lines passed to emit.
	Matches int
	// BytesScanned is the total size of the files counted in FilesScanned.
	BytesScanned int64
	// Truncated reports that MaxMatches cut the result short: there is at
	// least one matching line that was not passed to emit. A search whose
	// matches number exactly MaxMatches is not truncated.
	Truncated bool
	// Elapsed is the time from the start of Search until it returned (the
	// time emit took included).
	Elapsed time.Duration
}
