package grep

import (
	"container/list"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Budget bounds the bytes that the searches sharing it hold at once: the
// results their workers found ahead of what was emitted, and the Files
// emitted and not yet released (see Options.Budget). A server makes one and
// passes it to every search, so that many searches whose callers are slow
// to take their results cannot together hold more than it.
//
// A search waits for bytes rather than fail: it stops reading ahead, gives
// back what it read ahead, and waits (on its context) for the bytes of the
// next File it is to emit. Waiters are served first come, first served,
// and while anyone waits no search reads ahead, so a File larger than what
// is free is not passed over for ever by smaller ones.
type Budget struct {
	size int64

	mu      sync.Mutex
	held    int64
	waiters list.List // of *budgetWaiter, oldest first
	// peak is the most held at once, for tests.
	peak atomic.Int64
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when granted
}

// NewBudget returns a budget of size bytes (at least 1).
func NewBudget(size int64) *Budget {
	return &Budget{size: max(size, 1)}
}

// Size returns the budget's size in bytes.
func (b *Budget) Size() int64 { return b.size }

// Held returns the bytes held now by the searches sharing the budget.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// Peak returns the most bytes held at once since the budget was made.
func (b *Budget) Peak() int64 { return b.peak.Load() }

// tryAcquire takes n bytes (at most the size) if they are free and nobody
// waits for bytes.
func (b *Budget) tryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waiters.Len() > 0 || b.held+n > b.size {
		return false
	}
	b.grantLocked(n)
	return true
}

func (b *Budget) grantLocked(n int64) {
	b.held += n
	if b.held > b.peak.Load() {
		b.peak.Store(b.held)
	}
}

// acquire takes n bytes (at most the size), waiting for them in turn, or
// returns ctx's error once ctx is done, holding nothing.
func (b *Budget) acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.held+n <= b.size {
		b.grantLocked(n)
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	e := b.waiters.PushBack(w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	select {
	case <-w.ready:
		// Granted meanwhile: give it back to whoever is next.
		b.held -= n
	default:
		b.waiters.Remove(e)
	}
	b.grantWaitersLocked()
	b.mu.Unlock()
	return ctx.Err()
}

// release gives back n bytes.
func (b *Budget) release(n int64) {
	b.mu.Lock()
	b.held -= n
	b.grantWaitersLocked()
	b.mu.Unlock()
}

// grantWaitersLocked serves waiters in order while the first one fits.
func (b *Budget) grantWaitersLocked() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*budgetWaiter)
		if b.held+w.n > b.size {
			return
		}
		b.grantLocked(w.n)
		b.waiters.Remove(e)
		close(w.ready)
	}
}

// account is what one search holds: of its own cap, and of the Budget if it
// shares one.
//
// Workers keep a result only if it fits right away (tryAhead); the results
// they keep are "ahead" until the emitting goroutine passes them, and may be
// evicted (read again later) to make room. The emitting goroutine must have
// the bytes of the File it emits and waits for them (acquire): it first
// evicts what the workers hold ahead, so that it never waits for bytes only
// it could free, then waits for the caller to release Files it emitted, or
// for other searches to give bytes back to the Budget.
type account struct {
	budget *Budget // nil: this search shares none
	cap    int64

	mu   sync.Mutex
	held int64
	// waiting is set while the emitting goroutine waits for room: workers
	// then keep nothing, so as not to take it.
	waiting bool
	ahead   map[*item]*hold
	wake    chan struct{} // a release while waiting
}

// hold is the bytes one result counts.
type hold struct {
	a *account
	n int64 // counted against the search's cap
	g int64 // counted against the Budget: n, but at most its size
	// released is set once the bytes are given back.
	released atomic.Bool
	// evicted is set, under a.mu, when the bytes were taken back from a
	// worker's result ahead.
	evicted bool
}

func newAccount(b *Budget, cap int64) *account {
	if b != nil {
		cap = min(cap, b.size)
	}
	return &account{budget: b, cap: cap, ahead: map[*item]*hold{}, wake: make(chan struct{}, 1)}
}

func (a *account) newHold(n int64) *hold {
	h := &hold{a: a, n: n, g: n}
	if a.budget != nil {
		h.g = min(n, a.budget.size)
	}
	return h
}

// fitsLocked reports whether n more bytes fit in the search's cap. When
// the search holds nothing they always do, so that a file larger than the
// cap is still searched.
func (a *account) fitsLocked(n int64) bool {
	return a.held == 0 || a.held+n <= a.cap
}

