// Command multiagent shows several agents editing one file at the same time
// through one hashline server: it starts the real server in-process on a
// temporary workspace (loopback TCP, read-before-edit on), lets four agents
// read a checklist and edit it concurrently, and prints what the server
// rebased, which edits conflicted and how the agents retried, and the final
// file.
//
//	go run ./examples/multiagent
//
// Every agent works from the version it read. An edit whose lines another
// agent did not touch is rebased onto the current file (the response says
// rebasedFrom and which references moved); one that collides comes back as
// STALE_REF with fresh tags, and the agent retries from them or, seeing the
// work already done, gives up. An agent that edits without reading gets
// NOT_READ.
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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// checklist is the shared file.
const checklist = `# Release checklist
## Code
- [ ] fix the parser
- [ ] speed up grep
## Docs
- [ ] write the README
## Tests
- [ ] fuzz the planner
`

func main() {
	dir, err := os.MkdirTemp("", "hashline-multiagent-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	if err := run(os.Stdout, dir); err != nil {
		fmt.Fprintln(os.Stderr, "multiagent:", err)
		os.Exit(1)
	}
}

// task is one thing an agent wants done: a line to edit, found by its
// content in the version the agent read.
type task struct {
	what   string // for the log
	find   string // the content of the line the edit refers to
	op     string // "check" (mark done), "after" (insert a line after it), "replace"
	text   string
	doneIf string // a line that, once present, means someone did this already
}

// agents and their tasks. Every first task is made from the version all of
// them read: alice's and carol's insertions after "## Code" collide (one of
// them is retried from fresh tags), and so do alice's and dave's checks of
// "fix the parser" when they overlap; the rest is rebased.
var agents = []struct {
	name  string
	tasks []task
}{
	{"alice", []task{
		{what: "add a Code item", find: "## Code", op: "after", text: "- [ ] handle CRLF files"},
		{what: `check "fix the parser"`, find: "- [ ] fix the parser", op: "check", doneIf: "- [x] fix the parser"},
	}},
	{"bob", []task{
		{what: `check "write the README"`, find: "- [ ] write the README", op: "check", doneIf: "- [x] write the README"},
		{what: "add a Docs item", find: "## Docs", op: "after", text: "- [ ] document the rebase"},
	}},
	{"carol", []task{
		{what: "add a Code item", find: "## Code", op: "after", text: "- [ ] Watch API"},
		{what: `check "fuzz the planner"`, find: "- [ ] fuzz the planner", op: "check", doneIf: "- [x] fuzz the planner"},
	}},
	{"dave", []task{
		{what: `check "fix the parser"`, find: "- [ ] fix the parser", op: "check", doneIf: "- [x] fix the parser"},
		{what: "rename the Tests section", find: "## Tests", op: "replace", text: "## Tests and benchmarks"},
	}},
}

