package engine

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/hashline/hashline/internal/watch"
	"github.com/hashline/hashline/internal/workspace"
)

// watchState is the Service's Watch machinery: the hub that fans events
// out, and the file-system watcher for changes made outside the server.
//
// The file-system watcher runs only while at least one Watch stream is
// open. Without subscribers nobody is told about external changes, so
// watching would only cost inotify watches (one per directory, a limited
// system resource) and CPU on busy trees; and the server's own edits cost
// one atomic load to publish. The price is that what the hub remembers of
// files is forgotten when the last stream ends (changes may then go unseen),
// so the first external change of a file after a stream opens has no old
// version and no ranges.
type watchState struct {
	once sync.Once
	hub  *watch.Hub

	mu     sync.Mutex // guards the fields below; never held while publishing
	subs   int
	tree   *watch.Tree
	closed bool
}

// watchHub returns the service's hub, creating it on first use.
func (s *Engine) watchHub() *watch.Hub {
	s.watch.once.Do(func() {
		s.watch.hub = watch.NewHub(watch.WithBuffer(s.opts.watchBuffer), watch.WithSnapshots(s.snapshotText))
	})
	return s.watch.hub
}

// snapshotText is the content of version from the snapshot cache, for the
// old side of a change whose content the hub did not keep. These lookups
// count in the cache's hit and miss metrics like a rebase's.
func (s *Engine) snapshotText(version string) ([]byte, bool) {
	if doc, ok := s.cache.Get(version); ok {
		return doc.Bytes(), true
	}
	return nil, false
}

// WatchPrefix checks the requested path like any other (confined to the
// root) and returns the prefix to match events with: the symlink-free path
// of the file or directory, which need not exist yet. Events name files by
// their symlink-free paths too, so watching a symlink to a directory
// reports the changes under its target.
func (s *Engine) WatchPrefix(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	rel, err := s.ws.Rel(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", nil
	}
	target, _, err := s.ws.Resolve(rel)
	if err != nil {
		return "", err
	}
	if target == "." {
		return "", nil
	}
	return target, nil
}

// Subscribe adds a subscriber, starting the file-system watcher for the
// first one.
func (s *Engine) Subscribe(prefix string) (*watch.Subscription, error) {
	hub := s.watchHub()
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrShuttingDown
	}
	// Subscribe before the file-system watcher starts: from then on the
	// hub records the server's own writes, so the watcher can never see one
	// of them first and report it as external.
	sub, err := hub.Subscribe(prefix)
	if err != nil {
		return nil, ErrShuttingDown
	}
	if w.subs == 0 {
		tree, err := watch.WatchTree(s.ws.Dir(), s.external,
			watch.WithTreeLogger(s.opts.logger), watch.WithDebounce(s.opts.watchDebounce, 10*s.opts.watchDebounce))
		if err != nil {
			sub.Close()
			hub.Forget()
			return nil, &WatchUnavailableError{Err: err}
		}
		w.tree = tree
	}
	w.subs++
	return sub, nil
}

// Unsubscribe removes a subscriber and stops the file-system watcher after
// the last one.
func (s *Engine) Unsubscribe(sub *watch.Subscription) {
	sub.Close()
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs--; w.subs == 0 {
		w.stopTree(w.hub)
	}
}

// stopTree stops the file-system watcher and makes the hub forget what it
// knew: from now on changes go unseen. Called with mu held.
func (w *watchState) stopTree(hub *watch.Hub) {
	if w.tree == nil {
		return
	}
	_ = w.tree.Close()
	w.tree = nil
	hub.Forget()
}

// Shutdown ends every open Watch stream (with UNAVAILABLE, reason
// SHUTTING_DOWN, so clients reconnect to the next server) and refuses new
// ones. grpc.Server.GracefulStop waits for every handler, and a Watch
// stream never ends by itself: call Shutdown first. Unary calls in flight
// are not affected.
func (s *Engine) Shutdown() {
	hub := s.watchHub()
	s.watch.mu.Lock()
	s.watch.closed = true
	s.watch.mu.Unlock()
	hub.Close()
}

// publishEdit reports a successful Edit write; f is the file the edit was
// planned on, text the new content.
func (s *Engine) publishEdit(ctx context.Context, f *workspace.File, wr *workspace.WriteResult, text []byte, set string) {
	s.publish(ctx, f.Path, &watch.State{Version: f.Version, Text: f.Text, HasText: true}, wr, text, set)
}

// publishWrite reports a successful Write; cur is the file it replaced,
// nil when there was none or it was not readable as text.
func (s *Engine) publishWrite(ctx context.Context, cur *workspace.File, wr *workspace.WriteResult, text []byte, set string) {
	var old *watch.State
	switch {
	case cur != nil:
		old = &watch.State{Version: cur.Version, Text: cur.Text, HasText: true}
	case wr.Created:
		old = &watch.State{}
	}
	s.publish(ctx, wr.Path, old, wr, text, set)
}

