package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCLIDoesNotLinkServerOnlyPackages: every package a Go program links
// is initialised on every start, and harnesses run hashline once per tool
// call. The packages only hashlined needs (Prometheus, reflection and its
// protodesc, the OpenTelemetry SDK and exporters) must stay out of the
// CLI's imports.
func TestCLIDoesNotLinkServerOnlyPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{
		"github.com/prometheus/client_golang/prometheus",
		"github.com/hashline/hashline/server/metrics",
		"google.golang.org/grpc/reflection",
		"github.com/hashline/hashline/server/reflection",
		"google.golang.org/protobuf/reflect/protodesc",
		// Tracing (hashlined --otlp-endpoint): the engine and the client
		// link the OpenTelemetry API alone.
		"github.com/hashline/hashline/internal/telemetry",
		"go.opentelemetry.io/otel/sdk/trace",
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace",
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc",
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp",
		"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc",
		"go.opentelemetry.io/proto/otlp/trace/v1",
	} {
		t.Run("hashline does not link "+banned, func(t *testing.T) {
			for _, d := range deps {
				if d == banned {
					t.Errorf("cmd/hashline links %s", banned)
				}
			}
		})
	}
}