// tryAhead counts n bytes for a worker's result of it if they fit now
// without waiting, and returns the hold, or nil.
func (a *account) tryAhead(it *item, n int64) *hold {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting || !a.fitsLocked(n) {
		return nil
	}
	h := a.newHold(n)
	if a.budget != nil && !a.budget.tryAcquire(h.g) {
		return nil
	}
	a.held += n
	a.ahead[it] = h
	return h
}

// keep attaches a worker's result to the task it is the result of, unless
// its bytes were evicted meanwhile; it reports whether it did.
func (a *account) keep(it *item, h *hold, f File, ms []match) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if h.evicted {
		return false
	}
	f.hold = h
	it.res.file, it.res.ms = f, ms
	return true
}

// pass takes the result of it out of the results ahead: the emitting
// goroutine has it now, and no eviction may touch it. A result is ahead
// exactly while its File has a hold (keep sets it, eviction clears it),
// which the emitting goroutine may look at once the task has finished.
func (a *account) pass(it *item) {
	a.mu.Lock()
	delete(a.ahead, it)
	a.mu.Unlock()
}

// acquire counts n bytes for a result of the emitting goroutine, waiting
// for them, and returns the hold, or ctx's error once ctx is done.
func (a *account) acquire(ctx context.Context, n int64) (*hold, error) {
	h := a.newHold(n)
	a.mu.Lock()
	for !a.fitsLocked(n) {
		if a.evictLocked(n) {
			continue
		}
		a.waiting = true
		a.mu.Unlock()
		select {
		case <-a.wake:
		case <-ctx.Done():
		}
		a.mu.Lock()
		a.waiting = false
		if err := ctx.Err(); err != nil {
			a.mu.Unlock()
			return nil, err
		}
	}
	a.held += n
	if a.budget != nil && !a.budget.tryAcquire(h.g) {
		// What this search holds ahead only it can free; others may wait
		// for it.
		a.evictLocked(-1)
		a.waiting = true
		a.mu.Unlock()
		err := a.budget.acquire(ctx, h.g)
		a.mu.Lock()
		a.waiting = false
		if err != nil {
			a.held -= n
			a.mu.Unlock()
			return nil, err
		}
	}
	a.mu.Unlock()
	return h, nil
}

// evictLocked takes back the bytes of results held ahead, those furthest
// ahead first, until n more bytes fit in the cap, or all of them for n < 0.
// It reports whether it evicted any.
func (a *account) evictLocked(n int64) bool {
	if len(a.ahead) == 0 {
		return false
	}
	its := make([]*item, 0, len(a.ahead))
	for it := range a.ahead {
		its = append(its, it)
	}
	slices.SortFunc(its, func(x, y *item) int { return strings.Compare(y.key, x.key) })
	for _, it := range its {
		if n >= 0 && a.fitsLocked(n) {
			break
		}
		h := a.ahead[it]
		delete(a.ahead, it)
		h.evicted = true
		it.res.file, it.res.ms, it.res.deferred = File{}, nil, true
		a.releaseLocked(h)
	}
	return true
}

// close takes back what is still held ahead: the search has ended.
func (a *account) close() {
	a.mu.Lock()
	a.evictLocked(-1)
	a.mu.Unlock()
}

// release gives back the bytes of h, once.
func (h *hold) release() {
	if h == nil {
		return
	}
	h.a.mu.Lock()
	h.a.releaseLocked(h)
	h.a.mu.Unlock()
}

func (a *account) releaseLocked(h *hold) {
	if h.released.Swap(true) {
		return
	}
	a.held -= h.n
	if a.budget != nil {
		a.budget.release(h.g)
	}
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// resultBytes is what a result holds: the file's bytes, its lines'
// contents and their bookkeeping, and its matches.
func resultBytes(path string, raw int, lines []Line, ms []match) int64 {
	n := int64(unsafe.Sizeof(File{})) + int64(len(path)) + int64(raw) + int64(cap(lines))*int64(unsafe.Sizeof(Line{})) +
		int64(len(ms))*int64(unsafe.Sizeof(match{}))
	for _, l := range lines {
		n += int64(len(l.Content)) + int64(cap(l.Submatches))*int64(unsafe.Sizeof(Span{}))
	}
	return n
}
