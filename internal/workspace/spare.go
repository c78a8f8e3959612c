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

// WithSpareFiles makes WriteFile replace existing files through spare
// files made ahead of time, on Linux, where renameat2 can exchange two
// names: the new content is written to a spare (an empty file already
// created and, with fsync on, synced), the spare and the target are
// exchanged in one atomic step, and the directory is synced. Creating a
// file and unlinking the replaced one then happen after the write, in the
// background, instead of during it: on ext4 a durable replace of a small
// file takes about 0.7x the time of a new temp file and a rename. Readers
// see exactly what a rename gives them (the old file or the new one; a
// reader holding the old file keeps it whole), and the guarantees of
// WriteFile are unchanged.
//
// The spares live in a directory named ".hashline-spare.tmp" at the root,
// made on the first replace and removed by Close. It is for long-running
// servers; a process that writes once gains nothing from it. Elsewhere
// than Linux, on a filesystem that cannot exchange names, and when the
// directory cannot be made, writes go the usual way.
func WithSpareFiles(on bool) Option {
	return func(o *options) { o.spares = on }
}
