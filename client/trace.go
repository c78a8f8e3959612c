package client

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
)

// WithPropagator sets how a call carries its caller's trace context to the
// server: p injects it into the call's metadata (propagation.TraceContext{}
// sends W3C traceparent and tracestate, which hashlined reads when it
// traces). By default the client uses OpenTelemetry's global propagator
// (otel.SetTextMapPropagator), read at each call, which does nothing until
// the program sets one.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(o *options) { o.propagator = p }
}

// traceContext adds the trace context of ctx's span to the call's
// metadata. A context without a span (every call of a program that does
// not trace) costs one context lookup and nothing else.
func (c *Client) traceContext(ctx context.Context) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	p := c.propagator
	if p == nil {
		p = otel.GetTextMapPropagator()
	}
	carrier := propagation.MapCarrier{}
	p.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return ctx
	}
	kv := make([]string, 0, 2*len(carrier))
	for k, v := range carrier {
		// gRPC metadata keys are lower case.
		kv = append(kv, strings.ToLower(k), v)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}
