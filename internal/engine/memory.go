package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/hashline/hashline/internal/workspace"
)

// DefaultMemoryBudget is the bytes Read, Edit, Write and Apply calls may
// hold at once when WithMemoryBudget is not given.
const DefaultMemoryBudget = 512 << 20

// MemoryHoldFactor is the most bytes a call is charged per byte of a file
// it reads (an Edit's; see the factors below).
const MemoryHoldFactor = editHoldFactor

// The bytes a call is charged per byte of a file it reads, estimated from
// the file's size before it is read. A Read holds the bytes read (and
// their decoding, for UTF-16), the document parsed from them (an 8-byte
// offset per line: as much again as the text for lines of 8 bytes) and
// what the offsets' growth left for the collector. An Edit holds that of
// the old file and of the new one. A delete or move reads the file as a
// Read does, for its version and the Watch event; a write holds its
// content, given in the request, and its encoded bytes. The factors are
// upper bounds for text of ordinary lines, so that what the calls hold
// stays under the budget the operator chose rather than near it.
const (
	readHoldFactor  = 3
	editHoldFactor  = 5
	writeHoldFactor = 2
)

// memoryBudget bounds the bytes that Read, Edit and Apply calls hold at
// once, process-wide (WithMemoryBudget). A call is charged before it reads
// anything, with an estimate from the sizes of the files it will read
// (stat) times the factors above, and waits, in turn and until its
// context ends, for that much to be free; it gives it back when it
// returns. So many calls on large files at once queue instead of growing
// the heap together, and a call larger than the whole budget is refused
// before it reads anything.
type memoryBudget struct {
	size int64
	sem  *semaphore.Weighted

	// largeCalls is told when calls charged LargeCallBytes or more are in
	// flight (WithLargeCalls); mu orders what it is told.
	largeCalls func(inFlight bool)
	mu         sync.Mutex
	large      int // such calls in flight
}

// LargeCallBytes is the charge from which a call is on a large file for
// WithLargeCalls: a Read of a file of about 350 KB (5,000 lines of 70
// bytes), an Edit of one of about 200 KB. A Grep is one whatever it
// searches.
const LargeCallBytes = 1 << 20

func newMemoryBudget(size int64, largeCalls func(bool)) *memoryBudget {
	size = max(size, 1)
	return &memoryBudget{size: size, sem: semaphore.NewWeighted(size), largeCalls: largeCalls}
}

// largeCall counts a large call from now until the function it returns
// is called.
func (b *memoryBudget) largeCall() func() {
	if b.largeCalls == nil {
		return func() {}
	}
	b.inFlight(1)
	return func() { b.inFlight(-1) }
}

// inFlight counts a large call starting (+1) or ending (-1), and tells
// largeCalls when the first starts and the last ends.
func (b *memoryBudget) inFlight(d int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.large += d
	if b.large == 1 && d > 0 || b.large == 0 {
		b.largeCalls(b.large > 0)
	}
}

// acquire charges n bytes for what (a call, named for the error), waiting
// for them, and returns the function that gives them back. n larger than
// the whole budget is ErrTooLarge at once; a context that ends while the
// call waits is its error, saying what it waited for.
func (b *memoryBudget) acquire(ctx context.Context, what string, n int64) (func(), error) {
	if n <= 0 {
		return func() {}, nil
	}
	if n > b.size {
		return nil, fmt.Errorf("%w: %s would hold about %d bytes of memory while it runs, more than the server's whole memory budget of %d bytes for Read, Edit and Apply calls together (--memory-budget); read or change smaller files, split the change set, or ask the operator to raise the budget",
			workspace.ErrTooLarge, what, n, b.size)
	}
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, &MemoryWaitError{what: what, n: n, size: b.size, err: err}
	}
	if n < LargeCallBytes {
		return func() { b.sem.Release(n) }, nil
	}
	done := b.largeCall()
	return func() {
		b.sem.Release(n)
		done()
	}, nil
}

// MemoryWaitError is a call whose context ended while it waited for its
// share of the memory budget: nothing was read or written.
type MemoryWaitError struct {
	what    string
	n, size int64
	err     error // the context's
}

func (e *MemoryWaitError) Error() string {
	return fmt.Sprintf("%s waited for %d bytes of the server's memory budget (%d bytes, --memory-budget), which other calls on large files held until this call's %s; nothing was read or written. Retry with a longer deadline, or when fewer large files are being read or edited",
		e.what, e.n, e.size, map[bool]string{true: "cancellation", false: "deadline"}[errors.Is(e.err, context.Canceled)])
}

func (e *MemoryWaitError) Unwrap() error { return e.err }

// fileBytes is the size of the regular file p from its metadata, 0 for a
// path that is missing or not a regular file (the call's own checks refuse
// those), so that a call can be charged and its size checked before it
// reads anything.
func (s *Engine) fileBytes(p string) int64 {
	_, fi, err := s.ws.Stat(p)
	if err != nil || fi == nil || !fi.Mode().IsRegular() {
		return 0
	}
	return fileSize(fi)
}

func fileSize(fi fs.FileInfo) int64 { return max(fi.Size(), 0) }
