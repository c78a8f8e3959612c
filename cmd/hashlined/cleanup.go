package main

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"slices"
	"time"

	"github.com/hashline/hashline/internal/workspace"
)

// sweepTemp removes the temporary files (workspace.IsTempName) that a
// crash or kill -9 left in the middle of a write, and what a killed server
// left in the spare files' directory (workspace.SpareDir). It walks the
// tree in the background while the server already serves: until it is
// done the leftovers are harmless, because Grep skips those names and every
// other call refuses them. Only files older than started are removed, so
// the temp files of writes this server is doing right now are never
// touched. Symlinks are not followed and nothing outside the root is
// looked at.
//
// A file in a spare directory (the root's, or a nested workspace root's)
// is kept if a running server holds it (a spare of hashline mcp on the
// same root), or if a file in the tree is the same file: on a filesystem
// without a journal, a crash can leave a spare's name on disk after the
// rename that moved it into the tree, and removing that name would free
// the file the tree still names.
func sweepTemp(ctx context.Context, root *os.Root, started time.Time, logger *slog.Logger) {
	removed := 0
	remove := func(p string) {
		if err := root.Remove(p); err != nil {
			logger.Warn("could not remove a stale temporary file", "path", p, "err", err)
			return
		}
		removed++
	}
	stale := func(d fs.DirEntry) (fs.FileInfo, bool) {
		if !d.Type().IsRegular() || !workspace.IsTempName(d.Name()) {
			return nil, false
		}
		fi, err := d.Info()
		return fi, err == nil && fi.ModTime().Before(started)
	}
	type candidate struct {
		path string
		fi   fs.FileInfo
	}
	var spares []candidate
	// collect adds the stale files of the spare directory dir: the root's,
	// or a nested workspace root's (another server may serve a
	// subdirectory).
	collect := func(dir string) {
		entries, err := fs.ReadDir(root.FS(), dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if fi, ok := stale(e); ok {
				spares = append(spares, candidate{path.Join(dir, e.Name()), fi})
			}
		}
	}
	// keep drops the candidates that the regular file d also names.
	keep := func(d fs.DirEntry) {
		if len(spares) > 0 && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				spares = slices.DeleteFunc(spares, func(c candidate) bool { return os.SameFile(c.fi, fi) })
			}
		}
	}
	collect(workspace.SpareDir)
	nested := false
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			return nil // an unreadable directory: skip it, keep sweeping
		}
		if d.IsDir() && d.Name() == workspace.SpareDir {
			if p != workspace.SpareDir {
				collect(p)
				nested = true
			}
			return fs.SkipDir
		}
		if _, ok := stale(d); ok {
			remove(p)
			return nil
		}
		keep(d)
		return nil
	})
	if err == nil && nested && len(spares) > 0 {
		// A nested spare directory's candidates were found during the
		// walk, after files it may share: compare them with the whole tree.
		err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			switch {
			case ctx.Err() != nil || len(spares) == 0:
				return fs.SkipAll
			case err != nil:
				return nil
			case d.IsDir() && d.Name() == workspace.SpareDir:
				return fs.SkipDir
			}
			keep(d)
			return nil
		})
	}
	if err != nil {
		logger.Warn("sweeping stale temporary files failed", "err", err)
	}
	if ctx.Err() == nil {
		for _, c := range spares {
			if !workspace.SpareInUse(root, c.path) { // another server's
				remove(c.path)
			}
		}
	}
	if removed > 0 {
		logger.Info("removed temporary files left by an interrupted write", "files", removed)
	}
}
