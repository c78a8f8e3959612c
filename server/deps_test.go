package server_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestServerImportsNoFace: the server is the gRPC face of the engine; the
// faces above it (the Go client, the daemon, MCP, the commands) depend on
// it, never it on them.
func TestServerImportsNoFace(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/hashline/hashline/server") {
		t.Fatalf("go list -deps printed no server package; is this the server's directory?\n%s", out)
	}
	for _, banned := range []string{
		"github.com/hashline/hashline/client",
		"github.com/hashline/hashline/internal/daemon",
		"github.com/hashline/hashline/internal/mcp",
		"github.com/modelcontextprotocol/go-sdk/mcp",
	} {
		if slices.Contains(deps, banned) {
			t.Errorf("server links %s", banned)
		}
	}
}
