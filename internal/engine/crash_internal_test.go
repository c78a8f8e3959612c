package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// crashOps are the changes TestKillNineAtEachMomentOfACommit makes: each
// a call of its own (a set of one change) or a set of several, with the
// files as they are before and after it.
var crashOps = map[string]struct {
	after map[string]string // "" for a file that is not there
	sets  bool
}{
	"edit":   {after: map[string]string{"f.txt": "one\ntwo\nedited\nfour\n"}},
	"write":  {after: map[string]string{"f.txt": "written\n"}},
	"delete": {after: map[string]string{"f.txt": ""}},
	"move":   {after: map[string]string{"f.txt": "", "g.txt": crashBefore["f.txt"]}},
	"set":    {after: map[string]string{"f.txt": "set f\n", "d/h.txt": "set h\n", "k.txt": ""}, sets: true},
}

var crashBefore = map[string]string{"f.txt": "one\ntwo\nthree\nfour\n", "k.txt": "k\n", "g.txt": "", "d/h.txt": ""}

// The moments of a commit (options.point) the child is killed at, and
// whether the change is made by then; "replied" is after the call
// returned, before the engine is closed.
var crashPoints = []struct {
	name string
	made bool
	sets bool // a moment of sets only
}{
	{"committing", false, false},
	{"prepared", false, false},
	{"recorded", true, true},
	{"committed", true, false},
	{"resolved", true, false},
	{"replied", true, false},
}

// TestCrashChild is the process TestKillNineAtEachMomentOfACommit kills:
// it opens an engine on the root and state directory it is given, makes
// one change as the agent "crasher" with the request id "req-crash", and
// is killed (SIGKILL on Unix) at the moment named, or after the call
// returned, having printed the change id its Watch event carried.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv("HASHLINE_CRASH_CHILD")
	if spec == "" {
		t.Skip("run by TestKillNineAtEachMomentOfACommit")
	}
	var root, stateDir, op, point string
	if _, err := fmt.Sscan(spec, &root, &stateDir, &op, &point); err != nil {
		t.Fatal(err)
	}
	kill := func() {
		p, _ := os.FindProcess(os.Getpid())
		_ = p.Kill()
		select {}
	}
	e, err := Open(Config{Root: root, StateDir: stateDir, NoSweep: true, NoRequireRead: true,
		Options: []Option{withPoint(func(name string) {
			if name == point {
				kill()
			}
		})}})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := e.Subscribe("")
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithRequestID(WithAgent(context.Background(), "crasher"), "req-crash")
	switch op {
	case "edit":
		r, err := e.Read(ctx, ReadRequest{Path: "f.txt"})
		if err == nil {
			_, err = e.Edit(ctx, &EditRequest{Path: "f.txt", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: r.Lines[2].Tag(), Text: "edited"}}})
		}
		if err != nil {
			t.Fatal(err)
		}
	case "write":
		_, err = e.Write(ctx, &WriteRequest{Path: "f.txt", Content: "written\n"})
	case "delete":
		_, err = e.Delete(ctx, &DeleteRequest{Path: "f.txt"})
	case "move":
		_, err = e.Move(ctx, &MoveRequest{From: "f.txt", To: "g.txt"})
	case "set":
		_, err = e.Apply(ctx, &ApplyRequest{Changes: []Change{
			&WriteRequest{Path: "f.txt", Content: "set f\n"},
			&WriteRequest{Path: "d/h.txt", Content: "set h\n"},
			&DeleteRequest{Path: "k.txt"},
		}})
	}
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := sub.Next()
	os.Stdout.WriteString("change " + ev.ChangeID + "\n")
	kill()
}

// A change is in the history if and only if it was made, whatever moment
// of its commit the process is killed at, and keeps the id its Watch event
// carried: a child process makes one change (an Edit, a Write, a Delete,
// a Move, a set of three) and is killed at one moment (before its history
// entry is prepared; after, before the commit point; after a set's intent
// record; after the change is made; after its entry is resolved; after
// the call returned); the next Open finds the files as before or as
// after, and the history with no entry of the change or with exactly it.
func TestKillNineAtEachMomentOfACommit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a process per case")
	}
	for _, op := range slices.Sorted(func(yield func(string) bool) {
		for k := range crashOps {
			if !yield(k) {
				return
			}
		}
	}) {
		for _, pt := range crashPoints {
			if pt.sets && !crashOps[op].sets {
				continue
			}
			// One at a time: each starts a process.
			t.Run(op+"/"+pt.name, func(t *testing.T) {
				killAt(t, op, pt.name, pt.made)
			})
		}
	}
}

func killAt(t *testing.T, op, point string, made bool) {
	root, stateDir := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, content := range crashBefore {
		if content != "" {
			if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("HASHLINE_CRASH_CHILD=%s %s %s %s", root, stateDir, op, point))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err == nil || cmd.ProcessState.Success() || strings.Contains(out.String(), "FAIL") {
		t.Fatalf("the child was not killed: %v\n%s%s", err, out.String(), errOut.String())
	}
	watched := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if id, ok := strings.CutPrefix(line, "change "); ok {
			watched = id
		}
	}

	// The files are as before the change or as after it, once Open has
	// finished what a set committed.
	want := crashBefore
	if made {
		want = map[string]string{}
		for p, c := range crashBefore {
			want[p] = c
		}
		for p, c := range crashOps[op].after {
			want[p] = c
		}
	}
	checkDisk := func() {
		t.Helper()
		for p, c := range want {
			got, err := os.ReadFile(filepath.Join(root, p))
			if c == "" && !os.IsNotExist(err) || c != "" && string(got) != c {
				t.Fatalf("killed at %s: %s holds %q (%v), want %q", point, p, got, err, c)
			}
		}
	}

	for round := range 2 { // the second Open finds it all settled
		e, err := Open(Config{Root: root, StateDir: stateDir, NoSweep: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.History(context.Background(), HistoryRequest{Agent: "crasher"})
		if err != nil {
			t.Fatal(err)
		}
		r := e.opened.recovered
		e.Close()
		checkDisk()
		if round == 1 && (r.Restored != 0 || r.Resolved != 0 || r.Sets != 0) {
			t.Errorf("killed at %s: the second start recovered again: %+v", point, r)
		}
		if !made {
			if len(res.Entries) != 0 {
				t.Fatalf("killed at %s, before the change was made: the history holds %+v", point, res.Entries)
			}
			continue
		}
		if len(res.Entries) != 1 {
			t.Fatalf("killed at %s, the change made: the history holds %d entries of it, want 1: %+v (recovered %+v)", point, len(res.Entries), res.Entries, r)
		}
		en := res.Entries[0]
		if en.RequestID != "req-crash" || watched != "" && en.ID != watched {
			t.Errorf("killed at %s: the entry %s (request %q), the Watch event's id %q", point, en.ID, en.RequestID, watched)
		}
		var paths []string
		for _, f := range en.Files {
			paths = append(paths, f.Path)
			wantV := ""
			if c := want[f.Path]; c != "" {
				wantV = workspace.Version([]byte(c))
			}
			if f.After != wantV {
				t.Errorf("killed at %s: the entry's %s is %q, the disk's %q", point, f.Path, f.After, wantV)
			}
		}
		slices.Sort(paths)
		var changed []string
		for p := range crashOps[op].after {
			changed = append(changed, p)
		}
		slices.Sort(changed)
		if op == "move" {
			changed = []string{"g.txt"} // the move's file is at its new path, from f.txt
		}
		if !slices.Equal(paths, changed) {
			t.Errorf("killed at %s: the entry's files %v, want %v", point, paths, changed)
		}
	}
}
