package server_test

import (
	"os"
	"path/filepath"
	"testing"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/server"
)

// Two changes of one set that reach one new file by two spellings (through
// a linked directory, below a directory neither has created yet) touch one
// path: the set is refused, and the moved file is never replaced by the
// written one.
func TestApplyRefusesOneNewPathSpelledTwice(t *testing.T) {
	e, _ := intentEnv(t)
	e.write("x.txt", "precious\n")
	if err := os.Mkdir(filepath.Join(e.root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(e.root, "link")); err != nil {
		t.Fatal(err)
	}
	_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
		moveChange("x.txt", "link/b/f.txt"),
		writeChange("a/b/f.txt", "other\n"),
	}})
	if reasonOf(err) != server.ReasonConflictingChanges {
		t.Fatalf("Apply: %v, want CONFLICTING_CHANGES", err)
	}
	if got := e.read("x.txt"); got != "precious\n" {
		t.Errorf("x.txt = %q after a refused set", got)
	}
	if exists(t, filepath.Join(e.root, "a", "b")) {
		t.Error("a refused set left a/b behind")
	}
}
