package client_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestClientDoesNotLinkTheEngine: a Go program pays, on every start, for
// the init of every package it links, and the hashline CLI runs once per
// tool call in some harnesses. The client needs gRPC and the API; the
// engine (server, workspace, state), the MCP SDK and the server-only
// dependencies must stay out of its imports, so that a program that only
// calls a server, a client-only build of the CLI included, does not link
// them.
func TestClientDoesNotLinkTheEngine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "google.golang.org/grpc") {
		t.Fatalf("go list -deps printed no google.golang.org/grpc; is this the client package?\n%s", out)
	}
	for _, banned := range []string{
		"github.com/hashline/hashline/server",
		"github.com/hashline/hashline/internal/daemon",
		"github.com/hashline/hashline/internal/workspace",
		"github.com/hashline/hashline/internal/state",
		"github.com/hashline/hashline/internal/mcp",
		"github.com/modelcontextprotocol/go-sdk/mcp",
		"github.com/google/jsonschema-go/jsonschema",
		"github.com/prometheus/client_golang/prometheus",
		"go.yaml.in/yaml/v3",
		"github.com/zeebo/blake3",
		"github.com/fsnotify/fsnotify",
		// Of OpenTelemetry the client links the API (propagation): the
		// SDK, the exporters and the gRPC instrumentation are hashlined's.
		"go.opentelemetry.io/otel/sdk/trace",
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace",
		"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc",
		"github.com/hashline/hashline/internal/telemetry",
	} {
		t.Run("the client does not link "+banned, func(t *testing.T) {
			if slices.Contains(deps, banned) {
				t.Errorf("client links %s", banned)
			}
		})
	}
}
