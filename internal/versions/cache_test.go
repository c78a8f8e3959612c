package versions_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

func sized(n int) *hashline.Document {
	return hashline.ParseDocument([]byte(strings.Repeat("x", n-1) + "\n"))
}

func TestCacheEvictsLeastRecentlyUsedWithinBudget(t *testing.T) {
	d := sized(1000)
	one := versions.Size("v1", d)
	c := versions.NewCache(3 * one)
	c.Put("v1", d)
	c.Put("v2", d)
	c.Put("v3", d)
	if _, ok := c.Get("v1"); !ok { // v1 is now the most recent
		t.Fatal("v1 missing before the budget was reached")
	}
	c.Put("v4", d) // evicts v2, the least recently used
	for v, want := range map[string]bool{"v1": true, "v2": false, "v3": true, "v4": true} {
		if _, ok := c.Get(v); ok != want {
			t.Errorf("Get(%s) found = %v, want %v", v, ok, want)
		}
	}
	s := c.Stats()
	want := versions.Stats{Hits: 4, Misses: 1, Evictions: 1, Bytes: 3 * one, Entries: 3, MaxBytes: 3 * one}
	if s != want {
		t.Errorf("stats = %+v, want %+v", s, want)
	}
}

func TestCachePutIsIdempotentAndRefreshes(t *testing.T) {
	d := sized(100)
	c := versions.NewCache(2 * versions.Size("v1", d))
	c.Put("v1", d)
	c.Put("v2", d)
	c.Put("v1", d) // refresh, not a second copy
	c.Put("v3", d) // evicts v2
	if _, ok := c.Get("v2"); ok {
		t.Error("v2 survived; re-putting v1 did not refresh it")
	}
	if s := c.Stats(); s.Entries != 2 || s.Bytes != 2*versions.Size("v1", d) {
		t.Errorf("stats = %+v", s)
	}
}

func TestCacheTouchRefreshesWithoutCounting(t *testing.T) {
	d := sized(100)
	c := versions.NewCache(2 * versions.Size("v1", d))
	c.Put("v1", d)
	c.Put("v2", d)
	if !c.Touch("v1") || c.Touch("v9") {
		t.Fatal("Touch reports a held version as missing or a missing one as held")
	}
	c.Put("v3", d) // evicts v2: touching v1 refreshed it
	if _, ok := c.Get("v2"); ok {
		t.Error("v2 survived; Touch did not refresh v1")
	}
	if s := c.Stats(); s.Hits != 0 || s.Misses != 1 || s.Entries != 2 {
		t.Errorf("stats = %+v, want Touch to count neither hits nor misses", s)
	}
}

func TestCacheKeepsNothingOverBudget(t *testing.T) {
	big := sized(10_000)
	c := versions.NewCache(1000)
	c.Put("big", big)
	if _, ok := c.Get("big"); ok {
		t.Error("a snapshot larger than the whole budget was kept")
	}
	off := versions.NewCache(0)
	off.Put("v", sized(10))
	if _, ok := off.Get("v"); ok || off.Stats().Entries != 0 {
		t.Error("a zero budget kept a snapshot")
	}
}

func TestCacheIsSafeForConcurrentUse(t *testing.T) {
	c := versions.NewCache(50 * versions.Size("v00", sized(100)))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				v := fmt.Sprintf("v%02d", (g*7+i)%80)
				if d, ok := c.Get(v); ok && d.Len() != 1 {
					t.Errorf("Get(%s) returned another document", v)
				}
				c.Put(v, sized(100))
			}
		}()
	}
	wg.Wait()
	s := c.Stats()
	if s.Bytes > s.MaxBytes || s.Entries > 50 || s.Hits+s.Misses != 4000 {
		t.Errorf("stats after the run: %+v", s)
	}
}

