package main

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/hashline/hashline/internal/workspace"
)

// sweepTemp removes the temporary files (workspace.IsTempName) that a
// crash or kill -9 left in the middle of a write. It walks the tree in the
// background while the server already serves: until it is done the
// leftovers are harmless, because Grep skips those names and every other
// call refuses them. Only files older than started are removed, so the
// temp files of writes this server is doing right now are never touched.
// Symlinks are not followed and nothing outside the root is looked at.
func sweepTemp(ctx context.Context, root *os.Root, started time.Time, logger *slog.Logger) {
	removed := 0
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			return nil // an unreadable directory: skip it, keep sweeping
		}
		if !d.Type().IsRegular() || !workspace.IsTempName(d.Name()) {
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.ModTime().Before(started) {
			return nil
		}
		if err := root.Remove(p); err != nil {
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
}
