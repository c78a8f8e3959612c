package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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
	st := status.Convert(toStatus(err))
	if st.Code() != codes.DeadlineExceeded || !strings.Contains(st.Message(), "memory budget") || !strings.Contains(st.Message(), "big.txt") {
		t.Errorf("a charge that waited past its deadline: %v, want DEADLINE_EXCEEDED naming the call and the memory budget", st)
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
