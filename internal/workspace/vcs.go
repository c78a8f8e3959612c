package workspace

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// vcsDirs are the directories in which version-control systems keep their
// metadata: git, Mercurial, Subversion, Bazaar, Darcs, Jujutsu, Pijul and
// CVS. What is in them decides what the operator's tools run: a git config
// can name an fsmonitor or pager command that `git status` runs, a hook is
// a program git runs on commit, an hgrc or a Darcs prefs file names hooks
// too, and a CVS/Root can name the command CVS connects with. So no agent
// may write there, and by default none may read there either (a config can
// hold credentials). A git worktree's or submodule's ".git" is a file
// naming the real directory; it is refused the same way.
var vcsDirs = []string{".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".pijul", "CVS"}

// VCSDirs returns the names of the version-control metadata directories
// that IsVCSName recognises.
func VCSDirs() []string { return append([]string(nil), vcsDirs...) }

// IsVCSName reports whether name, one path component, names version-control
// metadata (see VCSDirs). The comparison is as wide as the file systems a
// workspace may live on make it, like git's own check of the names it
// checks out: without regard to case (case-insensitive file systems),
// with trailing dots and spaces dropped (Windows ignores them), with the
// code points HFS+ ignores removed, and the NTFS short name of a name that
// starts with a dot ("GIT~1" for ".git"). A name refused on a file system
// where it is not the same directory is only a name nobody uses.
func IsVCSName(name string) bool {
	name = strings.TrimRight(name, ". ")
	if name == "" {
		return false
	}
	if !isASCII(name) {
		name = dropHFSIgnorable(name)
	}
	for _, d := range vcsDirs {
		if strings.EqualFold(name, d) {
			return true
		}
		if short, ok := strings.CutPrefix(d, "."); ok && isShortName(name, short) {
			return true
		}
	}
	return false
}

// IsVCSPath reports whether any component of the slash-separated path rel
// is version-control metadata (IsVCSName).
func IsVCSPath(rel string) bool { return vcsComponent(rel) != "" }

// isShortName reports whether name is an NTFS 8.3 short name of a long name
// starting with "." and then base: base (at most six characters here),
// "~" and a digit or more.
func isShortName(name, base string) bool {
	if len(name) < len(base)+2 || !strings.EqualFold(name[:len(base)], base) || name[len(base)] != '~' {
		return false
	}
	for _, c := range []byte(name[len(base)+1:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// dropHFSIgnorable removes the code points HFS+ ignores when it compares
// names (the list git uses for the same check, from Apple's TN1150).
func dropHFSIgnorable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
			return -1
		}
		return r
	}, s)
}

// vcsComponent returns the first component of rel that IsVCSName
// recognises, or "".
func vcsComponent(rel string) string {
	for part := range strings.SplitSeq(rel, "/") {
		if IsVCSName(part) {
			return part
		}
	}
	return ""
}

// vcsError refuses rel (as requested) because what it names, at target, is
// version-control metadata. write says whether the caller would change it.
func vcsError(op, rel, target string, write bool) error {
	what := "is in version-control metadata (" + strconv.Quote(vcsComponent(target)) + ")"
	if target != rel {
		what = "leads to " + strconv.Quote(target) + ", in version-control metadata (" + strconv.Quote(vcsComponent(target)) + ")"
	}
	if write {
		return newErr(op, rel, ErrVCSPath, "%s; hashline never writes there (a config or hook written there runs commands as whoever runs git next). Change the working tree's files instead", what)
	}
	return newErr(op, rel, ErrVCSPath, "%s, which this server does not read (its operator may allow it: hashlined --allow-vcs-read); read the working tree's files instead", what)
}
