package engine_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestEngineImportsNoTransport: the engine is the application in domain
// types; gRPC, protobuf and the API's generated messages belong to the
// faces above it (server), which translate. Of OpenTelemetry it links the
// trace API alone (trace.go).
func TestEngineImportsNoTransport(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/hashline/hashline/internal/engine") {
		t.Fatalf("go list -deps printed no engine package; is this the engine's directory?\n%s", out)
	}
	for _, d := range deps {
		for _, banned := range []string{
			"google.golang.org/grpc",
			"google.golang.org/protobuf",
			"github.com/hashline/hashline/gen/",
			"github.com/hashline/hashline/server",
			"github.com/hashline/hashline/client",
			"github.com/hashline/hashline/internal/wire",
			// Tracing: the engine speaks the trace API only; the SDK,
			// exporters and gRPC instrumentation are hashlined's.
			"go.opentelemetry.io/otel/sdk",
			"go.opentelemetry.io/otel/exporters",
			"go.opentelemetry.io/contrib",
		} {
			if d == banned || strings.HasPrefix(d, banned+"/") || (strings.HasSuffix(banned, "/") && strings.HasPrefix(d, banned)) {
				t.Errorf("the engine links %s", d)
			}
		}
	}
}
