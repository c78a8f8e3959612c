package server_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// An edit change that sets its own dry_run asks for a check, not a write:
// a set that carries one is refused whole, with the fix (the set's
// dry_run), rather than written as if the flag were not there; in a set
// that is a dry run itself it asks for nothing more.
func TestApplyRefusesAnEditChangeThatAsksForADryRun(t *testing.T) {
	for _, setDry := range []bool{false, true} {
		name := "in a set that is committed"
		if setDry {
			name = "in a set that is a dry run"
		}
		t.Run(name, func(t *testing.T) {
			e, _ := intentEnv(t)
			const a = "a1\na2\n"
			e.seed("a.txt", a)
			e.write("b.txt", "b\n")
			dry := editChange("a.txt", client.Replace(tag(a, 1), "", "A1"))
			dry.GetEdit().DryRun = true
			_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{DryRun: setDry, Changes: []*hashlinev1.Change{dry, writeChange("b.txt", "B\n")}})
			switch {
			case setDry && err != nil:
				t.Fatalf("Apply: %v, want the dry run's result", err)
			case !setDry && (status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "ApplyRequest.dry_run")):
				t.Fatalf("Apply: %v, want INVALID_ARGUMENT pointing at the set's dry_run", err)
			}
			if e.read("a.txt") != a || e.read("b.txt") != "b\n" {
				t.Errorf("files changed: %q %q", e.read("a.txt"), e.read("b.txt"))
			}
		})
	}
}
