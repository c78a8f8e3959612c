package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/floor"
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
	eds := []*editor{
		{name: "raw durable write", root: e.roots["floor"], apply: func(c editCase, path string, from int) error {
			return floor.DurableWrite(filepath.Join(e.roots["floor"], path), []byte(c.states[1-from]))
		}},
		{name: "raw atomic write, no fsync", root: e.roots["floor-nofsync"], apply: func(c editCase, path string, from int) error {
			return floor.AtomicWrite(filepath.Join(e.roots["floor-nofsync"], path), []byte(c.states[1-from]))
		}},
		{name: "raw durable write, old file freed after", root: e.roots["floor-held"], apply: func(c editCase, path string, from int) error {
			return floor.DurableWriteHeld(filepath.Join(e.roots["floor-held"], path), []byte(c.states[1-from]))
		}},
		{name: "raw atomic write, no fsync, old file freed after", root: e.roots["floor-nofsync-held"], apply: func(c editCase, path string, from int) error {
			return floor.AtomicWriteHeld(filepath.Join(e.roots["floor-nofsync-held"], path), []byte(c.states[1-from]))
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
// case is measured in several runs, each alternating only the contenders one
// table compares: the service against the floors, the MCP bridge against
// the floors, and the MCP servers against the peer. On two cores the work a
// process does after answering (Go's or Bun's garbage collection after a
// large edit) lands in whichever call comes next, so a contender that is
// not compared is kept out of the run; and every call is followed by a
// pause (-settle) in which the background work of writes is done.
func (e *env) edits() error {
	byName := map[string]*editor{}
	for _, ed := range e.editors() {
		byName[ed.name] = ed
	}
	const (
		durable = "raw durable write"
		held    = "raw durable write, old file freed after"
		atomic  = "raw atomic write, no fsync"
		atHeld  = "raw atomic write, no fsync, old file freed after"
		inPlace = "raw in-place overwrite (the peer's write)"
		grpcEd  = "gRPC Edit"
		grpcNo  = "gRPC Edit, --fsync=false"
		inProc  = "in-process Edit"
		empty   = "empty gRPC call"
		mcpEd   = "hashline mcp edit_file"
		mcpNo   = "hashline mcp --fsync=false edit_file"
		peerEd  = "peer edit_file"
	)
	floors := "Raw durable write (the floor, `internal/floor`): write the new bytes to a temp file, fsync, rename, fsync the directory. " +
		"Raw atomic write, no fsync: the same without the two fsyncs; on ext4 (the default `auto_da_alloc`) renaming over an existing file still starts writeback of the new data, which is most of its cost. " +
		"The same two, old file freed after: they hold the file they replace open across the rename and close it in the background once done, so that the rename does not free its blocks (this disk is ext4 mounted with online discard, where freeing waits for the device); the work is the same, moved out of the call. " +
		"Raw in-place overwrite: what the peer's `Bun.write` does (checked with strace): open without `O_TRUNC`, write, `ftruncate`; not atomic (a crash or a concurrent reader can see old and new bytes mixed) and not durable. "
	// A group is one table. Each of its runs alternates only its own
	// contenders; durable and unsynced writers are kept in separate runs,
	// because the dirty data an unsynced write leaves behind is flushed by
	// the next fsync, whoever makes it.
	type group struct {
		t    *table
		runs [][]string
		row  func(n int, label string, med map[string]time.Duration) []string
	}
	// vsFirst formats a run's contenders, each with its ratio to the
	// run's first one.
	vsFirst := func(names []string, med map[string]time.Duration) []string {
		base := med[names[0]]
		row := []string{ms(base)}
		for _, name := range names[1:] {
			row = append(row, fmt.Sprintf("%s (%s)", ms(med[name]), ratio(med[name], base)))
		}
		return row
	}
	serviceDurable := []string{durable, held, grpcEd, inProc, empty}
	serviceUnsynced := []string{atomic, atHeld, inPlace, grpcNo}
	bridgeDurable := []string{durable, held, mcpEd}
	bridgeUnsynced := []string{atomic, atHeld, mcpNo}
	groups := []*group{{
		t: &table{
			title: "Edit: the service against the physical floor",
			about: "Every contender toggles its own copy of the file between the same two states, so each call writes the same bytes. " + floors +
				"gRPC Edit: `hashlined` on loopback (refs checked, batch planned and applied, diff and fresh windows computed, atomic durable write). " +
				"In-process Edit: the same service and interceptors in this process (`internal/local`, as `hashline mcp` runs it), durable, with no RPC: the difference to gRPC Edit is the round trip between processes. " +
				"Empty gRPC call: `grpc.health.v1.Health/Check` on the same `hashlined`, alternated with the edits: the cost of one round trip between processes when the machine is not busy with calls, which every gRPC Edit pays on top of its work. " +
				"`--fsync=false` is the same server with fsync off (unsafe: a crash can lose acknowledged edits; for benchmarks only); its temp files are allocated before they are filled, so that the rename starts no writeback (README, \"How a write lands\"). " +
				"Every call is followed by an untimed pause (`-settle`), so that what a write leaves running in the background (the floors that free the old file after close it; the Go runtime's own background work) is done before the next call, as between an agent's calls. The pause is short (2 ms by default) to keep the number of calls up; a longer one, nearer the seconds between an agent's calls, makes every contender slower, the floors included (README, Benchmarks). " +
				"Two runs per case: the durable contenders alternate in one, each with its ratio to the raw durable write; the unsynced ones in another, each with its ratio to the raw atomic write. Target: gRPC Edit <= 1.5x the raw durable write (the plain one, as issue 7 defines the floor).",
			cols: append(append([]string{"file", "edit"}, serviceDurable...), serviceUnsynced...),
		},
		runs: [][]string{serviceDurable, serviceUnsynced},
		row: func(n int, label string, med map[string]time.Duration) []string {
			e.report.targetNote(fmt.Sprintf("gRPC Edit p50 <= 1.5x raw durable write (%s, %s)", lineLabel(n), label),
				float64(med[grpcEd])/float64(med[durable]), 1.5, editBudget(med[durable], med[inProc], med[empty]))
			return append(vsFirst(serviceDurable, med), vsFirst(serviceUnsynced, med)...)
		},
	}, {
		t: &table{
			title: "Edit: the MCP bridge against the physical floor",
			about: "edit_file calls go through MCP stdio with `set_line` items to `hashline mcp` (the engine in-process). As above, two runs per case: durable against the raw durable write, unsynced against the raw atomic write.",
			cols:  append(append([]string{"file", "edit"}, bridgeDurable...), bridgeUnsynced...),
		},
		runs: [][]string{bridgeDurable, bridgeUnsynced},
		row: func(_ int, _ string, med map[string]time.Duration) []string {
			return append(vsFirst(bridgeDurable, med), vsFirst(bridgeUnsynced, med)...)
		},
	}}
	if _, ok := byName[peerEd]; ok {
		groups = append(groups, &group{
			t: &table{
				title: "edit_file over MCP stdio: the peer and `hashline mcp`",
				about: "A run of its own per case, alternating only these contenders, none of which fsyncs (the dirty data an unsynced write leaves is flushed by the next fsync, whoever makes it, so durable writers run apart: the durable `hashline mcp` is in the bridge table above). " +
					"The peer never fsyncs and writes in place, so `hashline mcp --fsync=false` is the comparable operation, and the target; it still pays for atomicity (a temp file and a rename; the raw rows above price them, though ours allocates the temp file's blocks before filling it, which spares the rename the writeback the raw atomic write starts). " +
					"Ratio: the peer's median over ours (higher is better for us).",
				cols: []string{"file", "edit", "raw in-place overwrite", "hashline mcp --fsync=false", "peer", "peer / ours"},
			},
			runs: [][]string{{inPlace, mcpNo, peerEd}},
			row: func(n int, label string, med map[string]time.Duration) []string {
				r := float64(med[peerEd]) / float64(med[mcpNo])
				e.report.target(fmt.Sprintf("`%s` faster than the peer (%s, %s)", mcpNo, lineLabel(n), label), r, -1)
				return []string{ms(med[inPlace]), ms(med[mcpNo]), ms(med[peerEd]), fmt.Sprintf("%.2fx", r)}
			},
		})
	}
	for _, n := range sizes {
		for _, k := range []int{1, 10} {
			c := newEditCase(fmt.Sprintf("%d", k), n, k)
			path := fmt.Sprintf("e%d_%d.go", k, n)
			// Agents must have read a file before editing it.
			if err := e.readFirst(path); err != nil {
				return err
			}
			for _, ed := range byName {
				ed.state = 0 // every file starts in state 0
			}
			label := "1 line replaced"
			if k > 1 {
				label = fmt.Sprintf("%d-edit batch", k)
			}
			for _, g := range groups {
				med := map[string]time.Duration{}
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
						med[name] = median(s[i])
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
// editing it.
func (e *env) readFirst(path string) error {
	ctx := context.Background()
	for _, c := range []*client.Client{e.durable.c, e.nofsync.c, e.engine.Client} {
		if _, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: path, Limit: 1}); err != nil {
			return err
		}
	}
	for _, m := range e.mcps {
		if _, err := m.call("read_file", map[string]any{"path": path, "limit": 1}); err != nil {
			return err
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

// editBudget says what the 1.5x limit leaves for a gRPC Edit once its
// parts measured alone are paid: the in-process Edit (engine and disk) and
// the empty call (the round trip between processes).
func editBudget(floor, inProc, empty time.Duration) string {
	return budget(1.5, floor, part{"in-process Edit", inProc}, part{"empty gRPC call", empty})
}
