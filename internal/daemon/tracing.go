package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
)

// Tracing is what Extras.Tracing starts: OpenTelemetry spans of every call
// and of the engine's steps, exported over OTLP.
type Tracing struct {
	// Provider records the spans; the engine is given it
	// (engine.WithTracerProvider).
	Provider trace.TracerProvider
	// ServerOptions start every call's span (a stats handler that
	// continues the caller's trace context).
	ServerOptions []grpc.ServerOption
	// Describe says where the spans go, for the log.
	Describe string
	// Shutdown sends the spans not yet sent, waiting at most until ctx
	// ends.
	Shutdown func(ctx context.Context) error
}

// TracingConfig is what serve's flags say of tracing; the standard OTEL_*
// environment variables say the rest.
type TracingConfig struct {
	Endpoint, Protocol string // --otlp-endpoint, --otlp-protocol
	Logger             *slog.Logger
}

// tracingShutdown bounds the wait, at the end, for spans to reach the
// collector: a collector that is down must not hold the process.
const tracingShutdown = 5 * time.Second

// startTracing starts the tracing the flags and the environment ask for,
// or returns nil: tracing is off by default, and in a program without
// Extras.Tracing, which refuses the flags but ignores the environment (a
// harness's OTEL_* variables must not stop the engine hashline starts).
func startTracing(c *config, logger *slog.Logger) (*Tracing, error) {
	if c.extras.Tracing == nil {
		if c.otlpEndpoint != "" || c.otlpProtocol != "" {
			return nil, fmt.Errorf("--otlp-endpoint, --otlp-protocol: %s exports no traces; run hashlined for them", c.kind)
		}
		return nil, nil
	}
	return c.extras.Tracing(TracingConfig{Endpoint: c.otlpEndpoint, Protocol: c.otlpProtocol, Logger: logger})
}

// stopTracing sends the last spans.
func stopTracing(t *Tracing, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), tracingShutdown)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		logger.Warn("sending the last spans", "err", err)
	}
}
