package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/otlptest"
)

// otelOff blanks the OTEL_* variables the tests' environment may have, so
// that only what a test sets reaches the server.
var otelOff = []string{
	"OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=",
	"OTEL_EXPORTER_OTLP_PROTOCOL=", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=", "OTEL_SERVICE_NAME=", "OTEL_RESOURCE_ATTRIBUTES=",
	"OTEL_TRACES_SAMPLER=", "OTEL_TRACES_SAMPLER_ARG=",
}

// traced starts hashlined on a root holding a.txt, with env and args.
func traced(t *testing.T, env []string, args ...string) (*binarytest.Process, string) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\nsecret beta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := binarytest.Start(binary, binarytest.Options{
		Args: append([]string{"--root", root, "--listen", "127.0.0.1:0"}, args...),
		// Spans leave in batches every 50ms rather than every 5s.
		Env:     append(append(otelOff, "OTEL_BSP_SCHEDULE_DELAY=50"), env...),
		Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p, root
}

// logged waits for hashlined to log text (its serving line follows the
// one on stdout that Start waits for).
func logged(t *testing.T, p *binarytest.Process, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.Stderr(), text); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("hashlined did not log %s:\n%s", text, p.Stderr())
			return
		}
	}
}

// parentSpan is the span of the agent's own step that calls hashlined: a
// sampled span of a provider of the test's own.
func parentSpan(t *testing.T) (context.Context, trace.SpanContext) {
	t.Helper()
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	ctx, span := tp.Tracer("agent").Start(ctx, "agent step")
	t.Cleanup(func() { span.End() })
	return ctx, span.SpanContext()
}

// agentCalls makes a Read, an Edit, a stale Edit and a Grep as alice,
// under ctx.
func agentCalls(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	beta := client.Ref(r.GetLines()[1])
	if _, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Replace(beta, "", "classified beta")}}); err != nil {
		t.Fatal(err)
	}
	var stale client.StaleRefError
	if _, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Replace(beta, "", "classified delta")}}); !errors.As(err, &stale) {
		t.Fatalf("the stale edit: %v", err)
	}
	if _, err := c.Grep(ctx, &hashlinev1.GrepRequest{Pattern: "gamma", Path: "a.txt"}, func(*hashlinev1.GrepFile) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// byParent indexes spans by their parent's id.
func byParent(spans []otlptest.Span) map[string][]otlptest.Span {
	m := map[string][]otlptest.Span{}
	for _, s := range spans {
		m[s.ParentSpanID] = append(m[s.ParentSpanID], s)
	}
	return m
}

func named(spans []otlptest.Span, name string) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func hasAttrs(t *testing.T, s otlptest.Span, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if s.Attributes[k] != v {
			t.Errorf("span %s: %s = %v (%T), want %v (all: %v)", s.Name, k, s.Attributes[k], s.Attributes[k], v, s.Attributes)
		}
	}
}

