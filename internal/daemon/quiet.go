package daemon

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The release of freed memory once the engine goes quiet (releaseWhenQuiet).
const (
	// quietEvery is how often the process's allocations are sampled.
	quietEvery = time.Second
	// quietSamples in a row that allocate at most quietBytes each make
	// the process quiet: long enough that a burst of calls is over, short
	// enough that the memory comes back before the next one is likely.
	quietSamples = 2
	// quietBytes is what one sample may allocate and still be quiet: a
	// health probe, a metrics scrape or an agent's occasional call, but
	// not a burst of calls.
	quietBytes = 256 << 10
	// releaseWorth is what the process must have allocated since the last
	// release for another to be worth a full collection: less garbage than
	// this leaves little to return.
	releaseWorth = 8 << 20
)

// quietRelease decides, from the bytes the process has allocated so far
// (sampled every quietEvery), when to return freed memory to the
// operating system: once, when the process goes quiet after allocating at
// least worth bytes since the last release; never while it is busy, and
// not again while it stays quiet.
type quietRelease struct {
	worth, quiet uint64 // releaseWorth, quietBytes
	samples      int    // quietSamples

	last  uint64 // allocated bytes at the previous sample
	since uint64 // allocated bytes at the last release
	still int    // quiet samples in a row
}

// newQuietRelease starts from allocated, the bytes allocated so far: what
// came before is not work to release after.
func newQuietRelease(allocated uint64) *quietRelease {
	return &quietRelease{worth: releaseWorth, quiet: quietBytes, samples: quietSamples, last: allocated, since: allocated}
}

// observe takes the bytes allocated so far and says whether to release
// now.
func (q *quietRelease) observe(allocated uint64) bool {
	delta := allocated - q.last
	q.last = allocated
	if delta > q.quiet {
		q.still = 0
		return false
	}
	q.still++
	if q.still < q.samples || allocated-q.since < q.worth {
		return false
	}
	q.since = allocated
	return true
}

// allocatedBytes is what the process has allocated on the heap since it
// started.
func allocatedBytes() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s[:])
	return s[0].Value.Uint64()
}

// releaser runs a quietRelease on the process's allocations.
type releaser struct {
	*quietRelease
	allocated func() uint64 // allocatedBytes
	release   func()        // debug.FreeOSMemory
}

// tick samples the allocations once, and releases if the process has gone
// quiet; it says whether it did.
func (r *releaser) tick() bool {
	if !r.observe(r.allocated()) {
		return false
	}
	r.release()
	return true
}

// run ticks every interval until ctx ends.
func (r *releaser) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.tick()
		}
	}
}

// releaseWhenQuiet returns the memory the heap has freed to the operating
// system each time the process goes quiet after a burst of work, until
// ctx ends. Under TuneRuntime's GOGC the collector lets the heap grow to
// several times what is live before it runs, and the runtime keeps what
// it frees for reuse, so a burst of calls leaves the process resident at
// several times its live heap for as long as it stays idle; a node
// holding many idle engines pays that in each of them. One full
// collection and release when the burst is over brings it back to what is
// live, off the calls' path (BENCHMARKS.md, "Resident memory of one
// hashlined").
func releaseWhenQuiet(ctx context.Context) {
	r := &releaser{quietRelease: newQuietRelease(allocatedBytes()), allocated: allocatedBytes, release: debug.FreeOSMemory}
	r.run(ctx, quietEvery)
}
