package server

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
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
func (s *Service) watchHub() *watch.Hub {
	s.watch.once.Do(func() {
		s.watch.hub = watch.NewHub(watch.WithBuffer(s.opts.watchBuffer), watch.WithSnapshots(s.snapshotText))
	})
	return s.watch.hub
}

// snapshotText is the content of version from the snapshot cache, for the
// old side of a change whose content the hub did not keep. These lookups
// count in the cache's hit and miss metrics like a rebase's.
func (s *Service) snapshotText(version string) ([]byte, bool) {
	if doc, ok := s.cache.Get(version); ok {
		return doc.Bytes(), true
	}
	return nil, false
}

// Watch streams change events for a path prefix until the client cancels,
// the server shuts down (see Shutdown), or a token file reload revokes or
// narrows the caller's token (see Authenticator.Replace).
func (s *Service) Watch(req *hashlinev1.WatchRequest, stream hashlinev1.FileService_WatchServer) error {
	return toStatus(s.watchStream(req, stream))
}

func (s *Service) watchStream(req *hashlinev1.WatchRequest, stream hashlinev1.FileService_WatchServer) error {
	prefix, err := s.watchPrefix(req.GetPath())
	if err != nil {
		return err
	}
	sub, err := s.subscribe(prefix)
	if err != nil {
		return err
	}
	defer s.unsubscribe(sub)
	// The response headers say the subscription is live: a client that
	// waits for them (ClientStream.Header) misses no change made after.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	ctx := stream.Context()
	var carried int64 // dropped counts of events this caller may not see
	for {
		select {
		case <-ctx.Done():
			// The cause says why: the client went away, or the server
			// ended the stream (a revoked token).
			return context.Cause(ctx)
		case <-sub.Done():
			return errWatchShutdown
		case <-sub.Ready():
			for {
				ev, ok := sub.Next()
				if !ok {
					break
				}
				ev = visibleMove(ctx, ev)
				if !allowed(ctx, ev.Path) {
					// A token limited to path prefixes sees only those
					// files; a loss counted on a hidden event still counts.
					carried += ev.Dropped
					continue
				}
				ev.Dropped += carried
				carried = 0
				if err := stream.Send(watchResponse(ev)); err != nil {
					return err
				}
			}
		}
	}
}

// watchPrefix checks the requested path like any other (confined to the
// root) and returns the prefix to match events with: the symlink-free path
// of the file or directory, which need not exist yet. Events name files by
// their symlink-free paths too, so watching a symlink to a directory
// reports the changes under its target.
func (s *Service) watchPrefix(p string) (string, error) {
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

// subscribe adds a subscriber, starting the file-system watcher for the
// first one.
func (s *Service) subscribe(prefix string) (*watch.Subscription, error) {
	hub := s.watchHub()
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errWatchShutdown
	}
	// Subscribe before the file-system watcher starts: from then on the
	// hub records the server's own writes, so the watcher can never see one
	// of them first and report it as external.
	sub, err := hub.Subscribe(prefix)
	if err != nil {
		return nil, errWatchShutdown
	}
	if w.subs == 0 {
		tree, err := watch.WatchTree(s.ws.Dir(), s.external,
			watch.WithTreeLogger(s.opts.logger), watch.WithDebounce(s.opts.watchDebounce, 10*s.opts.watchDebounce))
		if err != nil {
			sub.Close()
			hub.Forget()
			return nil, &watchUnavailableError{err: err}
		}
		w.tree = tree
	}
	w.subs++
	return sub, nil
}

