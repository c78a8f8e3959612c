// Package server implements the hashline.v1.FileService gRPC service over a
// workspace: it resolves paths, loads files, hands edit batches to the core
// planner, writes results and turns every domain error into a gRPC status in
// one place (errors.go). It knows nothing of line arithmetic.
package engine

import (
	"context"
	"log/slog"
	"sync"

	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// Engine is the whole application over one workspace. It is safe for concurrent use:
// edits and writes to one path are serialised, everything else runs in
// parallel.
type Engine struct {
	ws    *workspace.Workspace
	opts  options
	locks pathLocks
	tree  treeLock        // taken before locks: shared by writes, exclusive by directory removals (treelock.go)
	watch watchState      // Watch streams and the file-system watcher (watch.go)
	cache *versions.Cache // snapshots by version, for rebases (versions.go)
	views *versions.Views // the versions, and lines, each agent last saw of each file (seen.go)
	// latest is the version the server last read or wrote of each file,
	// so a file read again can be recognised by comparing its bytes with
	// that cached snapshot (load, versions.go).
	latest *versions.Latest
	// requests remembers the outcomes of Edit and Write calls by request_id
	// (idempotency.go); nil when turned off.
	requests *requestTable
	// noChanges remembers the no-op edits each agent was refused (noop.go).
	noChanges noChanges
	// grepBudget bounds what all Greps hold at once (grep.go).
	grepBudget *grep.Budget
	// records are the intent records of answered change sets still on
	// disk, which a change to their paths settles first (intents.go).
	records openRecords
	// memory bounds what Read, Edit and Apply calls hold at once
	// (memory.go).
	memory *memoryBudget
	// opened is what Open started and Close stops; nil for an engine
	// of New (open.go).
	opened *opened
}

// New returns an Engine over ws.
func New(ws *workspace.Workspace, opts ...Option) *Engine {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	s := &Engine{ws: ws, opts: o, views: versions.NewViews(o.viewEntries, o.viewBytes),
		latest: versions.NewLatest(o.viewEntries, o.viewBytes), grepBudget: grep.NewBudget(o.grepBytes),
		memory: newMemoryBudget(o.memoryBudget, o.largeCalls)}
	s.tree.waiting = o.treeWait
	// Only a version some agent was shown can be an edit's remembered
	// base; the others a client may still name as baseVersion are refused
	// with fresh tags when memory has let them go.
	s.cache = versions.NewCache(o.cacheBytes, versions.WithDisk(o.disk), versions.WithSpillOnly(func(v string) bool {
		return s.views.Holds(v) || s.latest.Holds(v)
	}))
	if o.requestIDTTL > 0 {
		s.requests = newRequestTable(o.requestIDTTL, o.requestIDBytes, o.now)
		s.requests.waiting = o.requestWaiting
	}
	return s
}

// resolve cleans a request path to the workspace-relative path and the key
// of the file it reaches (viewKey), which names its lock, view and latest
// version.
func (s *Engine) resolve(path string) (rel, key string, err error) {
	if rel, err = s.ws.Rel(path); err != nil {
		return "", "", err
	}
	return rel, s.viewKey(rel), nil
}

// pathLocks serialises edits and writes per path without a global lock.
// Entries are reference counted so the map does not grow with every path
// ever touched.
type pathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	mu   sync.Mutex
	refs int
}

// lock blocks until path is free or ctx ends, and returns the unlock func.
func (p *pathLocks) lock(ctx context.Context, path string) (func(), error) {
	p.mu.Lock()
	if p.m == nil {
		p.m = make(map[string]*pathLock)
	}
	l := p.m[path]
	if l == nil {
		l = &pathLock{}
		p.m[path] = l
	}
	l.refs++
	p.mu.Unlock()

	release := func() {
		p.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(p.m, path)
		}
		p.mu.Unlock()
	}
	if !l.mu.TryLock() {
		acquired := make(chan struct{})
		go func() {
			l.mu.Lock()
			close(acquired)
		}()
		select {
		case <-acquired:
		case <-ctx.Done():
			// Let the goroutine take the lock and hand it straight back.
			go func() {
				<-acquired
				l.mu.Unlock()
				release()
			}()
			return nil, ctx.Err()
		}
	}
	return func() {
		l.mu.Unlock()
		release()
	}, nil
}

// Workspace is the workspace the engine edits.
func (s *Engine) Workspace() *workspace.Workspace { return s.ws }

// Logger is the engine's logger (WithLogger).
func (s *Engine) Logger() *slog.Logger { return s.opts.logger }
