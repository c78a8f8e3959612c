package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
)

// TestFailureSpellsACodeAsReasonsAre: a failure without a reason names
// its code as the protocol spells it, the way reasons (NOT_FOUND) and the
// CLI (UNAVAILABLE) spell theirs, not as Go's codes.Code.String does.
func TestFailureSpellsACodeAsReasonsAre(t *testing.T) {
	for _, tc := range []struct {
		err  *client.Error
		want string
	}{
		{&client.Error{Code: codes.DeadlineExceeded, Message: "context deadline exceeded"},
			"Error reading f.go (DEADLINE_EXCEEDED): context deadline exceeded"},
		{&client.Error{Code: codes.NotFound, Reason: "NOT_FOUND", Message: "f.go does not exist"},
			"Error reading f.go (NOT_FOUND): f.go does not exist"},
	} {
		res := failure("reading", "f.go", tc.err)
		if !res.IsError {
			t.Errorf("%v: not a tool error", tc.err)
		}
		if got := res.Content[0].(*sdk.TextContent).Text; !strings.HasPrefix(got, tc.want) {
			t.Errorf("got %q, want it to begin %q", got, tc.want)
		}
	}
}
