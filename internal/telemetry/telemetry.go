// Package telemetry is hashlined's OpenTelemetry tracing: the SDK's tracer
// provider with an OTLP exporter (gRPC or HTTP), configured by hashlined's
// --otlp-endpoint and --otlp-protocol and by the standard OTEL_*
// environment variables, and the gRPC stats handler that continues each
// caller's W3C trace context and starts a span for every call.
//
// Only hashlined links it (daemon.Extras.Tracing): the SDK, the exporters
// and the gRPC instrumentation stay out of the hashline CLI and of the Go
// client. The engine and the server speak the trace API alone, and are
// given the provider New makes; nothing here sets OpenTelemetry's global
// provider, propagator or error handler.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/server"
)

// The protocols of OTEL_EXPORTER_OTLP_PROTOCOL this package exports with.
const (
	ProtocolGRPC         = "grpc"
	ProtocolHTTPProtobuf = "http/protobuf"
)

// ServiceName is the service.name of hashlined's spans unless
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) says
// otherwise.
const ServiceName = "hashlined"

// Config is what hashlined's flags say; everything else comes from the
// OTEL_* environment variables the SDK and the OTLP exporters read.
type Config struct {
	// Endpoint is --otlp-endpoint: the collector's URL, http:// (plaintext)
	// or https://, as OTEL_EXPORTER_OTLP_ENDPOINT gives it (over HTTP the
	// spans go to its path and /v1/traces). It turns tracing on and wins
	// over the environment's endpoints; "" leaves them to the environment.
	Endpoint string
	// Protocol is --otlp-protocol: grpc or http/protobuf; ""
	// is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
	// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the OTLP
	// specification's default).
	Protocol string
	// ServiceVersion is service.version.
	ServiceVersion string
	// Logger receives the failures of exports (the first of a run of
	// them, and the recovery) and why tracing is off when asked for.
	Logger *slog.Logger
}

// Tracing is a running tracer provider and its exporter.
type Tracing struct {
	provider   *sdktrace.TracerProvider
	propagator propagation.TextMapPropagator
	// Protocol and Endpoint are what the spans are sent over and to
	// ("" for the exporter's default endpoint).
	Protocol, Endpoint string
}

// env reads an environment variable, blank as unset.
func env(key string) string { return strings.TrimSpace(os.Getenv(key)) }

// New starts tracing as cfg and the environment say, or returns nil when
// they leave it off: tracing is on when an endpoint is given, by
// cfg.Endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT, unless OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none. A setting it cannot honour is an error, not
// a silent default.
func New(ctx context.Context, cfg Config) (*Tracing, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Endpoint != "" {
		if err := checkEndpoint(cfg.Endpoint); err != nil {
			return nil, fmt.Errorf("--otlp-endpoint %q: %w", cfg.Endpoint, err)
		}
	}
	protocol, err := resolveProtocol(cfg.Protocol)
	if err != nil {
		return nil, err
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	}
	if endpoint == "" {
		endpoint = env("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint == "" {
		if cfg.Protocol != "" {
			return nil, fmt.Errorf("--otlp-protocol %s: no collector to send spans to; give --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT)", cfg.Protocol)
		}
		return nil, nil
	}
	if v := env("OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		logger.Info("tracing is off: OTEL_SDK_DISABLED=true", "endpoint", endpoint)
		return nil, nil
	}
	switch v := strings.ToLower(env("OTEL_TRACES_EXPORTER")); v {
	case "", "otlp":
	case "none":
		logger.Info("tracing is off: OTEL_TRACES_EXPORTER=none", "endpoint", endpoint)
		return nil, nil
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: hashlined exports traces over OTLP only; set otlp, or none to turn tracing off", v)
	}
	if err := checkSampler(); err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(ServiceName), semconv.ServiceVersion(cfg.ServiceVersion)),
		resource.WithTelemetrySDK(),
		// Last, so that OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("the resource of hashlined's spans (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): %w", err)
	}
	exp, err := newExporter(ctx, protocol, cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("the OTLP %s exporter: %w", protocol, err)
	}
	// The SDK reads OTEL_TRACES_SAMPLER (default parent-based, always on)
	// and the batch processor's OTEL_BSP_* itself.
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithBatcher(&loggedExporter{SpanExporter: exp, logger: logger, protocol: protocol, endpoint: endpoint}),
	)
	return &Tracing{provider: tp, propagator: propagation.TraceContext{}, Protocol: protocol, Endpoint: endpoint}, nil
}

// checkEndpoint accepts a collector's URL as OTEL_EXPORTER_OTLP_ENDPOINT
// has it: http:// or https://, with a host.
func checkEndpoint(endpoint string) error {
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want the collector's URL, http://host:port (plaintext) or https://host:port (TLS)")
	}
	return nil
}

