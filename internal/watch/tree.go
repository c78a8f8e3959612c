package watch

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/hashline/hashline/internal/workspace"
)

// Op is what the tree watcher saw happen to a path during one batch; the
// handler re-reads the path to learn what it is now.
type Op uint8

// The ops of a batch; several can be set for one path.
const (
	// OpCreate: the path appeared (created, or renamed into place), or it
	// was found in a directory that appeared.
	OpCreate Op = 1 << iota
	// OpWrite: the file was written to.
	OpWrite
	// OpRemove: the path was removed or renamed away.
	OpRemove
	// OpDirRemoved: the path was a watched directory and was removed or
	// renamed away; the files under it are gone from there too.
	OpDirRemoved
)

// Batch is the paths that changed during one debounce period.
type Batch struct {
	// Paths maps each changed path (slash-separated, relative to the
	// tree's root) to what was seen.
	Paths map[string]Op
	// Overflow says the kernel's queue overflowed: changes were lost and
	// are not in Paths.
	Overflow bool
}

// Defaults of WatchTree.
const (
	DefaultDebounce = 50 * time.Millisecond
	DefaultMaxDelay = 500 * time.Millisecond
)

// TreeOption configures WatchTree.
type TreeOption func(*Tree)

// WithDebounce sets how long the tree must be quiet before a batch is
// handed over, and the longest a change waits under a steady stream of
// events.
func WithDebounce(quiet, maxDelay time.Duration) TreeOption {
	return func(t *Tree) {
		if quiet > 0 {
			t.debounce = quiet
		}
		if maxDelay >= quiet {
			t.maxDelay = maxDelay
		}
	}
}

// WithTreeLogger sets where directories that cannot be watched are logged.
func WithTreeLogger(l *slog.Logger) TreeOption {
	return func(t *Tree) {
		if l != nil {
			t.logger = l
		}
	}
}

// Tree watches a directory and everything under it with fsnotify, and
// hands batches of changed paths to a handler, one batch at a time.
// Directories created later are watched as they appear (and the files
// already in them reported as created); version-control metadata
// (workspace.IsVCSPath) and the workspace's temporary files are skipped;
// symlinked directories are not followed.
type Tree struct {
	root     string
	fw       *fsnotify.Watcher
	handle   func(context.Context, Batch)
	debounce time.Duration
	maxDelay time.Duration
	logger   *slog.Logger

	dirs map[string]struct{} // watched directories (absolute); owned by loop

	cancel    context.CancelFunc
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// WatchTree starts watching root (a directory) and calls handle from one
// goroutine with each batch; while handle runs, new changes gather into
// the next batch. The context handle gets is cancelled by Close. It fails
// if root itself cannot be watched; subdirectories that cannot be (no
// permission, or the system's watch limit) are logged and skipped.
func WatchTree(root string, handle func(context.Context, Batch), opts ...TreeOption) (*Tree, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	t := &Tree{
		root: root, fw: fw, handle: handle,
		debounce: DefaultDebounce, maxDelay: DefaultMaxDelay,
		logger: slog.New(slog.DiscardHandler),
		dirs:   map[string]struct{}{},
		stop:   make(chan struct{}),
	}
	for _, o := range opts {
		o(t)
	}
	if err := fw.Add(root); err != nil {
		fw.Close()
		return nil, err
	}
	t.dirs[root] = struct{}{}
	t.addTree(root, nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	work := make(chan Batch)
	t.wg.Add(2)
	go t.loop(work)
	go func() {
		defer t.wg.Done()
		for b := range work {
			t.handle(ctx, b)
		}
	}()
	return t, nil
}

// Close stops watching and waits for the handler to return.
func (t *Tree) Close() error {
	var err error
	t.closeOnce.Do(func() {
		close(t.stop)
		t.cancel()
		err = t.fw.Close()
		t.wg.Wait()
	})
	return err
}

// rel turns an event's absolute name into a root-relative slash path; ok
// is false for the root itself and for paths to skip.
func (t *Tree) rel(name string) (string, bool) {
	r, ok := strings.CutPrefix(name, t.root+string(filepath.Separator))
	if !ok {
		return "", false
	}
	r = filepath.ToSlash(r)
	if workspace.IsTempName(r) || workspace.IsVCSPath(r) {
		return "", false
	}
	return r, true
}

// addTree watches dir's subdirectories, and records every file found in
// them as created when pending is not nil (a directory that appeared may
// already have files that no event will announce).
func (t *Tree) addTree(dir string, pending map[string]Op) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != dir {
				t.logger.Warn("watch: cannot read directory; changes under it are not reported", "dir", p, "err", err)
			}
			return nil
		}
		if p == dir {
			return nil
		}
		rel, ok := t.rel(p)
		if !ok {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			if pending != nil {
				pending[rel] |= OpCreate
			}
			return nil
		}
		if err := t.fw.Add(p); err != nil {
			t.logger.Warn("watch: cannot watch directory; changes under it are not reported", "dir", p, "err", err)
			return filepath.SkipDir
		}
		t.dirs[p] = struct{}{}
		if pending != nil {
			pending[rel] |= OpCreate
		}
		return nil
	})
}

// dropTree forgets dir and every watched directory under it.
func (t *Tree) dropTree(dir string) {
	for d := range t.dirs {
		if d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) {
			_ = t.fw.Remove(d) // already gone with the directory, usually
			delete(t.dirs, d)
		}
	}
}

// event records ev in pending and reports whether it mattered.
func (t *Tree) event(ev fsnotify.Event, pending map[string]Op) bool {
	rel, ok := t.rel(ev.Name)
	if !ok {
		return false
	}
	var op Op
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		op |= OpRemove
		if _, ok := t.dirs[ev.Name]; ok {
			op |= OpDirRemoved
			t.dropTree(ev.Name)
		}
	}
	if ev.Has(fsnotify.Write) {
		op |= OpWrite
	}
	if ev.Has(fsnotify.Create) {
		op |= OpCreate
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			if _, watched := t.dirs[ev.Name]; !watched {
				if err := t.fw.Add(ev.Name); err != nil {
					t.logger.Warn("watch: cannot watch directory; changes under it are not reported", "dir", ev.Name, "err", err)
				} else {
					t.dirs[ev.Name] = struct{}{}
					t.addTree(ev.Name, pending)
				}
			}
		}
	}
	// A change of mode or times alone leaves the content as it was.
	if op == 0 {
		return false
	}
	pending[rel] |= op
	return true
}

// loop gathers events into batches and offers each to the handler once
// the tree has been quiet for the debounce period (or the oldest change
// has waited maxDelay).
func (t *Tree) loop(work chan<- Batch) {
	defer t.wg.Done()
	defer close(work)
	pending := Batch{Paths: map[string]Op{}}
	var first time.Time // when the oldest pending change arrived
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var out chan<- Batch // work once the pending batch is due, else nil
	arm := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		timer.Reset(min(t.debounce, max(t.maxDelay-now.Sub(first), 0)))
	}
	for {
		select {
		case <-t.stop:
			return
		case ev, ok := <-t.fw.Events:
			if !ok {
				return
			}
			if t.event(ev, pending.Paths) && out == nil {
				arm()
			}
		case err, ok := <-t.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				pending.Overflow = true
				if out == nil {
					arm()
				}
				continue
			}
			t.logger.Warn("watch: file-system watcher error", "err", err)
		case <-timer.C:
			out = work
		case out <- pending:
			pending, first, out = Batch{Paths: map[string]Op{}}, time.Time{}, nil
		}
	}
}