// publish must run under the path's edit lock, right after the write, so
// that the file-system watcher (which takes the same lock) sees the new
// version already recorded and does not report the write as external.
func (s *Engine) publish(ctx context.Context, rel string, old *watch.State, wr *workspace.WriteResult, text []byte, set string) {
	hub := s.watchHub()
	if !hub.Active() {
		return
	}
	hub.Publish(watch.Change{
		Path:      s.canonical(rel),
		Agent:     Agent(ctx),
		Old:       old,
		New:       watch.State{Version: wr.Version, Text: text, HasText: true},
		ChangeSet: set,
		ChangeID:  changeID(ctx),
	})
}

// canonical is the symlink-free path events name a file by.
func (s *Engine) canonical(rel string) string {
	if target, _, err := s.ws.Resolve(rel); err == nil && target != "." {
		return target
	}
	return rel
}

// external handles a batch of paths the file-system watcher saw change:
// each is re-read under its edit lock and published as an external change
// (the hub drops it if the version is the one the server just wrote).
func (s *Engine) external(ctx context.Context, b watch.Batch) {
	hub := s.watchHub()
	if b.Overflow {
		hub.Lost()
		s.opts.logger.Warn("watch: the file-system event queue overflowed; subscribers were told events were dropped")
	}
	for _, p := range slices.Sorted(maps.Keys(b.Paths)) {
		op := b.Paths[p]
		if op&watch.OpDirRemoved != 0 {
			for _, f := range hub.KnownUnder(p) {
				if f != p {
					s.observe(ctx, f, watch.OpRemove)
				}
			}
			if op&watch.OpCreate == 0 {
				continue // the directory itself is no file to report
			}
		}
		s.observe(ctx, p, op)
		if ctx.Err() != nil {
			return
		}
	}
}

// observe publishes the current state of one path changed outside, and
// records it in the history (noticeObserved).
func (s *Engine) observe(ctx context.Context, rel string, op watch.Op) {
	unlock, err := s.locks.lock(ctx, s.ws.LockKey(rel))
	if err != nil {
		return
	}
	defer unlock()
	st, exact, ok := s.stateOf(rel)
	if !ok {
		return
	}
	// A file that is there now was created if it only appeared; if it was
	// removed and put back (an editor saving by rename) it was modified. A
	// file that is gone and was seen to appear came and went: no event
	// unless the hub knew it.
	created := op&watch.OpCreate != 0 && (!st.Exists() || op&watch.OpRemove == 0)
	id := s.noticeObserved(ctx, rel, s.ws.LockKey(rel), st, created, exact)
	s.watchHub().Publish(watch.Change{Path: rel, External: true, New: st, Created: created, ChangeID: id})
}

// stateOf reads what a path is now; exact says its text is its bytes
// (UTF-8, see exactText). ok is false for what is not a file the server
// could report on (a directory, a FIFO, a link out of the root, an
// unreadable file).
func (s *Engine) stateOf(rel string) (st watch.State, exact, ok bool) {
	f, err := s.ws.ReadFile(rel)
	switch {
	case err == nil:
		return watch.State{Version: f.Version, Text: f.Text, HasText: true}, exactText(f.Encoding), true
	case errors.Is(err, workspace.ErrNotFound):
		return watch.State{}, false, true
	case errors.Is(err, workspace.ErrBinary), errors.Is(err, workspace.ErrNotText), errors.Is(err, workspace.ErrTooLarge):
		v, err := s.ws.FileVersion(rel)
		if errors.Is(err, workspace.ErrNotFound) {
			return watch.State{}, false, true
		}
		return watch.State{Version: v}, false, err == nil
	}
	return watch.State{}, false, false
}

// publishDelete reports a file deleted through the server (of change set
// set, if any); old is what it was.
func (s *Engine) publishDelete(ctx context.Context, rel string, old watch.State, set string) {
	hub := s.watchHub()
	if !hub.Active() {
		return
	}
	hub.Publish(watch.Change{Path: rel, Agent: Agent(ctx), Old: &old, ChangeSet: set, ChangeID: changeID(ctx)})
}

// publishMove reports a file moved from from to to through the server (of
// change set set, if any); st is the file, unchanged by the move.
func (s *Engine) publishMove(ctx context.Context, from, to string, st watch.State, set string) {
	hub := s.watchHub()
	if !hub.Active() {
		return
	}
	hub.Publish(watch.Change{Path: to, From: from, Agent: Agent(ctx), Old: &st, New: st, ChangeSet: set, ChangeID: changeID(ctx)})
}

// WatchState reports how many Watch streams are subscribed and whether the
// file-system watcher runs, so that a test can check that ending the
// streams stops everything.
func (s *Engine) WatchState() (subscribers int, watching bool) {
	s.watch.mu.Lock()
	defer s.watch.mu.Unlock()
	return s.watch.subs, s.watch.tree != nil
}
