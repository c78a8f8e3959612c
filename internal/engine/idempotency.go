package engine

import (
	"container/list"
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// Idempotency keys (EditRequest.request_id, WriteRequest.request_id). A
// call cut off by its deadline, or by a broken connection, may still have
// been applied: the server does not stop a write the client gave up on once
// it has started it. A client that retries must therefore be able to say
// "this is the same request again", and the server must answer it with the
// first call's outcome instead of applying it a second time.
const (
	// MaxRequestIDBytes bounds a request_id: a random key needs 32 hex
	// digits, and the table holds every key for the whole TTL.
	MaxRequestIDBytes = 128
	// DefaultRequestIDTTL is how long an outcome is remembered: long enough
	// for any client's retries and a harness re-running a command after a
	// timeout, short enough that the table stays small.
	DefaultRequestIDTTL = 10 * time.Minute
	// DefaultRequestIDBytes bounds the remembered outcomes, responses and
	// errors together; past it the oldest are forgotten first. An Edit
	// response is at most the response limit (4 MiB by default).
	DefaultRequestIDBytes = 64 << 20
)

// RequestEntryBytes is counted for each remembered outcome besides its
// message (the key, the hash, the bookkeeping), so that the byte bound also
// bounds the number of entries.
const RequestEntryBytes = 256

// errPanicked is remembered for a call that panicked: it may have written,
// so a retry must not run it again.
var errPanicked = errors.New("the first call with this request_id failed inside the server, and may or may not have written; Read the file to see, and send any new request with a new request_id")

// requestTable remembers the outcome of Edit and Write calls by (agent,
// request_id) for a bounded time and within a byte budget. A call whose
// key is new runs and its outcome is remembered; a call with a known key
// gets the remembered outcome, or waits for the first call while that is
// still running; a call with a known key but a different request is
// refused.
//
// What is remembered is every outcome that a retry must not change: the
// response, or the error, since an error may come after the write (an I/O
// error syncing the directory once the file was replaced, a panic) and a
// refusal answered once should be answered the same way. The exception is
// a call that ended because it was cancelled or ran out of time: the
// service checks its context just before it writes and never after, so
// such a call wrote nothing, and a retry runs it again.
type requestTable struct {
	ttl      time.Duration
	maxBytes int64
	now      func() time.Time

	mu sync.Mutex
	m  map[requestKey]*requestEntry
	// order holds the remembered (finished) entries, oldest first. Every
	// entry lives ttl after it finished, so this is also expiry order; a
	// replay does not extend an entry's life, since the TTL promises a time
	// since the first call.
	order list.List
	bytes int64
	// waiting, if set, is called when a call starts waiting for the
	// running call with its key (WithRequestWaiting).
	waiting func()
}

type requestKey struct{ agent, id string }

// requestEntry is one key's call: running until done is closed, then its
// outcome.
type requestEntry struct {
	key  requestKey
	sum  uint64 // of the request (requestSum)
	done chan struct{}
	// Set before done is closed.
	resp any
	err  error // the engine's error
	kept bool  // false: the call left nothing to remember, and is gone from the table
	// Set while kept and in order.
	expires time.Time
	size    int64
	elem    *list.Element
}

func newRequestTable(ttl time.Duration, maxBytes int64, now func() time.Time) *requestTable {
	return &requestTable{ttl: ttl, maxBytes: maxBytes, now: now, m: make(map[requestKey]*requestEntry)}
}

// claim returns the entry of key: a new one the caller owns (and must
// finish), or the finished entry of an earlier call with the same request.
// It waits while another call with the key is running, and refuses a key
// whose call carried another request.
func (t *requestTable) claim(ctx context.Context, key requestKey, sum uint64) (e *requestEntry, owner bool, err error) {
	for {
		t.mu.Lock()
		t.expire(t.now())
		e = t.m[key]
		if e == nil {
			e = &requestEntry{key: key, sum: sum, done: make(chan struct{})}
			t.m[key] = e
			t.mu.Unlock()
			return e, true, nil
		}
		t.mu.Unlock()
		if e.sum != sum {
			return nil, false, invalid(ReasonRequestIDReused, "request_id",
				"request_id %q was already used by this agent for a different request within the last %s; a retry must resend exactly the same request, and a new request needs a new request_id", key.id, shortDuration(t.ttl))
		}
		if t.waiting != nil {
			t.waiting()
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, false, &RequestRunningError{ID: key.id, Err: ctx.Err()}
		}
		if e.kept {
			return e, false, nil
		}
		// The first call wrote nothing and left; this one runs instead.
	}
}

// finish records the outcome of the call that owns e and wakes the calls
// waiting for it.
func (t *requestTable) finish(e *requestEntry, resp any, size int64, err error) {
	keep := !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	t.mu.Lock()
	defer t.mu.Unlock()
	e.resp, e.err, e.kept = resp, err, keep
	close(e.done)
	if !keep {
		delete(t.m, e.key)
		return
	}
	e.size = RequestEntryBytes + int64(len(e.key.agent)+len(e.key.id)) + size
	e.expires = t.now().Add(t.ttl)
	e.elem = t.order.PushBack(e)
	t.bytes += e.size
	for t.bytes > t.maxBytes {
		t.evict(t.order.Front().Value.(*requestEntry))
	}
}

// expire forgets the outcomes whose time is up.
func (t *requestTable) expire(now time.Time) {
	for f := t.order.Front(); f != nil; f = t.order.Front() {
		e := f.Value.(*requestEntry)
		if now.Before(e.expires) {
			return
		}
		t.evict(e)
	}
}

func (t *requestTable) evict(e *requestEntry) {
	t.order.Remove(e.elem)
	t.bytes -= e.size
	if t.m[e.key] == e {
		delete(t.m, e.key)
	}
}

// stats returns the remembered outcomes, their bytes, and the keys known
// (remembered or running).
func (t *requestTable) stats() (entries int, bytes int64, keys int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.order.Len(), t.bytes, len(t.m)
}

// RequestStats reports the request_id outcomes the engine remembers, the
// bytes they are counted at (each RequestEntryBytes besides what it
// holds), and the keys it knows, remembered or still running; all zero
// with the table turned off.
func (s *Engine) RequestStats() (entries int, bytes int64, keys int) {
	if s.requests == nil {
		return 0, 0, 0
	}
	return s.requests.stats()
}

// Once runs call, a face's handling of one request, at most once per agent
// and request id: the hook of Edit, Write, Delete, Move and Apply. sum
// identifies the request (the face hashes its message, so that a key reused
// for a different request is refused); size counts what an outcome holds,
// for the table's byte bound. A replay returns the first call's outcome as
// it was: the face copies a response it hands out. call returns the engine's
// errors. Without an id, with a dry run (which writes nothing, so there is
// nothing to protect), or with the table turned off, call just runs.
func Once[R any](ctx context.Context, e *Engine, id string, sum uint64, dryRun bool, size func(R, error) int64, call func() (R, error)) (resp R, replayed bool, err error) {
	if len(id) > MaxRequestIDBytes {
		return resp, false, BadRequest("request_id", "request_id is %d bytes; the most is %d (32 random hex digits are plenty)", len(id), MaxRequestIDBytes)
	}
	if id == "" || dryRun || e.requests == nil {
		resp, err = call()
		return resp, false, err
	}
	key := requestKey{agent: Agent(ctx), id: id}
	en, owner, err := e.requests.claim(ctx, key, sum)
	if err != nil {
		return resp, false, err
	}
	if !owner {
		e.opts.logger.DebugContext(ctx, "request replayed", "requestId", id)
		if en.err != nil {
			return resp, true, en.err
		}
		return en.resp.(R), true, nil
	}
	finished := false
	defer func() {
		if !finished { // call panicked
			e.requests.finish(en, nil, size(resp, errPanicked), errPanicked)
		}
	}()
	resp, err = call()
	finished = true
	if err != nil {
		e.requests.finish(en, nil, size(resp, err), err)
	} else {
		e.requests.finish(en, resp, size(resp, nil), nil)
	}
	return resp, false, err
}

// shortDuration prints d without zero units: "10m", not "10m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
