package engine

import (
	"context"
	"errors"
	"strings"
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
	b := newMemoryBudget(100)
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