// resolveProtocol is the protocol flag's, or the environment's, checked.
func resolveProtocol(flag string) (string, error) {
	p, from := flag, "--otlp-protocol"
	for _, key := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p == "" {
			p, from = env(key), key+"="
		}
	}
	switch p {
	case "":
		return ProtocolHTTPProtobuf, nil
	case ProtocolGRPC, ProtocolHTTPProtobuf:
		return p, nil
	}
	if from == "--otlp-protocol" {
		from += " "
	}
	return "", fmt.Errorf("%s%s: want grpc or http/protobuf", from, p)
}

// checkSampler refuses an OTEL_TRACES_SAMPLER the SDK does not have, which
// it would otherwise replace by its default with a line on stderr.
func checkSampler() error {
	s := strings.ToLower(env("OTEL_TRACES_SAMPLER"))
	switch s {
	case "", "always_on", "always_off", "parentbased_always_on", "parentbased_always_off":
		return nil
	case "traceidratio", "parentbased_traceidratio":
		arg := env("OTEL_TRACES_SAMPLER_ARG")
		if arg == "" {
			return nil
		}
		if r, err := strconv.ParseFloat(arg, 64); err != nil || r < 0 || r > 1 {
			return fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%s: want a ratio from 0 to 1", arg)
		}
		return nil
	}
	return fmt.Errorf("OTEL_TRACES_SAMPLER=%s: want always_on, always_off, traceidratio, parentbased_always_on (the default), parentbased_always_off or parentbased_traceidratio", s)
}

// newExporter makes the exporter of protocol. The exporters read the rest
// of OTEL_EXPORTER_OTLP_* (headers, TLS files, compression, timeout)
// themselves; endpoint, when given, wins over the environment's.
func newExporter(ctx context.Context, protocol, endpoint string) (sdktrace.SpanExporter, error) {
	if protocol == ProtocolGRPC {
		var opts []otlptracegrpc.Option
		if endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	// Protobuf whatever the environment's protocol says (it may name
	// grpc, which --otlp-protocol overrode).
	opts := []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf)}
	if endpoint != "" {
		// As OTEL_EXPORTER_OTLP_ENDPOINT: a base URL, the signal's path
		// after it.
		u, _ := url.Parse(endpoint)
		u.Path = path.Join("/", u.Path, "v1/traces")
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	}
	return otlptracehttp.New(ctx, opts...)
}

// TracerProvider is the provider of hashlined's spans, for the engine.
func (t *Tracing) TracerProvider() trace.TracerProvider { return t.provider }

// ServerOption is the gRPC server's stats handler: it continues the W3C
// trace context (traceparent) of each call and starts the call's span.
// Health checks, which probes make every few seconds, are not traced.
func (t *Tracing) ServerOption() grpc.ServerOption {
	h := otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(t.provider),
		otelgrpc.WithPropagators(t.propagator),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
	)
	return grpc.StatsHandler(quietStatus{h})
}

// Shutdown sends the spans not yet sent and stops the exporter, waiting
// at most until ctx ends.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }

// String says where spans go, for the log.
func (t *Tracing) String() string {
	e := t.Endpoint
	if e == "" {
		e = "the exporter's default endpoint"
	}
	return "otlp " + t.Protocol + " " + e
}

// quietStatus keeps the message of a failed call's status out of its span:
// the stats handler records it for some codes (INTERNAL, UNKNOWN,
// DEADLINE_EXCEEDED...), and a refusal's message may quote the file. The
// span's status keeps the code, with the reason as its description.
type quietStatus struct{ stats.Handler }

func (h quietStatus) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if end, ok := s.(*stats.End); ok && end.Error != nil {
		st := status.Convert(end.Error)
		msg := server.StatusReason(end.Error)
		if msg == "" {
			msg = st.Code().String()
		}
		quiet := *end
		quiet.Error = status.Error(st.Code(), msg)
		s = &quiet
	}
	h.Handler.HandleRPC(ctx, s)
}

// loggedExporter logs the first failed export of a run of them, and the
// export that ends the run, on hashlined's log; the batch processor then
// drops the spans, as it does anyway, without a line of its own on
// stderr (it would tell OpenTelemetry's global error handler, which
// hashlined leaves alone).
type loggedExporter struct {
	sdktrace.SpanExporter
	logger             *slog.Logger
	protocol, endpoint string
	failing            atomic.Bool
}

func (e *loggedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		if !e.failing.Swap(true) {
			e.logger.Warn("exporting spans failed; spans are dropped until the collector takes them again", "protocol", e.protocol, "endpoint", e.endpoint, "err", err)
		}
		return nil
	}
	if e.failing.Swap(false) {
		e.logger.Info("exporting spans again", "protocol", e.protocol, "endpoint", e.endpoint)
	}
	return nil
}
