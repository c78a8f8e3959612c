// Command changeset shows a refactor across several files made as one
// change set: all or nothing, checked against what each agent read, and
// safe across a crash. It starts the real server in-process on a temporary
// workspace holding a small Go program, with an intent log in a state
// directory outside the workspace, and then:
//
//   - a watcher subscribes to every change;
//
//   - alice reads three files and renames the function Hello to Greet in
//     all of them, and moves NOTES.md into docs/, in one Apply. Between her
//     read and her Apply, bob adds a comment at the top of main.go: her
//     references to main.go are rebased over it and the set lands whole;
//
//   - carol, who read the files before alice's set, sends a set of her own
//     whose edit of greet/greet.go names a line alice changed, beside a
//     good edit of main.go: the whole set is refused, every failing change
//     is reported with fresh tags, nothing is written, and carol retries
//     from those tags.
//
//     go run ./examples/changeset
//
// Every Watch event of a set carries the set's id, so a subscriber sees
// the refactor as one change.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// marker is the file the watcher's client writes until the watcher sees
// it: from then on it misses no change.
const marker = ".watching"

// The workspace: a package, its test, a program using it, and notes.
var files = map[string]string{
	"greet/greet.go": `package greet

// Hello returns a greeting for name.
func Hello(name string) string {
	return "Hello, " + name
}
`,
	"greet/greet_test.go": `package greet

import "testing"

func TestHello(t *testing.T) {
	if got := Hello("Ada"); got != "Hello, Ada" {
		t.Errorf("Hello = %q", got)
	}
}
`,
	"main.go": `package main

import (
	"fmt"

	"example.com/demo/greet"
)

func main() {
	fmt.Println(greet.Hello("world"))
}
`,
	"NOTES.md": "Rename Hello to Greet.\n",
}

func main() {
	dir, err := os.MkdirTemp("", "hashline-changeset-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if err := run(os.Stdout, dir); err != nil {
		fmt.Fprintln(os.Stderr, "changeset:", err)
		os.Exit(1)
	}
}

