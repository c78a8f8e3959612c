package workspace

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"sync"
	"syscall"
)

// Deletes, moves and change sets. A change set is made in two halves: its
// new contents are staged (Stage: a synced temp file beside each target),
// then its steps (renames of temps and of moved files, removals) are done
// at once by Commit, which syncs every directory they changed once. The
// caller records the steps durably between the two (the server's intent
// log), so that Redo can finish them after a crash: each step checks the
// disk and acts only if it is not done yet.

// Entry resolves p as Delete and Move name a file or directory: the
// directories on the way are followed through symbolic links inside the
// root, as ReadFile follows them, and the last component is not (a link is
// itself the entry). It returns the cleaned path, the symlink-free path of
// the entry and its Lstat info, nil when nothing is there. The root itself
// is ErrInvalidPath, and so is what Rel refuses (temp files, paths over the
// limits); version-control metadata (as named or as resolved) ErrVCSPath, a
// path through a link out of the root ErrOutsideRoot.
func (w *Workspace) Entry(p string) (rel, target string, fi fs.FileInfo, err error) {
	const op = "resolve"
	if rel, err = w.rel(op, p); err != nil {
		return "", "", nil, err
	}
	if rel == "." {
		return "", "", nil, newErr(op, rel, ErrInvalidPath, "names the workspace root itself, which cannot be deleted or moved; name a file or directory inside it")
	}
	if IsVCSPath(rel) {
		return "", "", nil, vcsError(op, rel, rel, true)
	}
	dir, pfi, err := w.resolve(op, path.Dir(rel), true, false)
	if err != nil {
		return "", "", nil, err
	}
	target = path.Join(dir, path.Base(rel))
	if IsVCSPath(target) {
		return "", "", nil, vcsError(op, rel, target, true)
	}
	if pfi == nil {
		return rel, target, nil, nil // a missing directory on the way
	}
	if !pfi.IsDir() {
		return "", "", nil, &Error{Op: op, Path: rel, Kind: ErrNotFound, Msg: "a parent is a file, not a directory; " + hintRelative}
	}
	fi, err = w.root.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return rel, target, nil, nil
	}
	if err != nil {
		return "", "", nil, osErr(op, rel, "", err)
	}
	return rel, target, fi, nil
}

// Remove deletes the entry at target (as Entry returned it for rel): a file
// or link, or an empty directory (else ErrNotEmpty), and syncs its
// directory. A file the server may not change (MayChange) is
// ErrNotWritable and stays.
func (w *Workspace) Remove(rel, target string) error {
	if err := w.MayChange("delete", rel, target); err != nil {
		return err
	}
	if err := w.remove("delete", rel, target); err != nil {
		return err
	}
	return w.SyncDirs([]string{path.Dir(target)})
}

func (w *Workspace) remove(op, rel, target string) error {
	err := w.root.Remove(target)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return newErr(op, rel, ErrNotEmpty, "is a directory that is not empty; delete (or move) its entries first")
	}
	return osErr(op, rel, "", err)
}

// Rename moves the entry at from to to (both as Entry returned them; rel
// is the path the request named), creating to's missing parent
// directories, and syncs both directories. Without replace, an entry at to
// is ErrExists; with it, a file there is replaced atomically. The server
// holds the locks of both paths, so the check is exact between its own
// requests; against another process it is a check before the rename.
// Neither a file at from nor one it replaces at to may be one the server
// may not change (MayChange): that is ErrNotWritable, and both stay.
func (w *Workspace) Rename(rel, from, to string, replace bool) error {
	const op = "move"
	if !replace {
		if _, err := w.root.Lstat(to); err == nil {
			return newErr(op, to, ErrExists, "a file is already there; move it elsewhere, or set overwrite to replace it")
		}
	}
	if err := w.MayChange(op, rel, from); err != nil {
		return err
	}
	if err := w.MayChange(op, to, to); err != nil {
		return err
	}
	dirs, err := w.rename(op, rel, from, to)
	if err != nil {
		return err
	}
	return w.SyncDirs(dirs)
}

