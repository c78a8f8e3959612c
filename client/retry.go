package client

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// RetryPolicy says how a call is retried while the server is UNAVAILABLE
// (not listening yet, restarting, or the connection broke). No other code is
// ever retried: every other error is an answer.
//
// Read and Grep are retried freely because they change nothing. Edit and
// Write are retried only when the failed attempt never left this process
// (the connection was refused or not ready, so no request was written to
// it): an attempt cut off after it was sent may have been applied, and
// sending it again could apply it twice — an InsertAfter would insert its
// lines twice. Such a failure is returned as an *Error with code
// Unavailable; Read the file to see whether the edit landed.
type RetryPolicy struct {
	// MaxAttempts counts the first call; 0 or 1 means no retries.
	MaxAttempts int
	// InitialBackoff is the wait before the first retry; later waits grow
	// by Multiplier up to MaxBackoff, each with up to 20% random jitter.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Multiplier     float64
}

// DefaultRetryPolicy retries up to 4 attempts over about 1.5s, which rides
// out a server restart without hiding a server that is down.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second, Multiplier: 3}

// backoff returns the wait before retry n (1-based).
func (p RetryPolicy) backoff(n int) time.Duration {
	d := float64(p.InitialBackoff)
	mult := p.Multiplier
	if mult < 1 {
		mult = 1
	}
	for i := 1; i < n; i++ {
		d *= mult
	}
	if p.MaxBackoff > 0 && d > float64(p.MaxBackoff) {
		d = float64(p.MaxBackoff)
	}
	return time.Duration(d * (1 + 0.2*rand.Float64()))
}

// idempotent allows a retry whether or not the request was sent.
func idempotent(sent bool) bool { return true }

// unsentOnly allows a retry only when the attempt never reached a
// transport, and only on connections whose stats handler reports that.
func (c *Client) unsentOnly() func(sent bool) bool {
	if !c.tracked {
		return func(bool) bool { return false }
	}
	return func(sent bool) bool { return !sent }
}

// do runs call, and again while it fails with UNAVAILABLE, mayRetry allows
// it, attempts remain and ctx has time for the wait.
func (p RetryPolicy) do(ctx context.Context, mayRetry func(sent bool) bool, call func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		sent := new(atomic.Bool)
		err := call(context.WithValue(ctx, sentKey{}, sent))
		if err == nil || status.Code(err) != codes.Unavailable || attempt >= p.MaxAttempts || !mayRetry(sent.Load()) {
			return err
		}
		wait := p.backoff(attempt)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

type sentKey struct{}

// sentTracker is a grpc stats handler that marks a call's attempt as sent
// once its headers are queued on a connection: from then on the server may
// see the request. Failures before that (no connection, connection
// refused) leave the mark unset.
type sentTracker struct{}

func (sentTracker) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

func (sentTracker) HandleRPC(ctx context.Context, s stats.RPCStats) {
	switch s.(type) {
	case *stats.OutHeader, *stats.OutPayload:
		if sent, ok := ctx.Value(sentKey{}).(*atomic.Bool); ok {
			sent.Store(true)
		}
	}
}

func (sentTracker) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

func (sentTracker) HandleConn(context.Context, stats.ConnStats) {}
