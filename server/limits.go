package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// DefaultRateMaxAgents bounds the number of per-agent token buckets a
// RateLimiter keeps.
const DefaultRateMaxAgents = 10000

// RateLimiter gives every agent (by AgentID) its own token bucket: calls
// refill at Rate per second up to Burst. A call that finds the bucket empty
// is refused with RESOURCE_EXHAUSTED, reason RATE_LIMITED, and a RetryInfo
// saying when a token will be there; it is not queued. Only FileService
// calls count (health checks and reflection do not); a stream counts once,
// when it starts.
type RateLimiter struct {
	rate      rate.Limit
	burst     int
	maxAgents int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	now     func() time.Time // for tests
}

// NewRateLimiter returns a limiter of perSecond calls per agent with bursts
// of burst (at least 1). maxAgents bounds the buckets kept (<= 0 means
// DefaultRateMaxAgents); past it, buckets that are full again are dropped,
// and if none is, an arbitrary one: a bucket that starts over full only
// ever lets an agent through sooner, never later.
func NewRateLimiter(perSecond float64, burst, maxAgents int) *RateLimiter {
	if burst < 1 {
		burst = 1
	}
	if maxAgents <= 0 {
		maxAgents = DefaultRateMaxAgents
	}
	return &RateLimiter{rate: rate.Limit(perSecond), burst: burst, maxAgents: maxAgents,
		buckets: map[string]*rate.Limiter{}, now: time.Now}
}

// rateLimitError is a call refused by the rate limiter.
type rateLimitError struct {
	agent      string
	retryAfter time.Duration
	perSecond  float64
	burst      int
}

func (e *rateLimitError) Error() string {
	return fmt.Sprintf("agent %q is over its rate limit of %g calls per second (bursts of %d); retry in %s",
		e.agent, e.perSecond, e.burst, e.retryAfter.Round(time.Millisecond))
}

// allow takes a token from agent's bucket, or says how long until there is
// one.
func (l *RateLimiter) allow(agent string) error {
	now := l.now()
	l.mu.Lock()
	b := l.buckets[agent]
	if b == nil {
		if len(l.buckets) >= l.maxAgents {
			l.evict(now)
		}
		b = rate.NewLimiter(l.rate, l.burst)
		l.buckets[agent] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if !r.OK() {
		// Rate 0 with a burst the call cannot fit; NewRateLimiter keeps
		// burst >= 1, so this means the bucket is disabled.
		return &rateLimitError{agent: agent, retryAfter: time.Second, perSecond: float64(l.rate), burst: l.burst}
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &rateLimitError{agent: agent, retryAfter: d, perSecond: float64(l.rate), burst: l.burst}
	}
	return nil
}

// evict drops the buckets that have refilled (they hold nothing a fresh
// one would not), or one bucket if none has. l.mu is held.
func (l *RateLimiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < l.maxAgents {
			break
		}
		delete(l.buckets, k)
	}
}

// isFileService reports whether a full method name is one of FileService's.
func isFileService(method string) bool {
	return strings.HasPrefix(method, "/"+hashlinev1.FileService_ServiceDesc.ServiceName+"/")
}

func (l *RateLimiter) unary() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if isFileService(info.FullMethod) {
			if err := l.allow(AgentID(ctx)); err != nil {
				return nil, toStatus(err)
			}
		}
		return handler(ctx, req)
	}
}

func (l *RateLimiter) stream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if isFileService(info.FullMethod) {
			if err := l.allow(AgentID(ss.Context())); err != nil {
				return toStatus(err)
			}
		}
		return handler(srv, ss)
	}
}
