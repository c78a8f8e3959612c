package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/wire"
)

// AgentID returns the calling agent's identity: with tokens, the agent
// name of the caller's token (x-agent-id is then ignored); without, the
// x-agent-id metadata the caller chose, or "anonymous".
func AgentID(ctx context.Context) string {
	if g := grantFrom(ctx); g != nil {
		return g.Agent
	}
	// ValueFromIncomingContext looks the key up without copying the whole
	// metadata, as FromIncomingContext does; several interceptors and
	// handlers ask for the agent on every call.
	if v := metadata.ValueFromIncomingContext(ctx, wire.AgentMetadataKey); len(v) > 0 && v[0] != "" {
		return v[0]
	}
	return "anonymous"
}

// GRPCConfig holds the transport settings of NewGRPCServer.
type GRPCConfig struct {
	// MaxRecvBytes caps one request message (grpc default 4 MiB).
	MaxRecvBytes int
	// MaxSendBytes caps one response message.
	MaxSendBytes int
	// DefaultTimeout is the deadline given to calls that arrive without
	// one, Watch streams excepted (they last until cancelled); 0 leaves
	// them unbounded.
	DefaultTimeout time.Duration
	// MaxConcurrentStreams caps the calls in flight on one connection
	// (0: grpc's default, unlimited).
	MaxConcurrentStreams uint32
	// Keepalive sets the server's pings and connection ages, and
	// KeepalivePolicy what it demands of clients' pings (a client pinging
	// more often than MinTime is disconnected). Zero values keep grpc's
	// defaults.
	Keepalive       keepalive.ServerParameters
	KeepalivePolicy keepalive.EnforcementPolicy
	// Auth, when set, requires a bearer token on every call but health
	// checks and reflection, and makes the token's agent name the caller's
	// identity. Without it, callers name themselves with x-agent-id.
	Auth *Authenticator
	// RateLimit, when set, limits the calls of each agent.
	RateLimit *RateLimiter
	// StreamLimit, when set, limits the streams (Grep, Watch) each agent
	// has open at once.
	StreamLimit *StreamLimiter
	// Metrics, when set, records per-method and per-edit-outcome metrics
	// (server/metrics.New).
	Metrics Metrics
	// Tracing says that ServerOptions hold an OpenTelemetry stats handler
	// that starts a span for every call: the server then gives each span
	// the call's agent, paths and outcome (trace.go).
	Tracing bool
	// Workspace, when set, is the name of the workspace the server serves
	// (a DNS label, wire.CheckWorkspaceName): Status reports it, and a
	// FileService call whose x-hashline-workspace metadata names another is
	// refused with FAILED_PRECONDITION WRONG_WORKSPACE before anything else
	// looks at it. Without it the metadata is only checked to be a name.
	Workspace string
	// Logger receives one line per call.
	Logger *slog.Logger
	// ServerOptions are appended as given (e.g. TLS credentials).
	ServerOptions []grpc.ServerOption
}

// NewGRPCServer returns a grpc.Server with the service and health checking
// registered (server/reflection.Register adds reflection, as hashlined
// does), and the interceptor chain, outermost first: metrics (so refused calls are counted too), the workspace check
// (GRPCConfig.Workspace), authentication, the length
// of x-agent-id (before anything logs or keeps it), the span's attributes
// when tracing (so they name the authenticated agent and every refusal
// after it), logging (so the line
// names the authenticated agent), the rate limit, the streams per agent,
// the per-request access checks (read-only tokens, path prefixes, reserved
// names), the default deadline, the edit-outcome counter, and panic recovery innermost
// so a panic is logged and counted as the INTERNAL error it becomes.
func NewGRPCServer(svc *Service, cfg GRPCConfig) (*grpc.Server, *health.Server) {
	unary, stream := chains(svc, cfg)
	opts := []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...)}
	opts = append(opts, TransportOptions()...)
	opts = append(opts, grpc.MaxHeaderListSize(MaxHeaderBytes))
	if cfg.MaxRecvBytes > 0 {
		opts = append(opts, grpc.MaxRecvMsgSize(cfg.MaxRecvBytes))
	}
	if cfg.MaxSendBytes > 0 {
		opts = append(opts, grpc.MaxSendMsgSize(cfg.MaxSendBytes))
	}
	if cfg.MaxConcurrentStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(cfg.MaxConcurrentStreams))
	}
	if cfg.Keepalive != (keepalive.ServerParameters{}) {
		opts = append(opts, grpc.KeepaliveParams(cfg.Keepalive))
	}
	if cfg.KeepalivePolicy != (keepalive.EnforcementPolicy{}) {
		opts = append(opts, grpc.KeepaliveEnforcementPolicy(cfg.KeepalivePolicy))
	}
	opts = append(opts, cfg.ServerOptions...)

	gs := grpc.NewServer(opts...)
	svc.workspace = cfg.Workspace
	svc.Register(gs)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(hashlinev1.FileService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	if cfg.Metrics != nil {
		cfg.Metrics.InitializeMetrics(gs)
	}
	return gs, hs
}

