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
// A file in the spare directory is kept if a running server holds it (a
// spare of hashline mcp on the same root), or if a file in the tree is the
// same file: on a filesystem without a journal, a crash can leave a
// spare's name on disk after the rename that moved it into the tree, and
// removing that name would free the file the tree still names.
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
	if entries, err := fs.ReadDir(root.FS(), workspace.SpareDir); err == nil {
		for _, e := range entries {
			if fi, ok := stale(e); ok {
				spares = append(spares, candidate{path.Join(workspace.SpareDir, e.Name()), fi})
			}
		}
	}
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			return nil // an unreadable directory: skip it, keep sweeping
		}
		if p == workspace.SpareDir {
			return fs.SkipDir
		}
		if _, ok := stale(d); ok {
			remove(p)
			return nil
		}
		if len(spares) > 0 && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				spares = slices.DeleteFunc(spares, func(c candidate) bool { return os.SameFile(c.fi, fi) })
			}
		}
		return nil
	})
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
