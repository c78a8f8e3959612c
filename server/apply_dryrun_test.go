package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// A set's dry run refuses what its commit would refuse: a write's mode
// against what is at its path is checked with the set, not left to the
// moment its content is written.
func TestApplyDryRunChecksWriteModes(t *testing.T) {
	mode := func(p string, m hashlinev1.WriteMode) *hashlinev1.Change {
		return &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{Path: p, Content: "new\n", Mode: m}}}
	}
	for _, tt := range []struct {
		name   string
		change *hashlinev1.Change
		code   codes.Code
	}{
		{"a create-only write of a file that exists is refused", mode("x.txt", hashlinev1.WriteMode_WRITE_MODE_CREATE), codes.AlreadyExists},
		{"a replace-only write of a file that does not exist is refused", mode("missing.txt", hashlinev1.WriteMode_WRITE_MODE_REPLACE), codes.NotFound},
	} {
		for _, dry := range []bool{true, false} {
			name := tt.name + " when committed"
			if dry {
				name = tt.name + " in a dry run"
			}
			t.Run(name, func(t *testing.T) {
				e, _ := intentEnv(t)
				e.write("x.txt", "x\n")
				before := e.snapshot()
				_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{DryRun: dry, Changes: []*hashlinev1.Change{
					writeChange("other.txt", "o\n"), tt.change,
				}})
				if status.Code(err) != tt.code {
					t.Fatalf("Apply: %v, want %v", err, tt.code)
				}
				if msg := status.Convert(err).Message(); !strings.Contains(msg, "1 of its changes failed") || !strings.Contains(msg, "\nchange 1 (") {
					t.Errorf("Apply: %q, want change 1 reported as the failing one", msg)
				}
				e.assertUnchanged(before)
			})
		}
	}
}

// A set refused after its contents were staged (here: its intent record
// cannot be written) leaves no directory it created behind, when several
// of its files share the new directories.
func TestApplyRefusedAfterStagingRemovesTheDirectoriesItMade(t *testing.T) {
	e, log := intentEnv(t)
	e.write("x.txt", "x\n")
	before := e.snapshot()
	if err := os.RemoveAll(log.Dir()); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
		writeChange("n/a.txt", "a\n"), writeChange("n/m/c.txt", "c\n"), writeChange("n/m/k/d.txt", "d\n"), writeChange("x.txt", "y\n"),
	}})
	if err == nil {
		t.Fatal("a set whose intent record could not be written was applied")
	}
	e.assertUnchanged(before)
	if exists(t, filepath.Join(e.root, "n")) {
		t.Error("the refused set left n behind")
	}
}
