// Package otlptest is test support: an OTLP trace receiver on loopback,
// over gRPC (the collector's TraceService) and over HTTP (POST /v1/traces,
// protobuf, gzip or not), that keeps every span it is sent, for the tests
// of hashlined's tracing. Its command, otlpsink, serves one and prints each
// span as a line of JSON, for the tests of the TypeScript and Python
// clients.
package otlptest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is a span as the receiver got it, flattened.
type Span struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	// Kind is "server", "internal", "client"...
	Kind string `json:"kind"`
	// Attributes are the span's: strings, int64s, float64s, bools, and
	// []any of them.
	Attributes map[string]any `json:"attributes"`
	// Resource is the attributes of the resource that sent the span.
	Resource map[string]any `json:"resource"`
	// Scope is the instrumentation scope's name.
	Scope string `json:"scope"`
	// StatusCode is "unset", "ok" or "error".
	StatusCode    string `json:"statusCode"`
	StatusMessage string `json:"statusMessage"`
	// Protocol is what it came by: "grpc" or "http/protobuf".
	Protocol string `json:"protocol"`
}

// Receiver receives spans until Close.
type Receiver struct {
	// GRPCAddr is the gRPC receiver's host:port; HTTPURL the HTTP
	// receiver's base URL (http://host:port; it takes POST /v1/traces).
	GRPCAddr, HTTPURL string

	collectortrace.UnimplementedTraceServiceServer
	gs *grpc.Server
	hs *http.Server

	mu       sync.Mutex
	spans    []Span
	requests int
	changed  chan struct{} // closed and replaced whenever spans arrive
	onSpan   func(Span)
}

// Start starts a receiver on loopback ports of its own. onSpan, when set,
// is called with each span as it arrives, one at a time.
func Start(onSpan func(Span)) (*Receiver, error) {
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		gl.Close()
		return nil, err
	}
	r := &Receiver{GRPCAddr: gl.Addr().String(), HTTPURL: "http://" + hl.Addr().String(), changed: make(chan struct{}), onSpan: onSpan}
	r.gs = grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(r.gs, r)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.serveHTTP)
	r.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go r.gs.Serve(gl)
	go r.hs.Serve(hl)
	return r, nil
}

// Close stops both receivers.
func (r *Receiver) Close() {
	r.gs.Stop()
	r.hs.Close()
}

// Export is the gRPC TraceService's.
func (r *Receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.add(req, "grpc")
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = z
	}
	b, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.add(&msg, "http/protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *Receiver) add(req *collectortrace.ExportTraceServiceRequest, protocol string) {
	var got []Span
	for _, rs := range req.GetResourceSpans() {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, Span{
					TraceID:       hex.EncodeToString(s.GetTraceId()),
					SpanID:        hex.EncodeToString(s.GetSpanId()),
					ParentSpanID:  hex.EncodeToString(s.GetParentSpanId()),
					Name:          s.GetName(),
					Kind:          kindName(s.GetKind()),
					Attributes:    attrMap(s.GetAttributes()),
					Resource:      res,
					Scope:         ss.GetScope().GetName(),
					StatusCode:    statusName(s.GetStatus().GetCode()),
					StatusMessage: s.GetStatus().GetMessage(),
					Protocol:      protocol,
				})
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.spans = append(r.spans, got...)
	if r.onSpan != nil {
		for _, s := range got {
			r.onSpan(s)
		}
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// Spans returns the spans received so far, in order of arrival.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Requests returns how many export requests arrived, empty ones included.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Wait returns the spans received once done says they are enough, or an
// error with them when ctx ends first.
func (r *Receiver) Wait(ctx context.Context, done func([]Span) bool) ([]Span, error) {
	for {
		r.mu.Lock()
		spans, changed := append([]Span(nil), r.spans...), r.changed
		r.mu.Unlock()
		if done(spans) {
			return spans, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return spans, errors.Join(errors.New("the spans wanted did not arrive"), ctx.Err())
		}
	}
}

func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = value(kv.GetValue())
	}
	return m
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, len(x.ArrayValue.GetValues()))
		for i, e := range x.ArrayValue.GetValues() {
			out[i] = value(e)
		}
		return out
	}
	return nil
}

func kindName(k tracepb.Span_SpanKind) string {
	switch k {
	case tracepb.Span_SPAN_KIND_INTERNAL:
		return "internal"
	case tracepb.Span_SPAN_KIND_SERVER:
		return "server"
	case tracepb.Span_SPAN_KIND_CLIENT:
		return "client"
	case tracepb.Span_SPAN_KIND_PRODUCER:
		return "producer"
	case tracepb.Span_SPAN_KIND_CONSUMER:
		return "consumer"
	}
	return "unspecified"
}

func statusName(c tracepb.Status_StatusCode) string {
	switch c {
	case tracepb.Status_STATUS_CODE_OK:
		return "ok"
	case tracepb.Status_STATUS_CODE_ERROR:
		return "error"
	}
	return "unset"
}
