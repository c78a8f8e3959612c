package server_test

import (
	"os"
	"path/filepath"
	"testing"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/server"
)

// A set whose changes touch a path and one inside it is refused whole,
// whatever other names lie between the two in sorted order ("d.txt" sorts
// between "d" and "d/new"): nothing is written, and no set reaches its
// commit point to be applied only in part.
func TestApplyRefusesAPathAndOneInsideItWhateverSortsBetween(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(e *env)
		changes []*hashlinev1.Change
	}{
		{name: "an empty directory deleted, a file written in it, and a sibling with a dot",
			setup:   func(e *env) { mkdir(e, "d") },
			changes: []*hashlinev1.Change{deleteChange("d"), writeChange("d/new", "new\n"), writeChange("d.txt", "sibling\n")}},
		{name: "the sibling first, then the directory and the file in it",
			setup:   func(e *env) { mkdir(e, "d") },
			changes: []*hashlinev1.Change{writeChange("d.txt", "sibling\n"), writeChange("d/new", "new\n"), deleteChange("d")}},
		{name: "a file, a file below that name, and a sibling with a dash",
			changes: []*hashlinev1.Change{writeChange("a", "a\n"), writeChange("a/b", "b\n"), writeChange("a-b", "c\n")}},
		{name: "a file, a file below that name, and siblings with a space and a dot",
			changes: []*hashlinev1.Change{writeChange("a/b", "b\n"), writeChange("a b", "s\n"), writeChange("a.b", "d\n"), writeChange("a", "a\n")}},
		{name: "a file moved into a deleted directory, with a sibling written",
			setup:   func(e *env) { mkdir(e, "d"); e.write("x.txt", "x\n") },
			changes: []*hashlinev1.Change{moveChange("x.txt", "d/x.txt"), writeChange("d-1", "sibling\n"), deleteChange("d")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := intentEnv(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			before := e.snapshot()
			_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: tt.changes})
			if reasonOf(err) != server.ReasonConflictingChanges {
				t.Fatalf("Apply: %v, want CONFLICTING_CHANGES", err)
			}
			e.assertUnchanged(before)
		})
	}
}

func mkdir(e *env, rel string) {
	e.t.Helper()
	if err := os.MkdirAll(filepath.Join(e.root, filepath.FromSlash(rel)), 0o755); err != nil {
		e.t.Fatal(err)
	}
}