// MaxHeaderBytes bounds the request headers (metadata) of one call, as
// HTTP/2 counts them (each field's name and value plus 32 bytes). grpc's
// own bound is 16 MiB a call, held in memory while the call lasts; ours
// (an agent id, a token, a request id) are a few hundred bytes. A call
// over it is reset before it reaches a handler; grpc-go clients refuse to
// send it (INTERNAL) since the server announces the bound.
const MaxHeaderBytes = 64 << 10

// flowWindow is the HTTP/2 flow-control window of every call and of every
// connection (see TransportOptions): the most grpc's dynamic windows grow
// to, so a request up to this size is sent without waiting for the server.
const flowWindow = 16 << 20

// TransportOptions cut what every call costs the server in thread wake-ups,
// which dominate a small call's time on a virtual machine (README,
// Transport):
//   - Static flow-control windows. With grpc's dynamic windows, every
//     request that carries data makes the server send a window update and
//     a ping to estimate the link's bandwidth-delay product, and read the
//     client's answer: one more write and one more wake-up per call. Our
//     calls are small and our clients mostly local, where that estimate
//     buys nothing. (Clients that keep dynamic windows still ping the
//     server after each response; client.Dial does not.)
//   - Handlers run on one worker goroutine per P, instead of a new
//     goroutine per call whose stack grows through the interceptors each
//     time. When every worker is busy (a Watch or Grep stream holds one
//     until it ends), grpc starts a goroutine for the call as before.
//
// Options in GRPCConfig.ServerOptions come later: they can change the
// window sizes and the number of workers, but not bring back dynamic
// windows.
func TransportOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.StaticStreamWindowSize(flowWindow),
		grpc.StaticConnWindowSize(flowWindow),
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
	}
}

// chains returns NewGRPCServer's interceptor chains, outermost first.
func chains(svc *Service, cfg GRPCConfig) ([]grpc.UnaryServerInterceptor, []grpc.StreamServerInterceptor) {
	logger := cfg.Logger
	if logger == nil {
		logger = svc.e.Logger()
	}
	logOpts := []logging.Option{
		logging.WithLogOnEvents(logging.FinishCall),
		logging.WithFieldsFromContext(func(ctx context.Context) logging.Fields {
			f := logging.Fields{"agent", AgentID(ctx)}
			// With tracing on, the line names the call's trace, so that a
			// log line and its spans can be found from each other.
			if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
				f = append(f, "trace_id", sc.TraceID().String())
			}
			return f
		}),
	}
	recoverOpt := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		logger.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
		return newStatus(ReasonInternal, fmt.Sprintf("internal error: %v; the server recovered, retry or report this", p), nil)
	})
	acc := newAccess(svc)
	var unary []grpc.UnaryServerInterceptor
	var stream []grpc.StreamServerInterceptor
	if cfg.Metrics != nil {
		unary = append(unary, cfg.Metrics.UnaryServerInterceptor())
		stream = append(stream, cfg.Metrics.StreamServerInterceptor())
	}
	// Before authentication: a misrouted call carries another workspace's
	// token, and its caller needs to hear that the route is wrong, not
	// that the token is.
	unary = append(unary, workspaceUnary(cfg.Workspace))
	stream = append(stream, workspaceStream(cfg.Workspace))
	if cfg.Auth != nil {
		unary = append(unary, cfg.Auth.unary())
		stream = append(stream, cfg.Auth.stream())
	}
	unary = append(unary, agentUnary)
	stream = append(stream, agentStream)
	if cfg.Tracing {
		unary = append(unary, traceUnary)
		stream = append(stream, traceStream)
	}
	unary = append(unary, logging.UnaryServerInterceptor(slogAdapter(logger), logOpts...))
	stream = append(stream, logging.StreamServerInterceptor(slogAdapter(logger), logOpts...))
	if cfg.RateLimit != nil {
		unary = append(unary, cfg.RateLimit.unary())
		stream = append(stream, cfg.RateLimit.stream())
	}
	if cfg.StreamLimit != nil {
		stream = append(stream, cfg.StreamLimit.stream())
	}
	unary = append(unary, acc.unary(), deadlineUnary(cfg.DefaultTimeout))
	stream = append(stream, acc.stream(), deadlineStream(cfg.DefaultTimeout))
	if cfg.Metrics != nil {
		unary = append(unary, editOutcomes(cfg.Metrics))
	}
	unary = append(unary, recovery.UnaryServerInterceptor(recoverOpt))
	stream = append(stream, recovery.StreamServerInterceptor(recoverOpt))

	return unary, stream
}

// slogAdapter lets the middleware log through our injected slog.Logger.
func slogAdapter(l *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		l.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}

func deadlineUnary(d time.Duration) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if _, ok := ctx.Deadline(); ok || d <= 0 {
			return handler(ctx, req)
		}
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return handler(ctx, req)
	}
}

func deadlineStream(d time.Duration) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		// A Watch stream lasts until the client cancels it; a default
		// deadline would cut every subscription after a minute.
		if _, ok := ss.Context().Deadline(); ok || d <= 0 || info.FullMethod == hashlinev1.FileService_Watch_FullMethodName {
			return handler(srv, ss)
		}
		ctx, cancel := context.WithTimeout(ss.Context(), d)
		defer cancel()
		return handler(srv, &ctxStream{ServerStream: ss, ctx: ctx})
	}
}

type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }
