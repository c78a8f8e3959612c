package grep

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	t.Run("bytes are granted while they fit and counted until given back", func(t *testing.T) {
		b := NewBudget(10)
		if !b.tryAcquire(6) || !b.tryAcquire(4) {
			t.Fatal("bytes that fit were refused")
		}
		if b.tryAcquire(1) {
			t.Fatal("a byte over the budget was granted")
		}
		b.release(6)
		if got := b.Held(); got != 4 {
			t.Fatalf("held %d, want 4", got)
		}
		if got := b.Peak(); got != 10 {
			t.Fatalf("peak %d, want 10", got)
		}
	})
	t.Run("a waiter is served first and nobody takes bytes while it waits", func(t *testing.T) {
		b := NewBudget(10)
		b.tryAcquire(8)
		got := make(chan error, 1)
		go func() { got <- b.acquire(context.Background(), 5) }()
		waitFor(t, "the waiter to queue", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 })
		if b.tryAcquire(2) {
			t.Fatal("two free bytes went to a newcomer while a waiter waits")
		}
		b.release(8)
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if h := b.Held(); h != 5 {
			t.Fatalf("held %d, want the waiter's 5", h)
		}
	})
	t.Run("a waiter whose context ends holds nothing and lets the next one in", func(t *testing.T) {
		b := NewBudget(10)
		b.tryAcquire(8)
		ctx, cancel := context.WithCancel(context.Background())
		first, second := make(chan error, 1), make(chan error, 1)
		go func() { first <- b.acquire(ctx, 9) }()
		waitFor(t, "the first waiter", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 1 })
		go func() { second <- b.acquire(context.Background(), 2) }()
		waitFor(t, "the second waiter", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() == 2 })
		cancel()
		if err := <-first; !errors.Is(err, context.Canceled) {
			t.Fatalf("first waiter: %v, want context.Canceled", err)
		}
		if err := <-second; err != nil {
			t.Fatal(err)
		}
		if h := b.Held(); h != 10 {
			t.Fatalf("held %d, want 8 and the second waiter's 2", h)
		}
	})
}

// waitFor waits for cond, failing after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// sameFiles writes n files that all match "match" on every line, with
// paths of one length, so that every result holds the same bytes.
func sameFiles(t *testing.T, n int) (dir string, files map[string][]byte) {
	dir = t.TempDir()
	files = map[string][]byte{}
	text := map[string]string{}
	content := strings.Repeat("match "+strings.Repeat("x", 40)+"\n", 20)
	for i := range n {
		name := fmt.Sprintf("d%d/f%04d.txt", i%4, i)
		files[name], text[name] = []byte(content), content
	}
	writeTree(t, dir, text)
	return dir, files
}

// stalled runs a search whose caller keeps every File and never releases
// one (a client that does not read), until ctx is done.
type stalled struct {
	mu    sync.Mutex
	kept  []File
	ended chan error
}

func startStalled(ctx context.Context, t *testing.T, dir string, opts Options) *stalled {
	s := &stalled{ended: make(chan error, 1)}
	fsys := rootFS(t, dir)
	go func() {
		_, err := Search(ctx, fsys, opts, func(f File) error {
			s.mu.Lock()
			s.kept = append(s.kept, f)
			s.mu.Unlock()
			return nil
		})
		s.ended <- err
	}()
	return s
}

// releaseAll gives back what the caller kept, once the search has ended.
func (s *stalled) releaseAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.kept {
		f.Release()
	}
}

// resultSize is what one result of sameFiles holds.
func resultSize(t *testing.T, dir string) int64 {
	var n int64
	_, err := Search(context.Background(), rootFS(t, dir), Options{Pattern: "match", MaxMatches: 1 << 30}, func(f File) error {
		if n != 0 && f.hold.n != n {
			return fmt.Errorf("%s holds %d bytes, another file %d", f.Path, f.hold.n, n)
		}
		n = f.hold.n
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("one result holds %d bytes, err %v", n, err)
	}
	return n
}

func TestSearchesSharingABudget(t *testing.T) {
	dir, files := sameFiles(t, 300)
	opts := Options{Pattern: "match", MaxMatches: 1 << 30, Workers: 3}
	want, _ := naiveSearch(t, files, opts)
	r := resultSize(t, dir)
	opts.MaxHeldBytes = 8 * r

	// healthy searches the tree, releasing each File as it comes, as a
	// caller that reads does.
	healthy := func(ctx context.Context, opts Options) ([]File, error) {
		var got []File
		_, err := Search(ctx, rootFS(t, dir), opts, func(f File) error {
			got = append(got, f)
			f.Release()
			return nil
		})
		return got, err
	}

	t.Run("searches whose callers keep everything hold their own bounds and no more than the budget", func(t *testing.T) {
		b := NewBudget(20 * r) // five searches would hold 40 results
		opts := opts
		opts.Budget = b
		ctx, cancel := context.WithCancel(context.Background())
		var ss []*stalled
		for range 5 {
			ss = append(ss, startStalled(ctx, t, dir, opts))
		}
		// The budget fills: the search first in line waits for one more.
		waitFor(t, "the budget to fill", func() bool { return b.Held() > b.Size()-r })
		cancel()
		for _, s := range ss {
			if err := <-s.ended; !errors.Is(err, context.Canceled) {
				t.Errorf("a stalled search ended with %v, want context.Canceled", err)
			}
			s.mu.Lock()
			if n := int64(len(s.kept)); n > 8 {
				t.Errorf("a search's caller holds %d results, over the search's bound of 8", n)
			}
			s.mu.Unlock()
		}
		if p := b.Peak(); p > b.Size() {
			t.Errorf("peak %d bytes, over the budget of %d", p, b.Size())
		}
		for _, s := range ss {
			s.releaseAll()
		}
		if h := b.Held(); h != 0 {
			t.Errorf("%d bytes still held after every search ended and its Files were released", h)
		}
	})
	t.Run("a healthy search completes while stalled ones hold their bounds", func(t *testing.T) {
		b := NewBudget(40 * r) // room for the three stalled searches and more
		opts := opts
		opts.Budget = b
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var ss []*stalled
		for range 3 {
			ss = append(ss, startStalled(ctx, t, dir, opts))
		}
		waitFor(t, "the stalled searches to fill their bounds", func() bool { return b.Held() >= 3*8*r })
		got, err := healthy(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		compareFiles(t, got, want)
		if p := b.Peak(); p > b.Size() {
			t.Errorf("peak %d bytes, over the budget of %d", p, b.Size())
		}
		cancel()
		for _, s := range ss {
			<-s.ended
			s.releaseAll()
		}
		if h := b.Held(); h != 0 {
			t.Errorf("%d bytes still held", h)
		}
	})
	t.Run("a search that finds the budget spent waits and completes once bytes come back", func(t *testing.T) {
		b := NewBudget(12 * r) // two stalled searches spend it
		opts := opts
		opts.Budget = b
		ctx, cancel := context.WithCancel(context.Background())
		ss := []*stalled{startStalled(ctx, t, dir, opts), startStalled(ctx, t, dir, opts)}
		waitFor(t, "the budget to fill", func() bool { return b.Held() > b.Size()-r })
		type outcome struct {
			files []File
			err   error
		}
		done := make(chan outcome, 1)
		go func() {
			files, err := healthy(context.Background(), opts)
			done <- outcome{files, err}
		}()
		cancel()
		for _, s := range ss {
			<-s.ended
			s.releaseAll()
		}
		o := <-done
		if o.err != nil {
			t.Fatalf("the waiting search failed: %v", o.err)
		}
		compareFiles(t, o.files, want)
		if h := b.Held(); h != 0 {
			t.Errorf("%d bytes still held", h)
		}
	})
	t.Run("a search waiting for bytes returns when cancelled and holds nothing after", func(t *testing.T) {
		b := NewBudget(4 * r)
		opts := opts
		opts.Budget = b
		ctx, cancel := context.WithCancel(context.Background())
		s := startStalled(ctx, t, dir, opts)
		waitFor(t, "the budget to fill", func() bool { return b.Held() > b.Size()-r })
		wctx, wcancel := context.WithCancel(context.Background())
		waiting := startStalled(wctx, t, dir, opts)
		waitFor(t, "the second search to wait", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters.Len() > 0 })
		wcancel()
		if err := <-waiting.ended; !errors.Is(err, context.Canceled) {
			t.Errorf("the waiting search ended with %v, want context.Canceled", err)
		}
		cancel()
		<-s.ended
		// Either may have got bytes the other's eviction gave back.
		s.releaseAll()
		waiting.releaseAll()
		if h := b.Held(); h != 0 {
			t.Errorf("%d bytes still held", h)
		}
	})
}

// searchQueued searches as the server does: emit queues each File for a
// goroutine of its own, which releases it (after pause, if set, as a slow
// client makes sending take long).
func searchQueued(ctx context.Context, fsys fs.FS, opts Options, pause func()) ([]File, error) {
	queue := make(chan File, 64)
	released := make(chan struct{})
	go func() {
		defer close(released)
		for f := range queue {
			if pause != nil {
				pause()
			}
			f.Release()
		}
	}()
	var got []File
	_, err := Search(ctx, fsys, opts, func(f File) error {
		got = append(got, f)
		queue <- f
		return nil
	})
	close(queue)
	<-released
	return got, err
}

// Files larger than a search's bound, or than the whole budget, are
// searched all the same: each is let in when nothing else is held.
func TestFilesLargerThanTheBounds(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("match "+strings.Repeat("y", 200)+"\n", 100) // about 20 KiB
	files := map[string][]byte{}
	text := map[string]string{}
	for i := range 20 {
		content := "match small\n"
		if i%3 == 0 {
			content = big
		}
		name := fmt.Sprintf("f%02d.txt", i)
		files[name], text[name] = []byte(content), content
	}
	writeTree(t, dir, text)
	for _, tt := range []struct {
		name   string
		budget int64
		cap    int64
	}{
		{"a file larger than the search's bound", 1 << 20, 4 << 10},
		{"a file larger than the budget", 4 << 10, 1 << 10},
	} {
		t.Run(tt.name+" is searched", func(t *testing.T) {
			b := NewBudget(tt.budget)
			opts := Options{Pattern: "match", Before: 1, MaxMatches: 1 << 30, Budget: b, MaxHeldBytes: tt.cap}
			want, _ := naiveSearch(t, files, opts)
			got, err := searchQueued(context.Background(), rootFS(t, dir), opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			compareFiles(t, got, want)
			if h := b.Held(); h != 0 {
				t.Errorf("%d bytes still held", h)
			}
			if p := b.Peak(); p > b.Size() {
				t.Errorf("peak %d over the budget of %d", p, b.Size())
			}
		})
	}
}

// Results do not depend on what is evicted and read again: tight bounds, a
// caller that releases late and at random, and searches sharing a budget.
func TestTightBoundsGiveTheSameResults(t *testing.T) {
	dir := t.TempDir()
	files := randomTree(t, dir, 11, 300)
	opts := Options{Pattern: `(?i)func|main`, Before: 1, After: 1, MaxMatches: 1 << 20, Hidden: true, Workers: 4}
	want, _ := naiveSearch(t, files, opts)
	b := NewBudget(24 << 10)
	opts.Budget, opts.MaxHeldBytes = b, 8<<10
	var wg sync.WaitGroup
	results := make([][]File, 4)
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			results[i], errs[i] = searchQueued(context.Background(), rootFS(t, dir), opts, func() {
				if rng.IntN(4) == 0 {
					time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
				}
			})
		})
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		compareFiles(t, results[i], want)
	}
	if h := b.Held(); h != 0 {
		t.Errorf("%d bytes still held", h)
	}
	if p := b.Peak(); p > b.Size() {
		t.Errorf("peak %d over the budget of %d", p, b.Size())
	}
}

// Whenever a search is cancelled, it gives back all it held: what its
// workers found ahead, and what the emitting goroutine had found itself.
func TestCancelledSearchesHoldNothing(t *testing.T) {
	t.Parallel()
	dir, _ := sameFiles(t, 200)
	b := NewBudget(1 << 20)
	rng := rand.New(rand.NewPCG(7, 7))
	for _, win := range []int{1, 4, 1024} {
		for i := range 40 {
			ctx, cancel := context.WithCancel(context.Background())
			// Cancelled at a random point: before the first file, between
			// files or while one is being read.
			stop := time.AfterFunc(time.Duration(rng.IntN(2000))*time.Microsecond, cancel)
			_, err := searchQueued(ctx, rootFS(t, dir), Options{Pattern: "match", MaxMatches: 1 << 30, Workers: 1 + i%3, Budget: b, MaxHeldBytes: 64 << 10, window: win}, nil)
			stop.Stop()
			cancel()
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			if h := b.Held(); h != 0 {
				t.Fatalf("window %d, search %d: %d bytes still held after it returned (%v)", win, i, h, err)
			}
		}
	}
}
