package engine

import (
	"context"
	"sync"
)

// treeLock orders the removal of a directory against every write under it.
// The edit locks are per path, so a directory's lock does not exclude a
// write of a file inside it: a set that deletes directory d and a Write of
// d/f would not wait for each other, and the file could appear between the
// set's check that d is empty and its removal of d, after the set's commit
// point. Every writing call holds the tree lock shared while it holds its
// edit locks; a call that removes a directory holds it exclusively. It is
// always taken before any edit lock, so the two never deadlock. Directory
// removals are rare, so writers almost never wait on it.
//
// A waiting exclusive holder stops new shared ones, so a stream of writes
// cannot starve a directory delete. Unlike sync.RWMutex, a wait ends with
// its caller's context.
type treeLock struct {
	mu       sync.Mutex
	readers  int
	writer   bool
	queued   int           // exclusive holders waiting
	released chan struct{} // closed, and replaced, at every release
	// waiting, when set, runs when a shared holder is about to wait (tests,
	// through the service's options).
	waiting func()
}

// lock takes the tree lock, exclusively or shared, and returns its unlock.
func (t *treeLock) lock(ctx context.Context, exclusive bool) (func(), error) {
	t.mu.Lock()
	if t.released == nil {
		t.released = make(chan struct{})
	}
	if exclusive {
		t.queued++
	}
	for {
		if exclusive && !t.writer && t.readers == 0 {
			t.queued--
			t.writer = true
			t.mu.Unlock()
			return t.unlockExclusive, nil
		}
		if !exclusive && !t.writer && t.queued == 0 {
			t.readers++
			t.mu.Unlock()
			return t.unlockShared, nil
		}
		wait := t.released
		t.mu.Unlock()
		if !exclusive && t.waiting != nil {
			t.waiting()
		}
		select {
		case <-wait:
			t.mu.Lock()
		case <-ctx.Done():
			if exclusive {
				t.mu.Lock()
				t.queued--
				t.wake() // shared holders may have waited on this one
				t.mu.Unlock()
			}
			return nil, ctx.Err()
		}
	}
}

func (t *treeLock) unlockShared() {
	t.mu.Lock()
	t.readers--
	t.wake()
	t.mu.Unlock()
}

func (t *treeLock) unlockExclusive() {
	t.mu.Lock()
	t.writer = false
	t.wake()
	t.mu.Unlock()
}

// wake releases every waiter to look again; t.mu is held.
func (t *treeLock) wake() {
	close(t.released)
	t.released = make(chan struct{})
}