func TestViewsRememberTheLastVersionPerAgentAndFile(t *testing.T) {
	v := versions.NewViews(2, 0)
	v.See("a", "f", "v1")
	v.See("a", "f", "v2")
	v.See("b", "f", "v1")
	if got, ok := v.Seen("a", "f"); !ok || got != "v2" {
		t.Errorf("a saw %q %v, want v2", got, ok)
	}
	v.See("a", "g", "v9") // evicts (b, f), the least recently used
	if _, ok := v.Seen("b", "f"); ok {
		t.Error("(b, f) survived past the bound")
	}
	if got, ok := v.Seen("a", "g"); !ok || got != "v9" {
		t.Errorf("a saw g %q %v", got, ok)
	}
	if s := v.Stats(); s != (versions.ViewStats{Entries: 2, Bytes: 2 * (1 + 1 + 2 + versions.ViewEntryOverhead), Evictions: 1,
		MaxEntries: 2, MaxBytes: versions.DefaultViewBytes}) {
		t.Errorf("stats = %+v", s)
	}
	if _, ok := v.Seen("nobody", "f"); ok {
		t.Error("an unknown agent has a view")
	}
}

func TestViewsAreBoundedInBytes(t *testing.T) {
	const maxBytes = 64 << 10
	t.Run("many agents with long names stay under the bound, the oldest forgotten first", func(t *testing.T) {
		v := versions.NewViews(1_000_000, maxBytes)
		agent := func(i int) string { return fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 1000)) }
		for i := range 1000 {
			v.See(agent(i), "src/main.go", "v2-0123456789abcdef0123456789abcdef")
			if s := v.Stats(); s.Bytes > maxBytes {
				t.Fatalf("after %d agents: %d bytes, over the bound of %d", i+1, s.Bytes, maxBytes)
			}
		}
		s := v.Stats()
		if s.Entries >= 100 || s.Entries < 10 || s.Evictions != uint64(1000-s.Entries) {
			t.Fatalf("stats %+v: want a few dozen entries of ~1.2 KB, the rest evicted", s)
		}
		if _, ok := v.Seen(agent(0), "src/main.go"); ok {
			t.Error("the oldest agent's view survived")
		}
		if _, ok := v.Seen(agent(999), "src/main.go"); !ok {
			t.Error("the newest agent's view was forgotten")
		}
	})
	t.Run("a version seen again is counted by its new size", func(t *testing.T) {
		v := versions.NewViews(10, maxBytes)
		v.See("a", "f", "v1")
		v.See("a", "f", "v22")
		if s := v.Stats(); s.Entries != 1 || s.Bytes != 1+1+3+versions.ViewEntryOverhead {
			t.Errorf("stats %+v", s)
		}
	})
	t.Run("a single pair larger than the bound is kept alone", func(t *testing.T) {
		v := versions.NewViews(10, 1000)
		v.See("a", "f", "v1")
		v.See(strings.Repeat("a", 2000), "f", "v1")
		if s := v.Stats(); s.Entries != 1 || s.Evictions != 1 {
			t.Errorf("stats %+v", s)
		}
		if _, ok := v.Seen(strings.Repeat("a", 2000), "f"); !ok {
			t.Error("the pair just seen was forgotten")
		}
	})
}

func TestCachePeekFindsWithoutCounting(t *testing.T) {
	d := sized(100)
	c := versions.NewCache(2 * versions.Size("v1", d))
	c.Put("v1", d)
	c.Put("v2", d)
	if got, ok := c.Peek("v1"); !ok || got != d {
		t.Fatal("Peek missed a held version")
	}
	if _, ok := c.Peek("v9"); ok {
		t.Fatal("Peek found a version never put")
	}
	c.Put("v3", d) // evicts v2: peeking v1 refreshed it
	if _, ok := c.Peek("v2"); ok {
		t.Error("v2 survived; Peek did not refresh v1")
	}
	if s := c.Stats(); s.Hits != 0 || s.Misses != 0 {
		t.Errorf("stats = %+v, want Peek counted in neither hits nor misses", s)
	}
}
