package workspace

// SpareDir is the directory, at the workspace root, in which a workspace
// opened WithSpareFiles keeps empty files ready to become the next version
// of a file it replaces (spare_linux.go). Its name is a temporary file's
// name, so everything that skips those (IsTempName: the API, grep, the
// watcher, the sweep of leftovers) skips the directory and what is in it;
// a .gitignore inside ("*") keeps it out of git status.
const SpareDir = tempPrefix + "spare" + tempSuffix

// spareFiles is how many spare files a workspace keeps ready. One is
// enough for edits one at a time; a few more serve concurrent writes to
// different files. A write that finds none writes a temporary file as
// usual.
const spareFiles = 4

// WithSpareFiles makes WriteFile replace existing files, with fsync on and
// on Linux, through spare files made ahead of time: empty files, created
// and synced in the background in SpareDir at the root, the next one
// shortly after the write that took one (afterWrite). A replace writes
// the new content into a spare, gives it the old file's mode, owner and
// group, syncs it, renames it over the target and syncs the target's
// directory: the temp file's steps, without creating the file during the
// write (on ext4 without a journal, a new file's first fsync also writes
// its directory). On the benchmark machine 4 KiB replaces back to back
// take about 0.9x the time. Readers, watchers and a crash see what they
// see with a temp file: the rename.
//
// A write uses the temp file when no spare is ready (the first replace, or
// more than spareFiles at once); for new files, create-only writes and
// empty content; for files on another device than the root; where a file
// created in the target's directory would differ from one created in the
// spare directory (a setgid group, a default ACL, an SELinux label,
// inherited inode flags); when the target's directory is no longer where
// the path leads; and when a spare is not the file the server made
// (someone removed or replaced it) or the rename fails. The spare files
// are off for good when the directory cannot be made or opened, is not a
// directory only the server's user can write to, or making a spare fails.
// Each spare is locked (flock) while the server holds it, so servers
// sharing a root leave each other's alone (SpareInUse).
//
// Close removes the spares, and the directory when nothing else is left
// in it. For long-running servers; a process that writes once gains
// nothing from it.
func WithSpareFiles(on bool) Option {
	return func(o *options) { o.spares = on }
}
