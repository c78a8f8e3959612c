package server

import (
	"fmt"
	"testing"
	"time"
)

// TestRateLimiterKeepsABoundedNumberOfBuckets drives more agents than the
// bound through a limiter with a frozen clock.
func TestRateLimiterKeepsABoundedNumberOfBuckets(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewRateLimiter(1, 2, 3)
	l.now = func() time.Time { return now }
	for i := range 10 {
		if err := l.allow(fmt.Sprint("agent-", i)); err != nil {
			t.Fatalf("first call of agent %d: %v", i, err)
		}
		if n := len(l.buckets); n > 3 {
			t.Fatalf("%d buckets after %d agents, bound 3", n, i+1)
		}
	}
	// Eviction drops refilled buckets first: a drained one is kept, so an
	// agent cannot reset its own bucket by making others appear.
	l = NewRateLimiter(1, 1, 2)
	l.now = func() time.Time { return now }
	_ = l.allow("idle")
	now = now.Add(10 * time.Second) // "idle" refills
	_ = l.allow("busy")             // "busy" is drained
	_ = l.allow("new")              // the map is full: "idle" goes
	if _, ok := l.buckets["idle"]; ok {
		t.Error("the refilled bucket was kept")
	}
	if err := l.allow("busy"); err == nil {
		t.Error("the drained bucket was evicted and started over full")
	}
}

func TestRateLimitErrorSaysWhenToRetry(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewRateLimiter(4, 1, 0)
	l.now = func() time.Time { return now }
	if err := l.allow("a"); err != nil {
		t.Fatal(err)
	}
	err := l.allow("a")
	re, ok := err.(*rateLimitError)
	if !ok || re.retryAfter != 250*time.Millisecond {
		t.Fatalf("err = %#v, want a retry after 250ms", err)
	}
	// A refused call takes no token: after the delay exactly one call fits.
	now = now.Add(re.retryAfter)
	if err := l.allow("a"); err != nil {
		t.Errorf("after the retry delay: %v", err)
	}
	if err := l.allow("a"); err == nil {
		t.Error("a second call right after was allowed")
	}
}