// unsubscribe removes a subscriber and stops the file-system watcher after
// the last one.
func (s *Service) unsubscribe(sub *watch.Subscription) {
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
func (s *Service) Shutdown() {
	hub := s.watchHub()
	s.watch.mu.Lock()
	s.watch.closed = true
	s.watch.mu.Unlock()
	hub.Close()
}

// publishEdit reports a successful Edit write; f is the file the edit was
// planned on, text the new content.
func (s *Service) publishEdit(ctx context.Context, f *workspace.File, wr *workspace.WriteResult, text []byte, set string) {
	s.publish(ctx, f.Path, &watch.State{Version: f.Version, Text: f.Text, HasText: true}, wr, text, set)
}

// publishWrite reports a successful Write; cur is the file it replaced,
// nil when there was none or it was not readable as text.
func (s *Service) publishWrite(ctx context.Context, cur *workspace.File, wr *workspace.WriteResult, text []byte, set string) {
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
func (s *Service) publish(ctx context.Context, rel string, old *watch.State, wr *workspace.WriteResult, text []byte, set string) {
	hub := s.watchHub()
	if !hub.Active() {
		return
	}
	hub.Publish(watch.Change{
		Path:      s.canonical(rel),
		Agent:     AgentID(ctx),
		Old:       old,
		New:       watch.State{Version: wr.Version, Text: text, HasText: true},
		ChangeSet: set,
	})
}

// canonical is the symlink-free path events name a file by.
func (s *Service) canonical(rel string) string {
	if target, _, err := s.ws.Resolve(rel); err == nil && target != "." {
		return target
	}
	return rel
}

// external handles a batch of paths the file-system watcher saw change:
// each is re-read under its edit lock and published as an external change
// (the hub drops it if the version is the one the server just wrote).
func (s *Service) external(ctx context.Context, b watch.Batch) {
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

// observe publishes the current state of one path changed outside.
func (s *Service) observe(ctx context.Context, rel string, op watch.Op) {
	unlock, err := s.locks.lock(ctx, s.ws.LockKey(rel))
	if err != nil {
		return
	}
	defer unlock()
	st, ok := s.stateOf(rel)
	if !ok {
		return
	}
	// A file that is there now was created if it only appeared; if it was
	// removed and put back (an editor saving by rename) it was modified. A
	// file that is gone and was seen to appear came and went: no event
	// unless the hub knew it.
	created := op&watch.OpCreate != 0 && (!st.Exists() || op&watch.OpRemove == 0)
	s.watchHub().Publish(watch.Change{Path: rel, External: true, New: st, Created: created})
}

// stateOf reads what a path is now. ok is false for what is not a file
// the server could report on (a directory, a FIFO, a link out of the
// root, an unreadable file).
func (s *Service) stateOf(rel string) (st watch.State, ok bool) {
	f, err := s.ws.ReadFile(rel)
	switch {
	case err == nil:
		return watch.State{Version: f.Version, Text: f.Text, HasText: true}, true
	case errors.Is(err, workspace.ErrNotFound):
		return watch.State{}, true
	case errors.Is(err, workspace.ErrBinary), errors.Is(err, workspace.ErrNotText), errors.Is(err, workspace.ErrTooLarge):
		v, err := s.ws.FileVersion(rel)
		if errors.Is(err, workspace.ErrNotFound) {
			return watch.State{}, true
		}
		return watch.State{Version: v}, err == nil
	}
	return watch.State{}, false
}

var watchKinds = map[watch.Kind]hashlinev1.WatchEventKind{
	watch.Created:  hashlinev1.WatchEventKind_WATCH_EVENT_KIND_CREATED,
	watch.Modified: hashlinev1.WatchEventKind_WATCH_EVENT_KIND_MODIFIED,
	watch.Deleted:  hashlinev1.WatchEventKind_WATCH_EVENT_KIND_DELETED,
	watch.Moved:    hashlinev1.WatchEventKind_WATCH_EVENT_KIND_MOVED,
}

// visibleMove is a move as a caller whose token sees only one of its ends
// may see it: a file that left what it may see was deleted, one that came
// in was created, and the other path is not named.
func visibleMove(ctx context.Context, ev watch.Event) watch.Event {
	if ev.Kind != watch.Moved {
		return ev
	}
	to, from := allowed(ctx, ev.Path), allowed(ctx, ev.From)
	switch {
	case to && !from:
		ev.Kind, ev.From, ev.OldVersion, ev.Changed = watch.Created, "", "", nil
	case from && !to:
		ev.Kind, ev.Path, ev.From, ev.NewVersion, ev.Changed = watch.Deleted, ev.From, "", "", nil
	}
	return ev
}

// publishDelete reports a file deleted through the server (of change set
// set, if any); old is what it was.
func (s *Service) publishDelete(ctx context.Context, rel string, old watch.State, set string) {
	hub := s.watchHub()
	if !hub.Active() {
		return
	}
	hub.Publish(watch.Change{Path: rel, Agent: AgentID(ctx), Old: &old, ChangeSet: set})
}

// publishMove reports a file moved from from to to through the server (of
// change set set, if any); st is the file, unchanged by the move.
func (s *Service) publishMove(ctx context.Context, from, to string, st watch.State, set string) {
	hub := s.watchHub()
	if !hub.Active() {
		return
	}
	hub.Publish(watch.Change{Path: to, From: from, Agent: AgentID(ctx), Old: &st, New: st, ChangeSet: set})
}

func watchResponse(ev watch.Event) *hashlinev1.WatchResponse {
	r := &hashlinev1.WatchResponse{
		Path:       ev.Path,
		Kind:       watchKinds[ev.Kind],
		Agent:      ev.Agent,
		External:   ev.External,
		OldVersion: ev.OldVersion,
		NewVersion: ev.NewVersion,
		Dropped:    ev.Dropped,
		Time:       timestamppb.New(ev.Time),
		FromPath:   ev.From,
		ChangeSet:  ev.ChangeSet,
	}
	if len(ev.Changed) > 0 {
		r.Changed = make([]*hashlinev1.LineRange, len(ev.Changed))
		for i, c := range ev.Changed {
			r.Changed[i] = &hashlinev1.LineRange{
				OldStart: int32(c.OldStart), OldCount: int32(c.OldCount),
				NewStart: int32(c.NewStart), NewCount: int32(c.NewCount),
			}
		}
	}
	return r
}
