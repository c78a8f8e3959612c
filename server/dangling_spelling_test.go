package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

func createChange(path, content string) *hashlinev1.Change {
	return &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{
		Path: path, Content: content, Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE}}}
}

func symlink(e *env, target, rel string) {
	e.t.Helper()
	if err := os.Symlink(target, filepath.Join(e.root, filepath.FromSlash(rel))); err != nil {
		e.t.Fatal(err)
	}
}

// A link to a directory that does not exist yet leads where the link
// says, as every access follows it: two changes of one set that reach one
// new file through it and by its target's own name touch one path, and
// the set is refused whole.
func TestApplyRefusesOneNewFileSpelledThroughADanglingLink(t *testing.T) {
	tests := []struct {
		name    string
		dirs    []string
		links   [][2]string // link name, target
		changes []*hashlinev1.Change
	}{
		{name: "a link to a missing directory and the directory's name",
			links:   [][2]string{{"ln", "d"}},
			changes: []*hashlinev1.Change{createChange("d/f.txt", "one\n"), createChange("ln/f.txt", "two\n")}},
		{name: "a link to a missing directory two levels deep",
			links:   [][2]string{{"ln", "d/e"}},
			changes: []*hashlinev1.Change{createChange("ln/f.txt", "one\n"), createChange("d/e/f.txt", "two\n")}},
		{name: "a chain of links ending at a missing directory",
			links:   [][2]string{{"ln", "d"}, {"ln2", "ln"}},
			changes: []*hashlinev1.Change{createChange("ln2/f.txt", "one\n"), createChange("d/f.txt", "two\n")}},
		{name: "a link whose target climbs back into the root",
			dirs:    []string{"sub"},
			links:   [][2]string{{"ln", "sub/../d"}},
			changes: []*hashlinev1.Change{createChange("ln/f.txt", "one\n"), createChange("d/f.txt", "two\n")}},
		{name: "a link to a missing file and the file's name",
			links:   [][2]string{{"ln.txt", "d.txt"}},
			changes: []*hashlinev1.Change{createChange("ln.txt", "one\n"), createChange("d.txt", "two\n")}},
		{name: "a move through the link and a write by the target's name",
			links:   [][2]string{{"ln", "d"}},
			changes: []*hashlinev1.Change{moveChange("x.txt", "ln/f.txt"), createChange("d/f.txt", "two\n")}},
		{name: "a directory created through the link while the target's parent is written",
			links:   [][2]string{{"ln", "d/e"}},
			changes: []*hashlinev1.Change{createChange("ln/f.txt", "one\n"), createChange("d", "file\n")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := intentEnv(t)
			e.write("x.txt", "x\n")
			for _, d := range tt.dirs {
				mkdir(e, d)
			}
			for _, l := range tt.links {
				symlink(e, l[1], l[0])
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

// A Write that creates a file by one spelling and an Apply or a Move that
// creates it by another (through a link to a directory that does not
// exist yet) serialise on one lock: exactly one is acknowledged as having
// created the file, the other is refused, and the file holds what the
// acknowledged one wrote.
func TestCreatesThroughADanglingLinkAndItsTargetRaceToOneWinner(t *testing.T) {
	const tries = 40
	for _, via := range []string{"apply", "move"} {
		t.Run("a write and "+map[string]string{"apply": "an apply", "move": "a move"}[via], func(t *testing.T) {
			e, _ := intentEnv(t)
			for i := range tries {
				dir, link := fmt.Sprintf("d%d", i), fmt.Sprintf("ln%d", i)
				symlink(e, dir, link)
				e.write(fmt.Sprintf("x%d.txt", i), "moved\n")
				var wg sync.WaitGroup
				start := make(chan struct{})
				var writeErr, otherErr error
				var writeCreated, otherCreated bool
				wg.Go(func() {
					<-start
					resp, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: dir + "/f.txt", Content: "written\n", Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE})
					writeErr, writeCreated = err, resp.GetCreated()
				})
				wg.Go(func() {
					<-start
					if via == "move" {
						_, otherErr = e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: fmt.Sprintf("x%d.txt", i), To: link + "/f.txt"})
						otherCreated = otherErr == nil
						return
					}
					resp, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
						createChange(link+"/f.txt", "moved\n"), writeChange(fmt.Sprintf("other%d.txt", i), "other\n")}})
					otherErr = err
					if err == nil {
						otherCreated = resp.GetResults()[0].GetWrite().GetCreated()
					}
				})
				close(start)
				wg.Wait()
				if (writeErr == nil) == (otherErr == nil) {
					t.Fatalf("try %d: the write got %v and the %s %v: exactly one must be acknowledged", i, writeErr, via, otherErr)
				}
				want := "written\n"
				if writeErr == nil {
					if !writeCreated {
						t.Errorf("try %d: the acknowledged write did not create the file", i)
					}
				} else {
					want = "moved\n"
					if !otherCreated {
						t.Errorf("try %d: the acknowledged %s did not create the file", i, via)
					}
				}
				if got := e.read(dir + "/f.txt"); got != want {
					t.Errorf("try %d: %s/f.txt holds %q, the acknowledged change wrote %q", i, dir, got, want)
				}
				if fi, err := os.Lstat(filepath.Join(e.root, link)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Errorf("try %d: %s is no longer the link (%v)", i, link, err)
				}
			}
		})
	}
}

// On a file system that folds case and normalization (the workspace's
// fold rule says so; here it is given, so that the rule is tested on any
// file system), two spellings of one name in one set are one path.
func TestApplyRefusesOneFileSpelledInTwoCasesWhereNamesFold(t *testing.T) {
	e := newEnvWS(t, []workspace.Option{workspace.WithNameFold(workspace.FoldCase)})
	mkdir(e, "Dir")
	before := e.snapshot()
	for _, pair := range [][2]string{{"Dir/A.txt", "dir/a.txt"}, {"Dir/caf\u00e9", "DIR/CAFE\u0301"}, {"dir", "DIR/new.txt"}} {
		_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
			createChange(pair[0], "one\n"), createChange(pair[1], "two\n")}})
		if reasonOf(err) != server.ReasonConflictingChanges {
			t.Errorf("Apply of %q and %q: %v, want CONFLICTING_CHANGES", pair[0], pair[1], err)
		}
	}
	e.assertUnchanged(before)
}