// run serves dir, runs the agents and prints the story to w.
func run(w io.Writer, dir string) error {
	ws, err := workspace.Open(dir)
	if err != nil {
		return err
	}
	defer ws.Close()
	if err := os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(checklist), 0o644); err != nil {
		return err
	}
	svc := server.New(ws, engine.WithRequireRead(true), engine.WithLogger(slog.New(slog.DiscardHandler)))
	gs, _ := server.NewGRPCServer(svc, server.GRPCConfig{DefaultTimeout: time.Minute})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go gs.Serve(lis)
	defer gs.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	out := &printer{w: w}
	out.say("hashline multi-agent demo: %d agents edit TODO.md at once through one server on %s", len(agents), lis.Addr())
	out.say("")

	// An agent that edits before reading is refused.
	eve, err := client.Dial(lis.Addr().String(), client.WithAgentID("eve"))
	if err != nil {
		return err
	}
	defer eve.Close()
	_, err = eve.Edit(ctx, &hashlinev1.EditRequest{Path: "TODO.md", Edits: []*hashlinev1.FileEdit{client.Replace("3:00", "", "x")}})
	if !errors.Is(err, client.ErrNotRead) {
		return fmt.Errorf("eve's edit without a read: %v, want NOT_READ", err)
	}
	out.say("eve    edits without reading -> %s", firstLine(err))
	out.say("")

	// Everyone reads the same version, then edits at the same time.
	type agentState struct {
		c    *client.Client
		read *hashlinev1.ReadResponse
	}
	states := make([]agentState, len(agents))
	for i, a := range agents {
		c, err := client.Dial(lis.Addr().String(), client.WithAgentID(a.name))
		if err != nil {
			return err
		}
		defer c.Close()
		r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "TODO.md"})
		if err != nil {
			return err
		}
		states[i] = agentState{c: c, read: r}
	}
	out.say("alice, bob, carol and dave all read TODO.md at version %s, then edit it concurrently:", short(states[0].read.GetVersion()))
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, len(agents))
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ag := &agent{name: a.name, c: states[i].c, copy: states[i].read, out: out}
			for _, t := range a.tasks {
				if err := ag.do(ctx, t); err != nil {
					errs[i] = fmt.Errorf("%s: %s: %w", a.name, t.what, err)
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	final, err := states[0].c.Read(ctx, &hashlinev1.ReadRequest{Path: "TODO.md"})
	if err != nil {
		return err
	}
	out.say("")
	out.say("%d edits applied (%d of them rebased onto other agents' changes), %d conflict(s) retried from fresh tags, %d task(s) found already done",
		out.nApplied, out.nRebased, out.nRetried, out.nSkipped)
	out.say("")
	out.say("Final TODO.md (version %s):", short(final.GetVersion()))
	b, err := os.ReadFile(filepath.Join(dir, "TODO.md"))
	if err != nil {
		return err
	}
	out.say("%s", strings.TrimSuffix(string(b), "\n"))
	return nil
}

// agent works through its tasks from its own copy of the file.
type agent struct {
	name string
	c    *client.Client
	copy *hashlinev1.ReadResponse // the version this agent works from
	out  *printer
}

// do carries out one task: build the edit from the agent's copy and send
// it with that copy's version as baseVersion; on STALE_REF retry from the
// fresh tags, or stop when the work turns out to be done already.
func (a *agent) do(ctx context.Context, t task) error {
	ref, base := a.find(t.find), a.copy.GetVersion()
	if ref == "" && t.doneIf != "" && a.find(t.doneIf) != "" {
		a.out.skipped(a.name, t.what, "its copy from the last edit shows it done already")
		return nil
	}
	if ref == "" {
		return fmt.Errorf("no line %q in the version read", t.find)
	}
	for try := 0; try < 10; try++ {
		var e *hashlinev1.FileEdit
		switch t.op {
		case "check":
			e = client.Replace(ref, "", strings.Replace(t.find, "[ ]", "[x]", 1))
		case "after":
			e = client.InsertAfter(ref, t.text)
		default:
			e = client.Replace(ref, "", t.text)
		}
		resp, err := a.c.Edit(ctx, &hashlinev1.EditRequest{Path: "TODO.md", BaseVersion: base, Full: true, Edits: []*hashlinev1.FileEdit{e}})
		if err == nil {
			a.copy = &hashlinev1.ReadResponse{Version: resp.GetVersion(), Lines: resp.GetLines()}
			how := "applied directly"
			if resp.GetRebasedFrom() != "" {
				how = "rebased from " + short(resp.GetRebasedFrom())
				var moves []string
				for _, m := range resp.GetMoved() {
					moves = append(moves, fmt.Sprintf("%s -> line %d", m.GetRef(), m.GetTo()))
				}
				if len(moves) > 0 {
					how += ", moved " + strings.Join(moves, ", ")
				}
			}
			a.out.applied(a.name, t.what, how, resp.GetRebasedFrom() != "")
			return nil
		}
		var stale client.StaleRefError
		if !errors.As(err, &stale) {
			return err
		}
		r := stale.Refs[0]
		if t.doneIf != "" && slices.ContainsFunc(r.GetFresh(), func(l string) bool { return strings.HasSuffix(l, "|"+t.doneIf) }) {
			a.out.skipped(a.name, t.what, fmt.Sprintf("conflict (%s at %s); the fresh lines show it done already", r.GetReason(), r.GetRef()))
			return nil
		}
		// Retry from the fresh tags: the referenced line where it is now.
		ref, base = r.GetCurrentLine(), r.GetCurrentVersion()
		if ref == "" {
			return fmt.Errorf("the line was deleted: %v", err)
		}
		a.out.retried(a.name, t.what, r)
	}
	return errors.New("still conflicting after 10 tries")
}

// find returns the tag of the line with this content in the agent's copy.
func (a *agent) find(content string) string {
	for _, l := range a.copy.GetLines() {
		if l.GetContent() == content {
			return client.Ref(l)
		}
	}
	return ""
}

// printer serialises the agents' lines and counts outcomes.
type printer struct {
	mu                                     sync.Mutex
	w                                      io.Writer
	nApplied, nRebased, nRetried, nSkipped int
}

func (p *printer) say(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *printer) applied(name, what, how string, rebased bool) {
	p.mu.Lock()
	p.nApplied++
	if rebased {
		p.nRebased++
	}
	p.mu.Unlock()
	p.say("%-6s %s: %s", name, what, how)
}

func (p *printer) retried(name, what string, r *hashlinev1.StaleRef) {
	p.mu.Lock()
	p.nRetried++
	p.mu.Unlock()
	p.say("%-6s %s: conflict (%s at %s), retrying from the fresh tag %s", name, what, r.GetReason(), r.GetRef(), strings.SplitN(r.GetCurrentLine(), "|", 2)[0])
}

func (p *printer) skipped(name, what, why string) {
	p.mu.Lock()
	p.nSkipped++
	p.mu.Unlock()
	p.say("%-6s %s: %s, nothing to do", name, what, why)
}

func short(version string) string {
	if len(version) > 11 {
		return version[:11]
	}
	return version
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
