package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// A change set's intent record must not outlive what the server knows of
// it. Recover redoes a recorded step whenever the disk looks as it did
// before the set: it cannot tell a set that was interrupted from one whose
// steps were all done and then undone by later changes (a deleted file
// written again with its old content, a moved file moved back). So while a
// record the server answered for is still on disk (its removal failed, or
// a step of it failed twice), the server keeps it here, and every later
// change to a path it names first settles it: a record whose steps are all
// done is removed; a record with steps left has them redone (as Recover
// would, and never over a change made since) and is then removed. A
// change whose record cannot be settled is refused, so that no change a
// restart would undo is ever acknowledged.

// IntentLog is where a change set of several changes records its steps
// before it does them, and removes the record after: *state.Intents.
type IntentLog interface {
	// Record writes the record durably; done removes it, durably.
	Record(in state.Intent) (done func() error, err error)
}

// IntentStats counts what became of change sets' intent records.
type IntentStats struct {
	// RemoveFailures is the number of times removing a record failed (at
	// the end of its set, or when a later change tried again).
	RemoveFailures uint64
	// Open is the number of records answered for and still on disk.
	Open int
}

// IntentStats returns the counts of the intent records' removals, for
// metrics.
func (s *Engine) IntentStats() IntentStats {
	// Without mu, which a settling record holds through its I/O: a scrape
	// never waits on the disk.
	return IntentStats{RemoveFailures: s.records.removeFailures.Load(), Open: int(s.records.n.Load())}
}

// openRecords are the records of change sets that were answered and are
// still on disk.
type openRecords struct {
	// n is len(open), read without mu by every change and by IntentStats.
	n              atomic.Int32
	removeFailures atomic.Uint64
	// mu is held while a record is settled, so that two changes never
	// settle one record at once.
	mu   sync.Mutex
	open []*openRecord
}

// openRecord is a record kept on disk after its set was answered.
type openRecord struct {
	id string
	// keys are the lock keys of every path its steps name.
	keys  []string
	steps []workspace.Step
	// finished says that no step is left to redo: only the record's
	// removal is.
	finished bool
	done     func() error
	// entry is the set's history entry, pending until the steps left are
	// redone; nil for a finished set's (resolved), or none.
	entry *pending
}

// keepRecord keeps the record of set, whose removal failed (err) or which
// still has steps to redo (finished false, with its pending history entry
// p), until a later change to one of its paths settles it. It runs while
// the set still holds its locks, so that no change to its paths can come
// before it.
func (s *Engine) keepRecord(ctx context.Context, set string, changes []*change, steps []workspace.Step, finished bool, done func() error, err error, p *pending) {
	if err != nil {
		s.records.removeFailures.Add(1)
		s.opts.logger.ErrorContext(ctx, "intent log: a change set's record could not be removed; its paths cannot be changed until it is (each change to them tries again), since a restart would redo the set over their changes",
			"changeSet", set, "err", err)
	}
	var keys []string
	for _, c := range changes {
		keys = append(keys, c.keys()...)
	}
	for _, st := range steps {
		keys = append(keys, s.ws.LockKey(st.To))
		if st.Kind == workspace.StepRename && st.Version != "" {
			keys = append(keys, s.ws.LockKey(st.From)) // a moved file's source
		}
	}
	slices.Sort(keys)
	r := &openRecord{id: set, keys: slices.Compact(keys), steps: steps, finished: finished, done: done, entry: p}
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	s.records.open = append(s.records.open, r)
	s.records.n.Store(int32(len(s.records.open)))
}

// settleRecords settles every open record that names one of keys (or a
// path inside or above one), before a change to them: the caller holds
// their locks. It returns an error, which refuses the change, when a
// record cannot be settled.
func (s *Engine) settleRecords(ctx context.Context, keys []string) error {
	if s.records.n.Load() == 0 {
		return nil
	}
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	var errs []error
	kept := s.records.open[:0]
	for _, r := range s.records.open {
		if !r.touches(keys) {
			kept = append(kept, r)
			continue
		}
		if err := s.settle(ctx, r); err != nil {
			errs = append(errs, err)
			kept = append(kept, r)
		}
	}
	clear(s.records.open[len(kept):])
	s.records.open = kept
	s.records.n.Store(int32(len(kept)))
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// touches reports whether the record names one of keys, or a path inside
// or above one.
func (r *openRecord) touches(keys []string) bool {
	sep := string(filepath.Separator)
	for _, k := range keys {
		for _, rk := range r.keys {
			if k == rk || strings.HasPrefix(k, rk+sep) || strings.HasPrefix(rk, k+sep) {
				return true
			}
		}
	}
	return false
}

// settle redoes the steps left of r, if any, records in the history the
// files the set changed, and removes r's record. No other change of the
// server has touched r's paths since its set (each would have settled r
// first), so a step found undone is one the set did not finish.
func (s *Engine) settle(ctx context.Context, r *openRecord) error {
	if !r.finished {
		did := make([]bool, len(r.steps))
		for i, st := range r.steps {
			out, why, err := s.ws.Redo(st)
			did[i] = err == nil && (out == workspace.RedoDone || out == workspace.RedoDid)
			switch {
			case err != nil:
				s.opts.logger.ErrorContext(ctx, "apply: a change of a committed set still cannot be applied", "changeSet", r.id, "path", st.Path, "err", err)
				return fmt.Errorf("%w: change set %s, which names this path, was applied only in part and its change to %s still fails (%v); this path cannot be changed until it is finished. Fix the cause and send this change again, or restart the server, which finishes the set first",
					workspace.ErrIO, r.id, st.Path, err)
			case out == workspace.RedoDid:
				s.opts.logger.WarnContext(ctx, "apply: a change of a committed set was applied on a later try", "changeSet", r.id, "path", st.Path)
			case out == workspace.RedoSkipped || out == workspace.RedoLost:
				s.opts.logger.ErrorContext(ctx, "apply: a change of a committed set could not be applied", "changeSet", r.id, "path", st.Path, "why", why)
			}
		}
		s.recordSteps(ctx, r.entry, r.steps, did)
		r.finished, r.entry = true, nil
	}
	if err := r.done(); err != nil {
		s.records.removeFailures.Add(1)
		s.opts.logger.ErrorContext(ctx, "intent log: a change set's record still cannot be removed; changes to its paths are refused until it is", "changeSet", r.id, "err", err)
		return fmt.Errorf("%w: this path cannot be changed yet: change set %s, which changed it, still has its intent record in the server's state directory, and the record could not be removed (%v). Were the path changed, a restart of the server would redo that set over the change. Make the state directory writable (or free space on its disk), then send this change again: the server removes the record first",
			workspace.ErrIO, r.id, err)
	}
	s.opts.logger.InfoContext(ctx, "intent log: a change set's record was removed on a later try", "changeSet", r.id)
	return nil
}
