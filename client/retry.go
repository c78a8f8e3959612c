package client

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RetryPolicy says how a call is retried when the server is UNAVAILABLE
// (not listening yet, restarting, or the connection broke). No other code is
// retried, except DEADLINE_EXCEEDED from the server for Edit and Write
// while the caller's context still has time: every other error is an
// answer.
//
// Read and Grep are retried freely because they change nothing. An Edit or
// Write cut off after it was sent may have been applied, so sending it
// again must not apply it twice: with retries on, every Edit and Write
// carries a request_id (the caller's, or a random one, see NewRequestID),
// the same in every attempt, and the server answers a retry with the first
// attempt's outcome instead of applying it again. That needs a hashlined
// that knows request_id (every version since the field exists); an older
// one ignores it, so turn retries off (RetryPolicy{}) against it.
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

// unavailable allows a retry of a call that changes nothing.
// A TLS handshake that failed on a named mismatch fails the same way every
// time, so it is not retried. A closed connection that may be a TLS
// server's answer to plaintext may as well be a server restarting, and a
// handshake cut off by one says nothing certain either: those are.
func unavailable(err error) bool {
	if status.Code(err) != codes.Unavailable {
		return false
	}
	switch DiagnoseTLS(err) {
	case NoTLSProblem, ServerSpeaksTLS, OtherTLSProblem:
		return true
	}
	return false
}

// keyed allows a retry of an Edit or Write with a request_id: the server
// answers a retry with the first attempt's outcome, so a retry is safe
// whether or not the first attempt reached the server, and also after a
// deadline the server imposed.
func keyed(err error) bool {
	return unavailable(err) || status.Code(err) == codes.DeadlineExceeded
}

// do runs call, and again while mayRetry allows its error, attempts remain
// and ctx has time for the wait.
func (p RetryPolicy) do(ctx context.Context, mayRetry func(error) bool, call func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		err := call(ctx)
		if err == nil || attempt >= p.MaxAttempts || ctx.Err() != nil || !mayRetry(err) {
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

// NewRequestID returns a random request_id: 32 hex digits. Set it on an
// EditRequest or WriteRequest that you may send again yourself (after a
// DEADLINE_EXCEEDED, say) and send the same request, key included, each
// time: hashlined applies it once and answers every retry with the first
// outcome. Edit and Write set one themselves when retries are on and the
// request has none.
func NewRequestID() string {
	var b [16]byte
	crand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}
