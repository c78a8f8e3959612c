package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/floor"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// editor applies an editCase over and over, toggling its file between the
// case's two states, and says where the file is so it can be checked.
type editor struct {
	name  string
	root  string
	state int
	apply func(c editCase, path string, from int) error
}

func (e *env) editors() []*editor {
	ctx := context.Background()
	grpcEdit := func(c *client.Client) func(editCase, string, int) error {
		return func(ec editCase, path string, from int) error {
			var edits []*hashlinev1.FileEdit
			for j, ln := range ec.lines {
				edits = append(edits, client.Replace(ec.refs[from][j], "", ec.newLine(from, ln)))
			}
			_, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: path, Edits: edits})
			return err
		}
	}
	mcpEdit := func(m *mcpServer) func(editCase, string, int) error {
		return func(c editCase, path string, from int) error {
			var edits []map[string]any
			for j, ln := range c.lines {
				edits = append(edits, map[string]any{"set_line": map[string]any{"anchor": c.refs[from][j], "new_text": c.newLine(from, ln)}})
			}
			_, err := m.call("edit_file", map[string]any{"path": path, "edits": edits})
			return err
		}
	}
	// The steps of the engine's Edit: the write, the read of the file it
	// checks the refs against (compared with the text the engine holds, as
	// the engine does), and the plan and apply in memory of a parse the
	// engine holds; each by itself, and the three one after the other on
	// a file of their own, as an Edit without the call around them.
	readCompare := func(ws *workspace.Workspace, path, want string) error {
		f, err := ws.ReadFileWith(path, workspace.ReadOptions{Known: &workspace.Known{Version: "known", Text: []byte(want)}})
		if err == nil && f.Version != "known" {
			err = fmt.Errorf("read and compare: %s is not in the state the bench wrote", path)
		}
		return err
	}
	planApply := func(c editCase, path string, from int) ([]byte, error) {
		key := fmt.Sprint(path, from)
		doc, ok := e.docs[key]
		if !ok {
			doc = hashline.ParseDocument([]byte(c.states[from]))
			e.docs[key] = doc
		}
		var edits []hashline.Edit
		for j, ln := range c.lines {
			edits = append(edits, hashline.Edit{Op: hashline.OpReplace, Start: c.refs[from][j], Text: c.newLine(from, ln)})
		}
		plan, err := hashline.PlanEdits(doc, edits, hashline.Hasher{})
		if err != nil {
			return nil, err
		}
		res, err := plan.Apply(doc, hashline.ApplyOptions{Hasher: hashline.Hasher{}, Context: engine.DefaultContext, OldLabel: "a/" + path, NewLabel: "b/" + path})
		if err != nil {
			return nil, err
		}
		return res.Doc.View(), nil
	}
	replace := func(ws *workspace.Workspace, path string, text []byte) error {
		_, err := ws.WriteFile(path, text, workspace.WriteOptions{Mode: workspace.ReplaceOnly})
		return err
	}
	written := &editor{name: "WriteFile", root: e.roots["parts"], apply: func(c editCase, path string, from int) error {
		return replace(e.parts, path, []byte(c.states[1-from]))
	}}
	read := &editor{name: "read and compare", apply: func(c editCase, path string, _ int) error {
		return readCompare(e.parts, path, c.states[written.state])
	}}
	planned := &editor{name: "plan and apply", apply: func(c editCase, path string, from int) error {
		_, err := planApply(c, path, from)
		return err
	}}
	steps := &editor{name: "the three in turn", root: e.roots["steps"], apply: func(c editCase, path string, from int) error {
		if err := readCompare(e.steps, path, c.states[from]); err != nil {
			return err
		}
		text, err := planApply(c, path, from)
		if err != nil {
			return err
		}
		return replace(e.steps, path, text)
	}}
	eds := []*editor{
		written, read, planned, steps,
		{name: "raw durable write", root: e.roots["floor"], apply: func(c editCase, path string, from int) error {
			return floor.DurableWrite(filepath.Join(e.roots["floor"], path), []byte(c.states[1-from]))
		}},
		{name: "raw atomic write, no fsync", root: e.roots["floor-nofsync"], apply: func(c editCase, path string, from int) error {
			return floor.AtomicWrite(filepath.Join(e.roots["floor-nofsync"], path), []byte(c.states[1-from]))
		}},
		{name: "raw in-place overwrite (the peer's write)", root: e.roots["floor-inplace"], apply: func(c editCase, path string, from int) error {
			return overwrite(filepath.Join(e.roots["floor-inplace"], path), []byte(c.states[1-from]))
		}},
		{name: "gRPC Edit", root: e.roots["durable"], apply: grpcEdit(e.durable.c)},
		{name: "gRPC Edit, --fsync=false", root: e.roots["nofsync"], apply: grpcEdit(e.nofsync.c)},
		{name: "in-process Edit", root: e.roots["engine"], apply: grpcEdit(e.engine.Client)},
		// Not an edit: what one round trip to hashlined costs by itself.
		{name: "empty gRPC call", apply: func(editCase, string, int) error {
			_, err := healthpb.NewHealthClient(e.durable.conn).Check(ctx, &healthpb.HealthCheckRequest{})
			return err
		}},
	}
	for _, m := range []struct{ name, root string }{
		{"hashline mcp", "mcp"}, {"hashline mcp --fsync=false", "mcp-nofsync"}, {"peer", "peer"},
	} {
		if s, ok := e.mcps[m.name]; ok {
			eds = append(eds, &editor{name: m.name + " edit_file", root: e.roots[m.root], apply: mcpEdit(s)})
		}
	}
	return eds
}