// rename renames from to to, creating to's missing parents, and returns
// the directories to sync to make it durable.
func (w *Workspace) rename(op, rel, from, to string) ([]string, error) {
	created, err := w.mkdirs(op, rel, path.Dir(to))
	if err != nil {
		return nil, err
	}
	if err := w.root.Rename(from, to); err != nil {
		for i := len(created) - 1; i >= 0; i-- {
			_ = w.root.Remove(created[i])
		}
		if fi, lerr := w.root.Lstat(to); lerr == nil && fi.IsDir() {
			return nil, notRegular(op, rel, fi.Mode())
		}
		return nil, osErr(op, rel, "", err)
	}
	dirs := []string{path.Dir(from), path.Dir(to)}
	for _, d := range created {
		dirs = append(dirs, path.Dir(d))
	}
	return dirs, nil
}

// SyncDirs syncs each distinct directory of dirs once (with fsync on),
// several at a time: a change set that touched ten directories waits for
// the slowest sync, not for the sum of them.
func (w *Workspace) SyncDirs(dirs []string) error {
	if !w.opts.fsync || len(dirs) == 0 {
		return nil
	}
	dirs = slices.Compact(slices.Sorted(slices.Values(dirs)))
	if len(dirs) == 1 {
		if err := w.syncDir(dirs[0]); err != nil {
			return syncFailed("sync", dirs[0], dirs[0], err)
		}
		return nil
	}
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxParallelSyncs)
	for i, d := range dirs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := w.syncDir(d); err != nil {
				errs[i] = syncFailed("sync", d, d, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// maxParallelSyncs bounds the fsyncs one change set runs at once.
const maxParallelSyncs = 16

// Staged is a file's new content written to a synced temp file beside it,
// not yet in place (Stage). Its Step puts it in place.
type Staged struct {
	Path    string // the cleaned relative path, as requested
	Target  string // the symlink-free path of the file it replaces or creates
	Temp    string // the temp file holding the new content
	Raw     []byte // the bytes written
	Version string // Version(Raw)
	Created bool   // no file was at Target
	// created are the directories Stage created for it, top-down.
	created []string
}

// Stage is the first half of WriteFile: it checks what WriteFile checks,
// creates missing parent directories and writes the new content to a temp
// file in the target's directory, with the metadata of the file it will
// replace, synced; nothing is visible at p yet. Step renames the temp file
// into place (with Commit); Discard removes it. SyncBefore lists the
// directories to sync before the temp file's name may be relied on.
func (w *Workspace) Stage(p string, text []byte, opts WriteOptions) (*Staged, error) {
	const op = "write"
	rel, target, raw, old, keep, err := w.prepare(op, p, text, opts)
	if err != nil {
		return nil, err
	}
	dir := path.Dir(target)
	created, err := w.mkdirs(op, rel, dir)
	if err != nil {
		w.removeDirs(created)
		return nil, err
	}
	tmp, err := w.writeTemp(op, rel, dir, raw, keep)
	if err != nil {
		w.removeDirs(created)
		return nil, err
	}
	return &Staged{Path: rel, Target: target, Temp: tmp, Raw: raw, Version: Version(raw), Created: old == nil, created: created}, nil
}

// CheckWrite checks a write of text to p as Stage and WriteFile check it
// (the mode against what is there, the size, the encoding, the file's
// permissions), and writes nothing: a change set is refused, and its dry
// run answers, as its commit would.
func (w *Workspace) CheckWrite(p string, text []byte, opts WriteOptions) error {
	_, _, _, _, _, err := w.prepare("write", p, text, opts)
	return err
}

// SyncBefore returns the directories whose sync makes the temp file's
// name, and the directories Stage created, durable.
func (s *Staged) SyncBefore() []string {
	dirs := []string{path.Dir(s.Temp)}
	for _, d := range s.created {
		dirs = append(dirs, path.Dir(d))
	}
	return dirs
}

// Step is the rename that puts the staged content in place. replaces is
// the version of the file it replaces ("" when it creates one), which Redo
// checks before it renames.
func (s *Staged) Step(replaces string) Step {
	return Step{Kind: StepRename, Path: s.Path, From: s.Temp, To: s.Target, New: s.Version, Replaces: replaces}
}

// Discard removes the temp files, and the directories Stage created if
// they are empty, of staged contents that will not be committed. Every
// temp file goes first, then the directories deepest first: contents
// staged in one new directory share it, and it is in the list of the one
// whose Stage made it, which need not be the last to leave it.
func (w *Workspace) Discard(staged ...*Staged) {
	var dirs []string
	for _, s := range staged {
		_ = w.root.Remove(s.Temp)
		dirs = append(dirs, s.created...)
	}
	// A directory sorts before everything in it.
	slices.Sort(dirs)
	w.removeDirs(slices.Compact(dirs))
}

func (w *Workspace) removeDirs(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		_ = w.root.Remove(created[i])
	}
}

// StepKind says what a step does.
type StepKind uint8

// The kinds of step.
const (
	// StepRename renames From to To, replacing what is at To: a staged
	// temp file into place, or a moved file.
	StepRename StepKind = iota + 1
	// StepRemove removes To: a file, or an empty directory.
	StepRemove
)

// Step is one rename or removal of a change set, on symlink-free paths.
type Step struct {
	Kind StepKind
	// Path is the path the request named, for errors.
	Path     string
	From, To string
	// Version is the version of the file the step takes: the file at From
	// (a moved file) or at To (a removed one); "" for a staged temp file,
	// which is the server's own, and for a directory. Redo checks it.
	Version string
	// New is the version a rename puts at To (the staged content's, the
	// moved file's) and Replaces the version of the file it replaces
	// there, "" when To was absent: Redo renames only over what the set
	// replaced, never over a change made since. A record of a build that
	// did not write them has New "".
	New, Replaces string
}

// Commit does steps in order, with no sync between them, then syncs every
// directory they changed, each once. The steps of a change set touch
// distinct paths, none inside another, so their order is free and each
// is independent of the others. Every step is tried even when one fails;
// the first error is returned.
func (w *Workspace) Commit(steps []Step) error {
	var dirs []string
	var first error
	for _, s := range steps {
		var err error
		switch s.Kind {
		case StepRename:
			var d []string
			d, err = w.rename("apply", s.Path, s.From, s.To)
			dirs = append(dirs, d...)
		case StepRemove:
			err = w.remove("apply", s.Path, s.To)
			dirs = append(dirs, path.Dir(s.To))
		default:
			err = newErr("apply", s.Path, ErrInvalidPath, "unknown step kind %d", s.Kind)
		}
		if first == nil {
			first = err
		}
	}
	if err := w.SyncDirs(dirs); first == nil {
		first = err
	}
	return first
}

// RedoOutcome is what Redo found and did.
type RedoOutcome uint8

// The outcomes of Redo.
const (
	// RedoDone: the step was done already.
	RedoDone RedoOutcome = iota + 1
	// RedoDid: Redo did the step.
	RedoDid
	// RedoSkipped: the path the step takes or replaces changed since the
	// set was planned; the step was not done, so as not to overwrite that
	// change.
	RedoSkipped
	// RedoLost: a staged content is gone (its temp file was removed) and
	// the target does not hold it: the set cannot be finished.
	RedoLost
)

// Redo does a step of a committed change set again (after a crash, or
// after Commit failed), unless it is done already, and makes it durable.
// It never overwrites a change made since the set was planned: a rename
// (staged content or move) is done only while To still holds what the set
// replaces (Replaces, or nothing), and only while a moved file still has
// its Version; a removal only while the path has the version removed (a
// directory: only while it is an empty directory). why says why a step was
// skipped or lost. A rename is done when To has New (a move: unless its
// source still has the version moved); a move whose source is gone is done. A record of an older build (New "") is redone as that
// build did: a staged rename while its temp file is there.
func (w *Workspace) Redo(s Step) (out RedoOutcome, why string, err error) {
	switch s.Kind {
	case StepRename:
		return w.redoRename(s)
	case StepRemove:
		fi, err := w.root.Lstat(s.To)
		if errors.Is(err, fs.ErrNotExist) {
			return RedoDone, "", nil
		}
		if err != nil {
			return 0, "", osErr("redo", s.Path, s.To, err)
		}
		switch {
		case s.Version == "" && !fi.IsDir():
			return RedoSkipped, s.To + " is no longer a directory (an entry was put there since)", nil
		case s.Version != "" && !fi.Mode().IsRegular():
			return RedoSkipped, s.To + " is no longer a regular file", nil
		case s.Version != "":
			if v, err := w.FileVersion(s.To); err != nil || v != s.Version {
				return RedoSkipped, s.To + " has another version than the one deleted", nil
			}
		}
		if err := w.remove("redo", s.Path, s.To); err != nil {
			if errors.Is(err, ErrNotEmpty) {
				return RedoSkipped, s.To + " is a directory that is no longer empty", nil
			}
			return 0, "", err
		}
		return RedoDid, "", w.SyncDirs([]string{path.Dir(s.To)})
	}
	return 0, "", newErr("redo", s.Path, ErrInvalidPath, "unknown step kind %d", s.Kind)
}

func (w *Workspace) redoRename(s Step) (RedoOutcome, string, error) {
	fi, err := w.root.Lstat(s.From)
	fromGone := errors.Is(err, fs.ErrNotExist)
	if err != nil && !fromGone {
		return 0, "", osErr("redo", s.Path, s.From, err)
	}
	if s.New == "" { // a record of an older build
		if fromGone {
			return RedoDone, "", nil
		}
		if s.Version != "" && fi.Mode().IsRegular() {
			if v, err := w.FileVersion(s.From); err != nil || v != s.Version {
				return RedoSkipped, s.From + " has another version than the one moved", nil
			}
		}
		return w.renameNow(s)
	}
	cur, present, err := w.versionAt(s.To)
	if err != nil {
		return 0, "", err
	}
	// A move onto a file that already held the content it moves finds To
	// at New before its rename: while the source still has the version
	// moved, the move is not done.
	movePending := false
	if present && cur == s.New && !fromGone && s.Version != "" && fi.Mode().IsRegular() {
		v, err := w.FileVersion(s.From)
		movePending = err == nil && v == s.Version
	}
	if present && cur == s.New && !movePending {
		if !fromGone && s.Version == "" {
			// The content is in place; its temp file is a leftover copy.
			_ = w.root.Remove(s.From)
		}
		return RedoDone, "", nil
	}
	if fromGone {
		if s.Version != "" {
			// A moved file whose source is gone was moved; it may have
			// been changed at its new path since.
			return RedoDone, "", nil
		}
		return RedoLost, "the staged content for " + s.To + " is gone (its temp file " + s.From + " was removed) and " + s.To + " does not hold it", nil
	}
	if s.Version != "" {
		if !fi.Mode().IsRegular() {
			return RedoSkipped, s.From + " is no longer a regular file", nil
		}
		if v, err := w.FileVersion(s.From); err != nil || v != s.Version {
			return RedoSkipped, s.From + " has another version than the one moved", nil
		}
	}
	switch {
	case present && s.Replaces == "":
		return RedoSkipped, s.To + " was created since the set was planned", nil
	case !present && s.Replaces != "":
		return RedoSkipped, s.To + " was removed since the set was planned", nil
	case present && cur != s.Replaces:
		return RedoSkipped, s.To + " was changed since the set was planned", nil
	}
	return w.renameNow(s)
}

func (w *Workspace) renameNow(s Step) (RedoOutcome, string, error) {
	dirs, err := w.rename("redo", s.Path, s.From, s.To)
	if err != nil {
		return 0, "", err
	}
	return RedoDid, "", w.SyncDirs(dirs)
}

// versionAt is the version of the regular file at the symlink-free path
// p; present is false when nothing is there. Anything but a regular file
// has version "-", which no step records.
func (w *Workspace) versionAt(p string) (v string, present bool, err error) {
	fi, err := w.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, osErr("redo", p, "", err)
	}
	if !fi.Mode().IsRegular() {
		return "-", true, nil
	}
	if v, err = w.FileVersion(p); err != nil {
		return "", false, err
	}
	return v, true, nil
}