// TestTracesReachTheCollector: hashlined with --otlp-endpoint, over gRPC
// and over HTTP, continues the trace of the Go client's caller: every call
// is a server span under the caller's span, in its trace, and an Edit's
// span has the engine's steps under it, with the agent, path, outcome and
// reason, and never the file's content or the edit's text.
func TestTracesReachTheCollector(t *testing.T) {
	for _, protocol := range []string{"grpc", "http/protobuf"} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			rcv, err := otlptest.Start(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rcv.Close()
			endpoint := rcv.HTTPURL
			if protocol == "grpc" {
				endpoint = "http://" + rcv.GRPCAddr
			}
			p, _ := traced(t, nil, "--otlp-endpoint", endpoint, "--otlp-protocol", protocol)
			logged(t, p, "traces=\"otlp "+protocol+" "+endpoint+"\"")
			c, err := client.Dial(p.Addr, client.WithAgentID("alice"), client.WithPropagator(propagation.TraceContext{}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, parent := parentSpan(t)
			agentCalls(t, ctx, c)
			// Probes' health checks are not traced.
			hc, err := grpc.NewClient(p.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer hc.Close()
			if _, err := healthpb.NewHealthClient(hc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
				t.Fatal(err)
			}

			// The log lines name the trace of their call.
			logged(t, p, "trace_id="+parent.TraceID().String())

			wantRPC := map[string]int{"hashline.v1.FileService/Read": 1, "hashline.v1.FileService/Edit": 2, "hashline.v1.FileService/Grep": 1}
			spans, err := rcv.Wait(ctx, func(spans []otlptest.Span) bool {
				return len(named(spans, "hashline.v1.FileService/Edit")) == 2 && len(named(spans, "hashline.v1.FileService/Grep")) == 1 &&
					len(named(spans, "hashline.commit")) == 1 && len(named(spans, "hashline.plan")) == 2
			})
			if err != nil {
				t.Fatalf("%v; received %+v", err, spans)
			}
			under := byParent(spans)
			for _, s := range under[parent.SpanID().String()] {
				wantRPC[s.Name]--
				if s.TraceID != parent.TraceID().String() || s.Kind != "server" || s.Protocol != protocol || s.Resource["service.name"] != "hashlined" {
					t.Errorf("span %+v: want a server span in the caller's trace %s, by %s", s, parent.TraceID(), protocol)
				}
				hasAttrs(t, s, map[string]any{"hashline.agent": "alice", "hashline.path": "a.txt", "rpc.method": s.Name})
			}
			for name, n := range wantRPC {
				if n != 0 {
					t.Errorf("%d spans of %s missing under the caller's span", n, name)
				}
			}
			for _, s := range spans {
				if strings.Contains(s.Name, "Health") {
					t.Errorf("a health check was traced: %+v", s)
				}
				for k, v := range s.Attributes {
					if str, ok := v.(string); ok && (strings.Contains(str, "secret") || strings.Contains(str, "classified")) {
						t.Errorf("span %s attribute %s = %q holds the file's content", s.Name, k, str)
					}
				}
				if strings.Contains(s.StatusMessage, "secret") || strings.Contains(s.StatusMessage, "classified") {
					t.Errorf("span %s status %q holds the file's content", s.Name, s.StatusMessage)
				}
			}

			var applied, refused otlptest.Span
			for _, s := range named(spans, "hashline.v1.FileService/Edit") {
				if s.Attributes["hashline.outcome"] == "applied" {
					applied = s
				} else {
					refused = s
				}
			}
			if id, _ := applied.Attributes["hashline.request_id"].(string); id == "" {
				t.Errorf("the edit's span has no request_id (the client sends one): %v", applied.Attributes)
			}
			hasAttrs(t, applied, map[string]any{"rpc.response.status_code": "OK"})
			hasAttrs(t, refused, map[string]any{"hashline.outcome": "stale", "hashline.reason": "STALE_REF", "rpc.response.status_code": "ABORTED"})

			// The applied Edit: plan (with its rebase) and commit under it.
			steps := map[string]otlptest.Span{}
			for _, s := range under[applied.SpanID] {
				steps[s.Name] = s
			}
			plan, commit := steps["hashline.plan"], steps["hashline.commit"]
			if plan.Name == "" || commit.Name == "" || len(steps) != 2 {
				t.Fatalf("under the applied Edit: %+v; want hashline.plan and hashline.commit", steps)
			}
			hasAttrs(t, plan, map[string]any{"hashline.agent": "alice", "hashline.path": "a.txt", "hashline.outcome": "planned"})
			if id, _ := commit.Attributes["hashline.change_id"].(string); id == "" || commit.Attributes["hashline.outcome"] != "committed" || commit.Scope != "github.com/hashline/hashline/internal/engine" {
				t.Errorf("commit span: scope %s, attributes %v", commit.Scope, commit.Attributes)
			}
			if rb := under[plan.SpanID]; len(rb) != 1 || rb[0].Name != "hashline.rebase" || rb[0].Attributes["hashline.outcome"] != "current" {
				t.Errorf("under the plan: %+v; want its hashline.rebase", rb)
			}
			// The refused one: a plan and a rebase refused, no commit.
			steps = map[string]otlptest.Span{}
			for _, s := range under[refused.SpanID] {
				steps[s.Name] = s
			}
			if len(steps) != 1 || steps["hashline.plan"].Attributes["hashline.outcome"] != "refused" || steps["hashline.plan"].StatusCode != "error" {
				t.Errorf("under the refused Edit: %+v; want a refused hashline.plan alone", steps)
			}
		})
	}
}

// TestTracingFromTheEnvironment: the standard variables alone turn tracing
// on and shape it: the per-signal endpoint, the service name and resource,
// the sampler (parent-based, always off: a call under a sampled span is
// traced, one under none is not); the last spans are sent when hashlined
// stops.
func TestTracingFromTheEnvironment(t *testing.T) {
	rcv, err := otlptest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	p, _ := traced(t, []string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://" + rcv.GRPCAddr, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc",
		"OTEL_SERVICE_NAME=edit-farm", "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=ci",
		"OTEL_TRACES_SAMPLER=parentbased_always_off",
		"OTEL_BSP_SCHEDULE_DELAY=60000", // nothing leaves before the end
	})
	c, err := client.Dial(p.Addr, client.WithAgentID("bob"), client.WithPropagator(propagation.TraceContext{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, parent := parentSpan(t)
	if _, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(context.Background(), &hashlinev1.ReadRequest{Path: "a.txt"}); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Spans()); n != 0 {
		t.Fatalf("%d spans before the end, with a schedule delay of a minute", n)
	}
	p.Stop(20 * time.Second)
	spans := rcv.Spans()
	if len(spans) != 1 {
		t.Fatalf("spans %+v; want the Read under the sampled parent alone", spans)
	}
	s := spans[0]
	if s.Name != "hashline.v1.FileService/Read" || s.TraceID != parent.TraceID().String() || s.ParentSpanID != parent.SpanID().String() || s.Protocol != "grpc" {
		t.Errorf("span %+v", s)
	}
	if s.Resource["service.name"] != "edit-farm" || s.Resource["deployment.environment"] != "ci" {
		t.Errorf("resource %v", s.Resource)
	}
}

// TestTracingOff: hashlined exports nothing unless told to, and nothing
// when OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none says so, even with
// an endpoint; a setting it cannot honour stops it with what to change.
func TestTracingOff(t *testing.T) {
	p, _ := traced(t, nil)
	logged(t, p, "traces=off")
	for _, off := range []string{"OTEL_SDK_DISABLED=true", "OTEL_TRACES_EXPORTER=none"} {
		rcv, err := otlptest.Start(nil)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := traced(t, []string{off, "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.HTTPURL}, "--otlp-endpoint", rcv.HTTPURL)
		c, err := client.Dial(p.Addr, client.WithAgentID("carol"), client.WithPropagator(propagation.TraceContext{}))
		if err != nil {
			t.Fatal(err)
		}
		ctx, _ := parentSpan(t)
		agentCalls(t, ctx, c)
		c.Close()
		p.Stop(20 * time.Second)
		if n := rcv.Requests(); n != 0 {
			t.Errorf("%s: %d export requests", off, n)
		}
		if !strings.Contains(p.Stderr(), "tracing is off: "+strings.Split(off, "=")[0]) {
			t.Errorf("%s: the log does not say why tracing is off:\n%s", off, p.Stderr())
		}
		rcv.Close()
	}

	cmd := exec.Command(binary, "serve", "--root", t.TempDir(), "--listen", "127.0.0.1:0", "--otlp-endpoint", "127.0.0.1:4317")
	cmd.Env = append(os.Environ(), otelOff...)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(string(out), `--otlp-endpoint "127.0.0.1:4317": want the collector's URL, http://host:port`) {
		t.Errorf("--otlp-endpoint without a scheme: exit %d, %v\n%s", code, err, out)
	}
}
