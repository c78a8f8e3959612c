package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/wire"
	"github.com/hashline/hashline/internal/workspace"
)

// Path limits: a longer or deeper path is refused with INVALID_PATH by the
// workspace itself (workspace.MaxPathBytes, which says why).
const (
	MaxPathBytes = workspace.MaxPathBytes
	MaxPathDepth = workspace.MaxPathDepth
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

// MaxAgentBytes bounds an agent's name: the x-agent-id a caller sends, and
// the agent names of a token file. The name is kept for as long as the
// server remembers what the agent saw, in every rate-limit bucket and log
// line, so its length is the caller's lever on the server's memory.
const MaxAgentBytes = 256

// checkAgent refuses a call whose x-agent-id (the identity it is known by
// when the server runs without tokens) is over MaxAgentBytes. With tokens
// the header is ignored, and so is its length.
func checkAgent(ctx context.Context) error {
	if grantFrom(ctx) != nil {
		return nil
	}
	for _, v := range metadata.ValueFromIncomingContext(ctx, wire.AgentMetadataKey) {
		if len(v) > MaxAgentBytes {
			return engine.OverLimit(wire.AgentMetadataKey, MaxAgentBytes,
				"the %s metadata is %d bytes, over the %d-byte limit; name the agent with a shorter id", wire.AgentMetadataKey, len(v), MaxAgentBytes)
		}
	}
	return nil
}

func agentUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := checkAgent(ctx); err != nil {
		return nil, toStatus(err)
	}
	return handler(ctx, req)
}

func agentStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := checkAgent(ss.Context()); err != nil {
		return toStatus(err)
	}
	return handler(srv, ss)
}

// DefaultStreamsPerAgent is hashlined's default bound on the streams (Grep
// and Watch calls) one agent may have open at once.
const DefaultStreamsPerAgent = 16

// StreamLimiter bounds the FileService streams (Grep and Watch) each agent
// (by AgentID) has open at once. A stream over the bound is refused with
// RESOURCE_EXHAUSTED, reason TOO_MANY_STREAMS, before it starts; a slot is
// free again when a stream's handler returns. A stream holds a goroutine
// and, until its client reads, what it has to send: unlike a unary call it
// can last as long as its client wants.
type StreamLimiter struct {
	max int

	mu sync.Mutex
	// open counts each agent's open streams; an agent with none has no
	// entry, so the map is bounded by the streams open.
	open map[string]int
}

// NewStreamLimiter returns a limiter of perAgent streams per agent (at
// least 1).
func NewStreamLimiter(perAgent int) *StreamLimiter {
	return &StreamLimiter{max: max(perAgent, 1), open: map[string]int{}}
}

// Open returns the number of streams agent has open.
func (l *StreamLimiter) Open(agent string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[agent]
}

// streamLimitError is a stream refused by the StreamLimiter.
type streamLimitError struct {
	agent string
	limit int
}

func (e *streamLimitError) Error() string {
	return fmt.Sprintf("agent %q already has %d streams (Grep or Watch) open, the most the server allows; end one (cancel a Watch you no longer need, or read a Grep to its end) and retry",
		e.agent, e.limit)
}

func (l *StreamLimiter) acquire(agent string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[agent] >= l.max {
		return &streamLimitError{agent: agent, limit: l.max}
	}
	l.open[agent]++
	return nil
}

func (l *StreamLimiter) release(agent string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[agent]--; l.open[agent] <= 0 {
		delete(l.open, agent)
	}
}

func (l *StreamLimiter) stream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if !isFileService(info.FullMethod) {
			return handler(srv, ss)
		}
		agent := AgentID(ss.Context())
		if err := l.acquire(agent); err != nil {
			return toStatus(err)
		}
		defer l.release(agent)
		return handler(srv, ss)
	}
}