// run serves dir/work (the workspace, state in dir/state), tells the story
// to w, and leaves the workspace as the agents left it.
func run(w io.Writer, dir string) error {
	root := filepath.Join(dir, "work")
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(text), 0o644); err != nil {
			return err
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		return err
	}
	defer ws.Close()
	// The intent log makes a set of several files durable as a whole;
	// hashlined keeps it in its state directory, never in the workspace.
	sd, err := state.Open(filepath.Join(dir, "state"), root)
	if err != nil {
		return err
	}
	intents, err := sd.Intents(true)
	if err != nil {
		return err
	}
	svc := server.New(ws, engine.WithRequireRead(true), engine.WithIntentLog(intents), engine.WithLogger(slog.New(slog.DiscardHandler)))
	gs, _ := server.NewGRPCServer(svc, server.GRPCConfig{DefaultTimeout: time.Minute})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go gs.Serve(lis)
	defer gs.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dial := func(agent string) (*client.Client, error) {
		return client.Dial(lis.Addr().String(), client.WithAgentID(agent))
	}
	say := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }

	// The watcher prints every event until the story is told.
	watcher, err := dial("watcher")
	if err != nil {
		return err
	}
	defer watcher.Close()
	var (
		mu     sync.Mutex
		ready  bool     // the watcher has seen a marker: it misses nothing after
		events []string // what it saw, markers left out
	)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watched := make(chan error, 1)
	go func() {
		watched <- watcher.Watch(wctx, &hashlinev1.WatchRequest{}, func(ev *hashlinev1.WatchResponse) error {
			mu.Lock()
			defer mu.Unlock()
			if ev.GetPath() == marker {
				ready = true
			} else {
				events = append(events, describe(ev))
			}
			return nil
		})
	}()
	// The stream gives no sign of being subscribed, so write a marker
	// until the watcher sees one.
	for i := 0; ; i++ {
		if _, err := watcher.Write(ctx, &hashlinev1.WriteRequest{Path: marker, Content: fmt.Sprintf("%d\n", i)}); err != nil {
			return err
		}
		mu.Lock()
		r := ready
		mu.Unlock()
		if r {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}

	alice, err := dial("alice")
	if err != nil {
		return err
	}
	defer alice.Close()
	bob, err := dial("bob")
	if err != nil {
		return err
	}
	defer bob.Close()
	carol, err := dial("carol")
	if err != nil {
		return err
	}
	defer carol.Close()

	// alice and carol read the three Go files.
	read := func(c *client.Client, p string) (*hashlinev1.ReadResponse, error) {
		return c.Read(ctx, &hashlinev1.ReadRequest{Path: p})
	}
	aliceSaw, carolSaw := map[string]*hashlinev1.ReadResponse{}, map[string]*hashlinev1.ReadResponse{}
	for _, p := range []string{"greet/greet.go", "greet/greet_test.go", "main.go"} {
		if aliceSaw[p], err = read(alice, p); err != nil {
			return err
		}
		if carolSaw[p], err = read(carol, p); err != nil {
			return err
		}
	}
	say("alice and carol read greet/greet.go, greet/greet_test.go and main.go.")

	// bob changes main.go after their reads.
	m, err := read(bob, "main.go")
	if err != nil {
		return err
	}
	if _, err := bob.Edit(ctx, &hashlinev1.EditRequest{Path: "main.go", Edits: []*hashlinev1.FileEdit{
		client.InsertBefore(ref(m, "package main"), "// Command demo greets the world."),
	}}); err != nil {
		return err
	}
	say("bob added a comment at the top of main.go; every line alice read there moved down one.")
	say("")

	// alice's refactor: three edits and a move, one set.
	set, err := alice.Apply(ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
		edit("greet/greet.go",
			client.Replace(ref(aliceSaw["greet/greet.go"], "// Hello returns"), ref(aliceSaw["greet/greet.go"], "func Hello"),
				"// Greet returns a greeting for name.\nfunc Greet(name string) string {")),
		edit("greet/greet_test.go",
			client.Replace(ref(aliceSaw["greet/greet_test.go"], "func TestHello"), ref(aliceSaw["greet/greet_test.go"], "Hello = %q"),
				"func TestGreet(t *testing.T) {\n\tif got := Greet(\"Ada\"); got != \"Hello, Ada\" {\n\t\tt.Errorf(\"Greet = %q\", got)")),
		edit("main.go", client.Replace(ref(aliceSaw["main.go"], "greet.Hello"), "", "\tfmt.Println(greet.Greet(\"world\"))")),
		{Change: &hashlinev1.Change_Move{Move: &hashlinev1.MoveRequest{From: "NOTES.md", To: "docs/NOTES.md"}}},
	}})
	if err != nil {
		return fmt.Errorf("alice's set: %w", err)
	}
	say("alice renames Hello to Greet in 3 files and moves NOTES.md to docs/, as one set: applied")
	for i, r := range set.GetResults() {
		switch {
		case r.GetEdit() != nil && r.GetEdit().GetRebasedFrom() != "":
			say("  change %d: %s edited, rebased over bob's change (%d reference(s) moved)", i, r.GetEdit().GetPath(), len(r.GetEdit().GetMoved()))
		case r.GetEdit() != nil:
			say("  change %d: %s edited", i, r.GetEdit().GetPath())
		case r.GetMove() != nil:
			say("  change %d: %s moved to %s", i, r.GetMove().GetFrom(), r.GetMove().GetTo())
		}
	}
	say("")

	// carol's set, from her older read: one stale edit, one good one.
	staleSet := func(greetRef, greetEnd string) *hashlinev1.ApplyRequest {
		return &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
			edit("main.go", client.InsertAfter(ref(carolSaw["main.go"], "func main()"), "\t// Say hello.")),
			edit("greet/greet.go", client.Replace(greetRef, greetEnd, "// Greet returns a friendly greeting for name.")),
		}}
	}
	before := snapshot(root)
	_, err = carol.Apply(ctx, staleSet(ref(carolSaw["greet/greet.go"], "// Hello returns"), ""))
	var refused *client.Error
	if !errors.As(err, &refused) || len(refused.Changes) == 0 {
		return fmt.Errorf("carol's stale set: %v, want it refused", err)
	}
	if snapshot(root) != before {
		return errors.New("carol's refused set changed the workspace")
	}
	say("carol sends a set from her older read: refused whole, nothing written (%s)", refused.Reason)
	fresh := ""
	for _, ce := range refused.Changes {
		say("  change %d (%s): %s", ce.GetChangeIndex(), ce.GetPath(), ce.GetReason())
	}
	for _, s := range refused.Stale {
		for _, line := range s.GetFresh() {
			if strings.Contains(line, "// Greet returns") {
				fresh = strings.SplitN(line, "|", 2)[0]
			}
		}
	}
	if fresh == "" {
		return fmt.Errorf("carol's refusal carries no fresh tag for the changed line: %v", err)
	}
	say("  the refusal shows the line as it is now; carol retries with its fresh tag %s", fresh)
	if _, err := carol.Apply(ctx, staleSet(fresh, "")); err != nil {
		return fmt.Errorf("carol's retry: %w", err)
	}
	say("carol's retry: applied")
	say("")

	// The watcher's view, once it has seen every change: bob's edit,
	// alice's four changes and carol's two.
	for {
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n >= 7 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the watcher saw %d of 7 changes: %w", n, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	stopWatch()
	<-watched
	say("What the watcher saw (a set's changes share its id):")
	for _, e := range events {
		say("  %s", e)
	}
	say("")
	b, err := os.ReadFile(filepath.Join(root, "greet", "greet.go"))
	if err != nil {
		return err
	}
	say("Final greet/greet.go:")
	say("%s", strings.TrimSuffix(string(b), "\n"))
	return nil
}

// edit is a change that edits path.
func edit(path string, edits ...*hashlinev1.FileEdit) *hashlinev1.Change {
	return &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{Path: path, Edits: edits}}}
}

// ref returns the reference of the first line of r containing s.
func ref(r *hashlinev1.ReadResponse, s string) string {
	for _, l := range r.GetLines() {
		if strings.Contains(l.GetContent(), s) {
			return client.FormatRef(int(l.GetNumber()), l.GetHash())
		}
	}
	panic(fmt.Sprintf("no line containing %q in %s", s, r.GetPath()))
}

// describe is one line for a Watch event.
func describe(ev *hashlinev1.WatchResponse) string {
	kind := strings.ToLower(strings.TrimPrefix(ev.GetKind().String(), "WATCH_EVENT_KIND_"))
	s := fmt.Sprintf("%-8s %-20s by %s", kind, ev.GetPath(), ev.GetAgent())
	if ev.GetFromPath() != "" {
		s += " from " + ev.GetFromPath()
	}
	if ev.GetChangeSet() != "" {
		s += " in set " + ev.GetChangeSet()[:8]
	}
	return s
}

// snapshot is every file under root with its content, for checking that a
// refused set changed nothing.
func snapshot(root string) string {
	var b strings.Builder
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		fmt.Fprintf(&b, "%s\n%s\n", p, data)
		return err
	})
	return b.String()
}
