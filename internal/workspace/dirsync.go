package workspace

import "sync"

// Group commit of directory syncs. A rename is durable once its directory
// has been synced, and one sync of a directory makes durable every rename
// in it that was done before the sync started. Writers that renamed into
// the same directory while a sync of it was running therefore share the
// next one instead of each running its own.
//
// The rule each caller relies on: sync returns nil only after a sync of
// dir that started after sync was called, and so after everything the
// caller did to dir before it (its rename), has finished without error. A
// sync already running when a caller arrives may have started before its
// rename, so the caller never joins it: it joins the round that starts
// when the running one ends. The first caller of a round leads it: it
// waits for the running sync, closes the round to newcomers and syncs;
// the others wait for its result, an error included. No goroutine is left
// behind: every sync runs on a caller's own goroutine.
//
// Crash ordering is the same as with one sync per rename: no caller is
// told its write is durable before a sync covering its rename has
// finished, and a crash before that leaves the old file or the new one,
// as the temp file was synced before the rename. What is shared is only
// the directory's sync, never a file's.

// dirSyncer groups the syncs of each directory. Its zero value is ready.
type dirSyncer struct {
	mu     sync.Mutex
	groups map[string]*dirGroup // by directory; an entry lives while it has callers
}

// dirGroup is one directory's state.
type dirGroup struct {
	running sync.Mutex // held by the leader whose sync is running
	pending *syncRound // the round newcomers join; nil when none is open
	callers int        // callers inside sync for this directory
}

// syncRound is one sync shared by the callers that joined it.
type syncRound struct {
	done chan struct{} // closed when err is set
	err  error
}

// sync syncs dir with fsync, grouped with the concurrent calls for dir as
// the comment at the top of the file says.
func (s *dirSyncer) sync(dir string, fsync func(string) error) error {
	s.mu.Lock()
	if s.groups == nil {
		s.groups = make(map[string]*dirGroup)
	}
	g := s.groups[dir]
	if g == nil {
		g = &dirGroup{}
		s.groups[dir] = g
	}
	g.callers++
	r := g.pending
	lead := r == nil
	if lead {
		r = &syncRound{done: make(chan struct{})}
		g.pending = r
	}
	s.mu.Unlock()

	if lead {
		g.running.Lock()
		// From here on the round is closed: whoever arrives now may have
		// renamed after the sync below starts, so it opens the next round.
		s.mu.Lock()
		g.pending = nil
		s.mu.Unlock()
		r.err = fsync(dir)
		close(r.done)
		g.running.Unlock()
	} else {
		<-r.done
	}

	s.mu.Lock()
	if g.callers--; g.callers == 0 {
		delete(s.groups, dir)
	}
	s.mu.Unlock()
	return r.err
}
