package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// tracedServer serves dir as hashlined --otlp-endpoint does, its spans
// recorded by rec: the server's stats handler continues W3C trace context.
func tracedServer(t *testing.T, rec *tracetest.SpanRecorder) string {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{
		Tracing: true,
		ServerOptions: []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
			otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagation.TraceContext{})))},
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(func() { gs.Stop(); ws.Close() })
	return lis.Addr().String()
}

// A call under a span carries its trace context to the server, through
// the propagator given (WithPropagator) or else the global one; a call
// under no span carries none, and the server's span starts a trace.
func TestTraceContextPropagation(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	addr := tracedServer(t, rec)
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	status := func(c *client.Client, ctx context.Context) trace.SpanContext {
		t.Helper()
		before := len(rec.Ended())
		if _, err := c.Status(ctx); err != nil {
			t.Fatal(err)
		}
		// The server ends its span after the response has gone.
		for deadline := time.Now().Add(5 * time.Second); len(rec.Ended()) == before; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the server recorded no span")
			}
		}
		s := rec.Ended()[before]
		return s.Parent()
	}

	explicit, err := client.Dial(addr, client.WithAgentID("a"), client.WithPropagator(propagation.TraceContext{}))
	if err != nil {
		t.Fatal(err)
	}
	defer explicit.Close()
	global, err := client.Dial(addr, client.WithAgentID("a"))
	if err != nil {
		t.Fatal(err)
	}
	defer global.Close()

	sctx, span := tp.Tracer("test").Start(ctx, "agent step")
	defer span.End()
	if p := status(explicit, sctx); p.TraceID() != span.SpanContext().TraceID() || p.SpanID() != span.SpanContext().SpanID() || !p.IsRemote() {
		t.Errorf("WithPropagator: the server's span has parent %+v, want the caller's span %+v", p, span.SpanContext())
	}
	if p := status(explicit, ctx); p.IsValid() {
		t.Errorf("a call under no span: the server's span has parent %+v, want none", p)
	}
	// OpenTelemetry's global propagator does nothing until a program sets
	// one; the client reads it at each call.
	// Once set, it cannot be unset (a run of this test before, with
	// -count, set it): only a process that never set it is checked.
	if len(otel.GetTextMapPropagator().Fields()) == 0 {
		if p := status(global, sctx); p.IsValid() {
			t.Errorf("the global propagator, unset: parent %+v, want none", p)
		}
	}
	prev := otel.GetTextMapPropagator()
	otel.SetTextMapPropagator(propagation.TraceContext{})
	defer otel.SetTextMapPropagator(prev)
	if p := status(global, sctx); p.TraceID() != span.SpanContext().TraceID() || p.SpanID() != span.SpanContext().SpanID() {
		t.Errorf("the global propagator, set: parent %+v, want the caller's span %+v", p, span.SpanContext())
	}
	// Watch is a stream of its own, under the caller's span too.
	wctx, stop := context.WithCancel(sctx)
	done := make(chan error, 1)
	before := len(rec.Ended())
	go func() {
		done <- explicit.Watch(wctx, &hashlinev1.WatchRequest{}, func(*hashlinev1.WatchResponse) error { return nil })
	}()
	time.Sleep(200 * time.Millisecond)
	stop()
	<-done
	for deadline := time.Now().Add(5 * time.Second); len(rec.Ended()) == before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server recorded no span of the Watch")
		}
	}
	if s := rec.Ended()[before]; s.Name() != "hashline.v1.FileService/Watch" || s.Parent().SpanID() != span.SpanContext().SpanID() {
		t.Errorf("Watch span %s, parent %+v", s.Name(), s.Parent())
	}
}
