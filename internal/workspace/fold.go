package workspace

import (
	"runtime"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// FoldCase maps every spelling of a name that a case- and
// normalization-insensitive file system (APFS and HFS+ on macOS, NTFS on
// Windows) takes for one name to one string: the name in Unicode
// normalization form C, each letter replaced by the smallest letter of its
// simple case-folding orbit ("Straße" and "STRASSE" stay two names, as
// they are on those file systems; "É" spelled as one code point or as "E"
// and a combining accent becomes one). It folds more than NTFS does (NTFS
// keeps normalization forms apart): two names folded to one are only
// serialised, or refused in one change set, as though they were one file.
func FoldCase(name string) string {
	name = norm.NFC.String(name)
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, name)
}

// defaultNameFold is the fold rule of the file systems workspaces on this
// platform usually live on: FoldCase on macOS and Windows, whose default
// file systems ignore case and (macOS) normalization, and none elsewhere.
func defaultNameFold() func(string) string {
	switch runtime.GOOS {
	case "darwin", "ios", "windows":
		return FoldCase
	}
	return nil
}

// DefaultNameFold is the fold rule a workspace on this platform gets
// unless WithNameFold says otherwise (nil: names compare byte for byte).
func DefaultNameFold() func(string) string { return defaultNameFold() }

// WithNameFold sets how the workspace's file system compares names: fold
// maps every spelling of one name to one string (FoldCase for a case- and
// normalization-insensitive file system), nil compares names byte for
// byte. LockKey folds its keys with it, so that two spellings of one file
// get one lock, and are seen to conflict in one change set. The default is
// FoldCase on macOS and Windows and nil elsewhere; pass FoldCase for a
// case-insensitive file system mounted on Linux (a casefolded ext4
// directory, vfat, a macOS volume shared in).
func WithNameFold(fold func(name string) string) Option {
	return func(o *options) { o.fold, o.foldSet = fold, true }
}
