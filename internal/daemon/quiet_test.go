package daemon

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"testing"
)

// TestReleaseWaitsForQuietAfterWork feeds quietRelease the bytes a
// process has allocated so far, one sample at a time, and checks at which
// samples it releases: only once the process has allocated enough since
// the last release and then gone quiet, once per burst.
func TestReleaseWaitsForQuietAfterWork(t *testing.T) {
	t.Parallel()
	// Worth 100, quiet up to 10 a sample, 2 quiet samples in a row.
	tests := []struct {
		name      string
		allocated []uint64
		want      []int // the samples (0-based) that release
	}{
		{"a burst, then quiet: released once, on the second quiet sample",
			[]uint64{500, 1000, 1005, 1008, 1009, 1010, 1011}, []int{3}},
		{"busy all along: never released",
			[]uint64{100, 200, 300, 400, 500, 600}, nil},
		{"quiet, little allocated: nothing to release",
			[]uint64{5, 10, 15, 20, 25}, nil},
		{"a trickle released once it adds up to worth",
			[]uint64{9, 18, 27, 36, 45, 54, 63, 72, 81, 90, 99, 108, 117, 126}, []int{11}},
		{"a busy sample in the quiet starts the wait again",
			[]uint64{500, 505, 600, 605, 610}, []int{4}},
		{"each burst released after it",
			[]uint64{500, 505, 510, 515, 900, 1300, 1301, 1302, 1303}, []int{2, 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := &quietRelease{worth: 100, quiet: 10, samples: 2}
			var got []int
			for i, a := range tc.allocated {
				if q.observe(a) {
					got = append(got, i)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("released at samples %v, want %v", got, tc.want)
			}
		})
	}
}

// heldBytes is the memory the Go runtime holds from the operating system:
// all it has mapped, less what it has returned.
func heldBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// TestMemoryReturnedWhenQuiet runs the releaser on this process's real
// allocations, ticking it by hand: 64 MiB of heap made garbage stays held
// while the process allocates, and is returned to the operating system a
// couple of quiet ticks after it stops. Not parallel: other tests'
// allocations would keep the process busy.
func TestMemoryReturnedWhenQuiet(t *testing.T) {
	const garbage = 64 << 20
	releases := 0
	r := &releaser{quietRelease: newQuietRelease(allocatedBytes()), allocated: allocatedBytes, release: func() {
		releases++
		debug.FreeOSMemory()
	}}
	// Work: memory held live, touched so that it is resident, while
	// ticks see the process busy.
	var chunks [][]byte
	for range garbage >> 20 {
		c := make([]byte, 1<<20)
		for i := 0; i < len(c); i += 4096 {
			c[i] = 1
		}
		chunks = append(chunks, c)
		if r.tick() {
			t.Fatal("released while the process was allocating")
		}
	}
	runtime.KeepAlive(chunks)
	chunks = nil
	before := heldBytes()
	// Quiet: ticks with next to nothing allocated between them. Other
	// goroutines of the test binary may allocate a little; a generous
	// number of ticks leaves room for that.
	ticks := 0
	for ; releases == 0 && ticks < 100; ticks++ {
		r.tick()
	}
	if releases != 1 {
		t.Fatalf("%d releases after %d quiet ticks, want 1", releases, ticks)
	}
	if ticks < quietSamples {
		t.Errorf("released on quiet tick %d, before %d in a row", ticks, quietSamples)
	}
	after := heldBytes()
	t.Logf("held %d MiB before the release, %d MiB after", before>>20, after>>20)
	if after+garbage/2 > before {
		t.Errorf("held %d MiB before the release and %d MiB after: want at least %d MiB of the %d MiB of garbage returned", before>>20, after>>20, garbage>>21, garbage>>20)
	}
	for range 10 {
		if r.tick() {
			t.Fatal("released again while the process stayed quiet")
		}
	}
}

// TestReleaserStopsWithItsContext: the releaser's goroutine ends when the
// engine it was started for stops.
func TestReleaserStopsWithItsContext(t *testing.T) {
	t.Parallel()
	r := &releaser{quietRelease: newQuietRelease(0), allocated: allocatedBytes, release: func() {}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		r.run(ctx, 1)
		close(done)
	}()
	cancel()
	<-done
}

// gogc is the collector's GOGC now.
func gogc() uint64 {
	s := [1]metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s[:])
	return s[0].Value.Uint64()
}

// TuneRuntime leaves Go's default GOGC for calls on small files and raises
// it while calls on large files run; a GOGC in the environment is the
// operator's, and then nothing is returned to change it. Not parallel: it
// sets the process's GOGC and memory limit, and puts them back.
func TestTuneRuntimeRaisesGOGCOnlyWhileLargeCallsRun(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOMEMLIMIT", "")

	t.Setenv("GOGC", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	large := TuneRuntime(ctx, 1<<30)
	if large == nil {
		t.Fatal("no function to tell of large calls without GOGC in the environment")
	}
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC %d before any large call, want 100", got)
	}
	large(true)
	if got := gogc(); got != largeCallsGOGC {
		t.Fatalf("GOGC %d while large calls run, want %d", got, largeCallsGOGC)
	}
	large(false)
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC %d once they are over, want 100", got)
	}

	t.Setenv("GOGC", "250")
	debug.SetGCPercent(250) // as the runtime read it at start
	if f := TuneRuntime(ctx, 1<<30); f != nil {
		t.Fatal("GOGC in the environment, and still a function to change it")
	}
	if got := gogc(); got != 250 {
		t.Fatalf("GOGC %d with GOGC=250 in the environment, want 250", got)
	}
}