// edits: one replaced line, and a batch of ten, on each file size. Each
// case is measured in several runs, each alternating only the contenders
// one table compares. On two cores the work a process does after answering
// (Go's or Bun's garbage collection after a large edit) lands in whichever
// call comes next, so a contender that is not compared is kept out of the
// run; durable and unsynced writers run apart, because the next fsync,
// whoever makes it, flushes what an unsynced write left dirty; and every
// call is followed by a pause (-settle) in which the background work of
// writes is done, as between an agent's calls.
func (e *env) edits() error {
	byName := map[string]*editor{}
	for _, ed := range e.editors() {
		byName[ed.name] = ed
	}
	const (
		durable = "raw durable write"
		atomic  = "raw atomic write, no fsync"
		inPlace = "raw in-place overwrite (the peer's write)"
		grpcEd  = "gRPC Edit"
		grpcNo  = "gRPC Edit, --fsync=false"
		inProc  = "in-process Edit"
		empty   = "empty gRPC call"
		mcpEd   = "hashline mcp edit_file"
		mcpNo   = "hashline mcp --fsync=false edit_file"
		peerEd  = "peer edit_file"
		ours    = "WriteFile"
		reading = "read and compare"
		plan    = "plan and apply"
		inTurn  = "the three in turn"
	)
	// A group is one table. Each of its runs alternates only its own
	// contenders; a group with no runs reads the medians of the groups
	// before it in the same case.
	type group struct {
		t    *table
		runs [][]string
		row  func(n int, label string, med map[string]time.Duration) []string
	}
	groups := []*group{{
		t: &table{
			title: "Edit over gRPC against its floor",
			about: "The floor of an Edit is a raw durable write of the same bytes (temp file, fsync, rename, fsync of the directory) plus one empty gRPC call (`grpc.health.v1.Health/Check`) to the same `hashlined`, both alternated with the Edit in one run; in-process Edit, the same service called with no transport and no interceptors (bench/direct.go), is given against the raw write alone. " +
				"The unsynced pair, a raw write without fsync and `hashlined --fsync=false` (unsafe, for comparison only), runs apart, against that write plus the same empty call.",
			cols: []string{"file", "edit", durable, empty, "floor", grpcEd, inProc, atomic, grpcNo},
		},
		// The Edit's steps run in the same alternation, so that the bound
		// of its target (the floor plus what the Edit cannot skip: its
		// write's checks, the read it verifies the refs against, its plan,
		// done in turn as the Edit does them) and the table of the steps
		// come from the same calls.
		runs: [][]string{{durable, empty, grpcEd, inProc, ours, reading, plan, inTurn}, {atomic, grpcNo}},
		row: func(n int, label string, med map[string]time.Duration) []string {
			fl := med[durable] + med[empty]
			t := e.report.atMost(fmt.Sprintf("gRPC Edit p50, %s, %s: floor", lineLabel(n), label), float64(med[grpcEd])/float64(fl), 1.15)
			t.bound = float64(fl+med[inTurn]-med[durable]) / float64(fl)
			return []string{ms(med[durable]), ms(med[empty]), ms(fl),
				fmt.Sprintf("%s (%s)", ms(med[grpcEd]), ratio(med[grpcEd], fl)),
				fmt.Sprintf("%s (%s)", ms(med[inProc]), ratio(med[inProc], med[durable])),
				ms(med[atomic]),
				fmt.Sprintf("%s (%s)", ms(med[grpcNo]), ratio(med[grpcNo], med[atomic]+med[empty]))}
		},
	}}
	mcp := &group{
		t: &table{
			title: "edit_file over MCP stdio: the peer and ours",
			about: "`edit_file` with `set_line` items from the same Go MCP client. The peer writes in place and never fsyncs, so it runs alternated with `hashline mcp --fsync=false` (still atomic) and the raw in-place overwrite it does and the raw atomic write without fsync that ours does (ratio: the peer's time over ours; the next column is each call less its raw write); the durable `hashline mcp` runs apart, against the raw durable write.",
			cols:  []string{"file", "edit", inPlace, atomic, "peer", "hashline mcp --fsync=false", "less the write: peer / ours", durable, "hashline mcp"},
		},
		runs: [][]string{{inPlace, atomic, mcpNo}, {durable, mcpEd}},
		row: func(n int, label string, med map[string]time.Duration) []string {
			peer, ours, beyond := "—", ms(med[mcpNo]), "— / "+ms(med[mcpNo]-med[atomic])
			if d, ok := med[peerEd]; ok {
				peer = ms(d)
				ours += fmt.Sprintf(" (%s)", ratio(d, med[mcpNo]))
				beyond = ms(d-med[inPlace]) + " / " + ms(med[mcpNo]-med[atomic])
				e.report.peerTarget(fmt.Sprintf("`hashline mcp --fsync=false` edit_file, %s, %s", lineLabel(n), label), n, d, med[mcpNo], 0)
			}
			return []string{ms(med[inPlace]), ms(med[atomic]), peer, ours, beyond, ms(med[durable]), fmt.Sprintf("%s (%s)", ms(med[mcpEd]), ratio(med[mcpEd], med[durable]))}
		},
	}
	if _, ok := byName[peerEd]; ok {
		mcp.runs[0] = append(mcp.runs[0], peerEd)
	}
	groups = append(groups, &group{
		t: &table{
			title: "Where an Edit's time goes",
			about: "The engine's Edit in this process (as in the first table, no RPC) beside its steps, alternated with the first table's contenders in its run: the write (`workspace.WriteFile`: the checks of the file it replaces, temp file, fsync, rename, fsync of the directory), the read of the file compared byte for byte with the text the engine holds, and the plan and apply in memory (refs checked, new text, diff and windows), each alone, then the three in turn on a file of their own, as an Edit does them. " +
				"What the Edit takes beyond the three in turn is the work of the call itself (the client, the interceptors, the lock, the agent's view and the response).",
			cols: []string{"file", "edit", durable, ours, reading, plan, inTurn, inProc, "the call itself"},
		},
		row: func(n int, label string, med map[string]time.Duration) []string {
			return []string{ms(med[durable]), fmt.Sprintf("%s (%s)", ms(med[ours]), ratio(med[ours], med[durable])), ms(med[reading]), ms(med[plan]),
				fmt.Sprintf("%s (%s)", ms(med[inTurn]), ratio(med[inTurn], med[durable])), fmt.Sprintf("%s (%s)", ms(med[inProc]), ratio(med[inProc], med[durable])), ms(med[inProc] - med[inTurn])}
		},
	}, mcp)
	for _, n := range sizes {
		for _, k := range []int{1, 10} {
			c := newEditCase(fmt.Sprintf("%d", k), n, k)
			path := fmt.Sprintf("e%d_%d.go", k, n)
			// Agents must have read a file before editing it.
			if err := e.readFirst(path, c.lines); err != nil {
				return err
			}
			for _, ed := range byName {
				ed.state = 0 // every file starts in state 0
			}
			label := "1 line replaced"
			if k > 1 {
				label = fmt.Sprintf("%d-edit batch", k)
			}
			med := map[string]time.Duration{}
			for _, g := range groups {
				for _, names := range g.runs {
					var cs []contender
					for _, name := range names {
						ed := byName[name]
						cs = append(cs, contender{name: ed.name, op: func() error {
							if err := ed.apply(c, path, ed.state); err != nil {
								return err
							}
							ed.state = 1 - ed.state
							return nil
						}})
					}
					s, err := interleaveSettled(cs, e.cfg.budget, e.cfg.minRounds, 1000, e.cfg.settle)
					if err != nil {
						return err
					}
					for i, name := range names {
						med[name] = stats.Median(s[i])
					}
				}
				row := g.row(n, label, med)
				g.t.rows = append(g.t.rows, append([]string{lineLabel(n), label}, row...))
				log.Printf("%s, %s %s: %v", g.t.title, lineLabel(n), label, row)
			}
			// Every contender must have produced the same file.
			for _, ed := range byName {
				if ed.root == "" {
					continue
				}
				got, err := os.ReadFile(filepath.Join(ed.root, path))
				if err != nil {
					return err
				}
				if string(got) != c.states[ed.state] {
					return fmt.Errorf("%s left %s in an unexpected state (%d bytes, want %d)", ed.name, path, len(got), len(c.states[ed.state]))
				}
			}
		}
	}
	for _, g := range groups {
		e.report.add(g.t)
	}
	return nil
}

// readFirst reads path through every server, as an agent would before
// editing it: each line the edits will reference, so that the server has
// shown the agent every line it refers to (a reference to a line never
// shown is refused). The edits' replies then show the lines they change.
func (e *env) readFirst(path string, lines []int) error {
	ctx := context.Background()
	for _, ln := range lines {
		for _, c := range []*client.Client{e.durable.c, e.nofsync.c, e.engine.Client} {
			if _, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: path, Offset: int32(ln), Limit: 1}); err != nil {
				return err
			}
		}
		for _, m := range e.mcps {
			if _, err := m.call("read_file", map[string]any{"path": path, "offset": ln, "limit": 1}); err != nil {
				return err
			}
		}
	}
	return nil
}

// overwrite writes data over path in place the way Bun.write does: no
// O_TRUNC, then truncate to the new length.
func overwrite(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
