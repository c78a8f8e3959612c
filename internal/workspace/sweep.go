package workspace

import (
	"context"
	"io/fs"
	"log/slog"
	"time"
)

// SweepTemp removes the temporary files (IsTempName) that a crash or
// kill -9 left in the middle of a write, and returns how many it removed.
// Only regular files last modified before before are removed, so a server
// passes the time it started at: the temp files of writes it is doing
// meanwhile are never touched. Symlinks are not followed and nothing outside
// the root is looked at. Failures are logged to logger and do not stop the
// sweep; cancelling ctx does.
//
// A server can sweep in the background while it already serves: until the
// sweep is done the leftovers are harmless, because the API refuses their
// names and walkers skip them.
func (w *Workspace) SweepTemp(ctx context.Context, before time.Time, logger *slog.Logger) int {
	removed := 0
	err := fs.WalkDir(w.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			return nil // an unreadable directory: skip it, keep sweeping
		}
		if !d.Type().IsRegular() || !IsTempName(d.Name()) {
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.ModTime().Before(before) {
			return nil
		}
		if err := w.root.Remove(p); err != nil {
			logger.Warn("could not remove a stale temporary file", "path", p, "err", err)
			return nil
		}
		removed++
		return nil
	})
	if err != nil {
		logger.Warn("sweeping stale temporary files failed", "err", err)
	}
	if removed > 0 {
		logger.Info("removed temporary files left by an interrupted write", "files", removed)
	}
	return removed
}
