package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/otlptest"
)

// otelVars are the variables these tests set; each test starts with all
// of them blank (unset, as New reads them), whatever the environment the
// tests run in has.
var otelVars = []string{
	"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION",
}

func cleanEnv(t *testing.T) {
	for _, k := range otelVars {
		t.Setenv(k, "")
	}
}

func receiver(t *testing.T) *otlptest.Receiver {
	t.Helper()
	r, err := otlptest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// emit records one span named name with tr and stops tr, which sends it.
func emit(t *testing.T, tr *Tracing, name string) {
	t.Helper()
	_, span := tr.TracerProvider().Tracer("test").Start(context.Background(), name)
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestOffUnlessAnEndpointIsGiven(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x=y")
	tr, err := New(context.Background(), Config{})
	if tr != nil || err != nil {
		t.Fatalf("New with no endpoint = %v, %v; want off", tr, err)
	}
}

// --otlp-endpoint, over each protocol: the span arrives by that protocol,
// from service hashlined (version as given).
func TestEndpointFlag(t *testing.T) {
	cleanEnv(t)
	r := receiver(t)
	for _, tc := range []struct{ protocol, endpoint string }{
		{"grpc", "http://" + r.GRPCAddr},
		{"http/protobuf", r.HTTPURL},
		{"", r.HTTPURL}, // the specification's default
	} {
		tr, err := New(context.Background(), Config{Endpoint: tc.endpoint, Protocol: tc.protocol, ServiceVersion: "v9"})
		if err != nil || tr == nil {
			t.Fatalf("%q %s: %v, %v", tc.protocol, tc.endpoint, tr, err)
		}
		want := tc.protocol
		if want == "" {
			want = "http/protobuf"
		}
		if tr.Protocol != want || tr.String() != "otlp "+want+" "+tc.endpoint {
			t.Errorf("%q: protocol %q, described as %q", tc.protocol, tr.Protocol, tr)
		}
		emit(t, tr, "span-"+want+tc.protocol)
		spans := r.Spans()
		last := spans[len(spans)-1]
		if last.Name != "span-"+want+tc.protocol || last.Protocol != want || last.Resource["service.name"] != "hashlined" || last.Resource["service.version"] != "v9" {
			t.Errorf("%q: last span received %+v", tc.protocol, last)
		}
	}
}

// The standard variables: the endpoints (the per-signal one as it is, the
// general one with /v1/traces after it), the protocols, the service name
// and resource attributes; --otlp-endpoint and --otlp-protocol win.
func TestEnvironment(t *testing.T) {
	cleanEnv(t)
	r := receiver(t)
	t.Setenv("OTEL_SERVICE_NAME", "edit-farm")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.HTTPURL)
	tr, err := New(context.Background(), Config{})
	if err != nil || tr == nil {
		t.Fatalf("OTEL_EXPORTER_OTLP_ENDPOINT: %v, %v", tr, err)
	}
	emit(t, tr, "general")

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://"+r.GRPCAddr)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc")
	tr, err = New(context.Background(), Config{})
	if err != nil || tr == nil || tr.Protocol != "grpc" {
		t.Fatalf("OTEL_EXPORTER_OTLP_TRACES_*: %v, %v", tr, err)
	}
	emit(t, tr, "per-signal")

	// The flags win: HTTP to the HTTP receiver although the environment
	// names the gRPC one.
	tr, err = New(context.Background(), Config{Endpoint: r.HTTPURL, Protocol: "http/protobuf"})
	if err != nil || tr == nil {
		t.Fatalf("flags over the environment: %v, %v", tr, err)
	}
	emit(t, tr, "flags")

	got := map[string]otlptest.Span{}
	for _, s := range r.Spans() {
		got[s.Name] = s
	}
	for name, protocol := range map[string]string{"general": "http/protobuf", "per-signal": "grpc", "flags": "http/protobuf"} {
		s, ok := got[name]
		if !ok {
			t.Errorf("span %s did not arrive; got %v", name, got)
			continue
		}
		if s.Protocol != protocol || s.Resource["service.name"] != "edit-farm" || s.Resource["deployment.environment"] != "test" {
			t.Errorf("span %s: protocol %s, resource %v", name, s.Protocol, s.Resource)
		}
	}
}

// OTEL_TRACES_SAMPLER is the SDK's to apply: always_off records nothing.
func TestSamplerFromEnvironment(t *testing.T) {
	cleanEnv(t)
	r := receiver(t)
	t.Setenv("OTEL_TRACES_SAMPLER", "always_off")
	tr, err := New(context.Background(), Config{Endpoint: r.HTTPURL})
	if err != nil || tr == nil {
		t.Fatal(tr, err)
	}
	emit(t, tr, "sampled out")
	if n := len(r.Spans()); n != 0 {
		t.Errorf("%d spans exported under always_off", n)
	}
}

func TestTurnedOff(t *testing.T) {
	for _, kv := range [][2]string{{"OTEL_SDK_DISABLED", "true"}, {"OTEL_SDK_DISABLED", "TRUE"}, {"OTEL_TRACES_EXPORTER", "none"}} {
		cleanEnv(t)
		t.Setenv(kv[0], kv[1])
		var log bytes.Buffer
		tr, err := New(context.Background(), Config{Endpoint: "http://127.0.0.1:4318", Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if tr != nil || err != nil {
			t.Errorf("%s=%s: %v, %v; want off", kv[0], kv[1], tr, err)
		}
		if !strings.Contains(log.String(), "tracing is off: "+kv[0]) {
			t.Errorf("%s=%s: log %q does not say why tracing is off", kv[0], kv[1], log.String())
		}
	}
}

// A setting hashlined cannot honour stops it, saying what would do.
func TestBadSettings(t *testing.T) {
	for _, tc := range []struct {
		env      [2]string
		cfg      Config
		wantErrs string
	}{
		{cfg: Config{Endpoint: "127.0.0.1:4317"}, wantErrs: "--otlp-endpoint \"127.0.0.1:4317\": want the collector's URL"},
		{cfg: Config{Endpoint: "ftp://h:1"}, wantErrs: "want the collector's URL"},
		{cfg: Config{Endpoint: "http://h:1", Protocol: "http/json"}, wantErrs: "--otlp-protocol http/json: want grpc or http/protobuf"},
		{cfg: Config{Protocol: "grpc"}, wantErrs: "no collector to send spans to"},
		{env: [2]string{"OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"}, cfg: Config{Endpoint: "http://h:1"}, wantErrs: "OTEL_EXPORTER_OTLP_PROTOCOL=thrift: want grpc or http/protobuf"},
		{env: [2]string{"OTEL_TRACES_EXPORTER", "zipkin"}, cfg: Config{Endpoint: "http://h:1"}, wantErrs: "OTEL_TRACES_EXPORTER=zipkin: hashlined exports traces over OTLP only"},
		{env: [2]string{"OTEL_TRACES_SAMPLER", "jaeger_remote"}, cfg: Config{Endpoint: "http://h:1"}, wantErrs: "OTEL_TRACES_SAMPLER=jaeger_remote: want always_on"},
		{env: [2]string{"OTEL_RESOURCE_ATTRIBUTES", "no-equals-sign"}, cfg: Config{Endpoint: "http://h:1"}, wantErrs: "OTEL_RESOURCE_ATTRIBUTES"},
	} {
		cleanEnv(t)
		if tc.env[0] != "" {
			t.Setenv(tc.env[0], tc.env[1])
		}
		tr, err := New(context.Background(), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.wantErrs) {
			t.Errorf("%v %+v: %v, %v; want an error with %q", tc.env, tc.cfg, tr, err, tc.wantErrs)
		}
	}
	cleanEnv(t)
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "2")
	if _, err := New(context.Background(), Config{Endpoint: "http://h:1"}); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_SAMPLER_ARG=2: want a ratio from 0 to 1") {
		t.Errorf("a ratio of 2: %v", err)
	}
}

// syncBuffer is a log destination the exporter's goroutine and the test
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A collector that does not answer costs a line on hashlined's log for a
// run of failed exports, not one per export.
func TestExportFailuresAreLoggedOnce(t *testing.T) {
	cleanEnv(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close() // nothing listens there now: every export is refused
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200")
	var log syncBuffer
	tr, err := New(context.Background(), Config{Endpoint: dead, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil || tr == nil {
		t.Fatal(tr, err)
	}
	tp := tr.TracerProvider()
	for range 3 {
		_, span := tp.Tracer("test").Start(context.Background(), "lost")
		span.End()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		tr.provider.ForceFlush(ctx) // one export each
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tr.Shutdown(ctx)
	if n := strings.Count(log.String(), "exporting spans failed"); n != 1 {
		t.Errorf("%d lines about failed exports, want 1:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "endpoint="+dead) {
		t.Errorf("the line does not name the endpoint:\n%s", log.String())
	}
}

// The stats handler continues the caller's traceparent, and a failed
// call's span has its code and reason but never its message.
func TestServerSpans(t *testing.T) {
	cleanEnv(t)
	r := receiver(t)
	tr, err := New(context.Background(), Config{Endpoint: r.HTTPURL})
	if err != nil || tr == nil {
		t.Fatal(tr, err)
	}
	gs := grpc.NewServer(tr.ServerOption(), grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		st, _ := status.New(codes.Internal, "the file said: secret").WithDetails(&hashlinev1.ErrorInfo{Reason: "IO_ERROR", Domain: "hashline.v1"})
		return st.Err()
	}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	defer gs.Stop()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-"+parentID+"-01")
	if err := conn.Invoke(ctx, "/some.Service/Fail", &hashlinev1.StatusRequest{}, &hashlinev1.StatusResponse{}); status.Code(err) != codes.Internal {
		t.Fatalf("call: %v", err)
	}
	// Health checks are not traced.
	conn.Invoke(ctx, "/grpc.health.v1.Health/Check", &hashlinev1.StatusRequest{}, &hashlinev1.StatusResponse{})
	gs.Stop()
	emit(t, tr, "last")
	var got []otlptest.Span
	for _, s := range r.Spans() {
		if s.Name != "last" {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Fatalf("spans %+v, want the failed call's alone", got)
	}
	s := got[0]
	if s.Name != "some.Service/Fail" || s.Kind != "server" || s.TraceID != traceID || s.ParentSpanID != parentID {
		t.Errorf("span %+v: want some.Service/Fail, a server span in trace %s under %s", s, traceID, parentID)
	}
	if s.StatusCode != "error" || s.StatusMessage != "IO_ERROR" || s.Attributes["rpc.response.status_code"] != "INTERNAL" {
		t.Errorf("status %s %q, attributes %v: want error IO_ERROR and code INTERNAL", s.StatusCode, s.StatusMessage, s.Attributes)
	}
	for k, v := range s.Attributes {
		if str, ok := v.(string); ok && strings.Contains(str, "secret") {
			t.Errorf("attribute %s = %q holds the status message", k, str)
		}
	}
}
