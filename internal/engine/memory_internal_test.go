package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/workspace"
)

// TestMemoryBudgetQueuesCallsAndSaysWhyOneGaveUp checks the budget's three
// answers: a charge that fits is granted at once, one that does not waits
// for a release (or fails with its context, as DEADLINE_EXCEEDED saying
// what it waited for), and one larger than the whole budget is TOO_LARGE
// without waiting.
func TestMemoryBudgetQueuesCallsAndSaysWhyOneGaveUp(t *testing.T) {
	b := newMemoryBudget(100, nil)
	release, err := b.acquire(context.Background(), "first", 60)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = b.acquire(ctx, "this Read of big.txt", 60)
	if !errors.As(err, new(*MemoryWaitError)) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "memory budget") || !strings.Contains(err.Error(), "big.txt") {
		t.Errorf("a charge that waited past its deadline: %v, want a deadline error naming the call and the memory budget", err)
	}
	granted := make(chan func())
	go func() {
		r, err := b.acquire(context.Background(), "second", 60)
		if err != nil {
			t.Error(err)
		}
		granted <- r
	}()
	release()
	(<-granted)()
	if _, err := b.acquire(context.Background(), "huge", 101); !errors.Is(err, workspace.ErrTooLarge) {
		t.Errorf("a charge larger than the budget: %v, want ErrTooLarge", err)
	}
}

// Many calls charging the budget at once, large and small: largeCalls is
// told true and false in turn, starting with true and ending with false,
// true whenever a large call holds its charge.
func TestLargeCallsAlternateWhateverTheCallsOverlap(t *testing.T) {
	t.Parallel()
	var events []bool
	b := newMemoryBudget(64*LargeCallBytes, func(inFlight bool) { events = append(events, inFlight) }) // told under b.mu
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 200 {
				n := int64(LargeCallBytes)
				if (i+j)%3 == 0 {
					n = 4096
				}
				release, err := b.acquire(context.Background(), "call", n)
				if err != nil {
					t.Error(err)
					return
				}
				if n >= LargeCallBytes {
					b.mu.Lock()
					if len(events) == 0 || !events[len(events)-1] {
						t.Error("a large call holds its charge and the last thing told is not true")
					}
					b.mu.Unlock()
				}
				release()
			}
		})
	}
	wg.Wait()
	if len(events) == 0 || len(events)%2 != 0 {
		t.Fatalf("told %d times, want an even number > 0", len(events))
	}
	for i, ev := range events {
		if ev != (i%2 == 0) {
			t.Fatalf("told %v at %d: not true and false in turn", ev, i)
		}
	}
}
