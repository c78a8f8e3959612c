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
