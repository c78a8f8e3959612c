// Command bench measures hashline against its floors and the published
// peer, alternating the contenders within one run, and writes the results
// to BENCHMARKS.md between its own markers (keeping the grep section that
// bench-grep owns). `make bench` runs it from this directory, the bench
// module, which builds the real binaries of the main module and drives them;
// see BENCHMARKS.md for what each table measures and docs/DESIGN.md
// section 11 for the targets.
//
//	cd bench && go run . -out ../BENCHMARKS.md -peer ../tools/peer
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashline/hashline/bench/machine"
	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

type config struct {
	out       string
	peer      string
	budget    time.Duration
	loadDur   time.Duration
	loadRound int
	minRounds int
	settle    time.Duration
	steps     map[string]bool // -only; empty runs every step
	// -only watchload (see watchLoad).
	duration time.Duration
	workers  int
	watchers int
}

// stepKeys are the names -only accepts, in the order the steps run.
var stepKeys = []string{"read", "mcp", "edit", "apply", "history", "syntax", "load", "start"}

// soloSteps run only when named alone in -only, and write no report.
var soloSteps = []string{"watchload"}

func main() {
	var c config
	flag.StringVar(&c.out, "out", "../BENCHMARKS.md", "report to write (its grep section is kept)")
	flag.StringVar(&c.peer, "peer", "../tools/peer", "directory whose node_modules holds bun and mcp-hashline-edit-server (npm ci there); empty skips the peer")
	flag.DurationVar(&c.budget, "budget", 4*time.Second, "time per table row, counting only the timed calls (every row runs at least -min-rounds rounds)")
	flag.IntVar(&c.minRounds, "min-rounds", 15, "fewest rounds per table row")
	flag.DurationVar(&c.settle, "settle", 2*time.Millisecond, "pause after every call in the Edit tables, so each call starts with the background work of the one before done")
	flag.DurationVar(&c.loadDur, "load-duration", time.Second, "length of one load run")
	flag.IntVar(&c.loadRound, "load-rounds", 5, "load runs per contender and concurrency, alternated")
	flag.DurationVar(&c.duration, "duration", time.Minute, "-only watchload: length of each of its two runs")
	flag.IntVar(&c.workers, "workers", 64, "-only watchload: workers doing Read+Edit")
	flag.IntVar(&c.watchers, "watchers", 1000, "-only watchload: Watch streams that never read, in the second run")
	only := flag.String("only", "", "comma-separated steps to run (read, mcp, edit, apply, history, syntax, load, start); empty runs them all. A partial run is for measuring: write it to another -out. "+
		"watchload runs alone and prints its results instead of writing a report: Edit latency with and without stalled Watch streams")
	flag.Parse()
	log.SetFlags(log.Ltime)
	c.steps = map[string]bool{}
	for k := range strings.SplitSeq(*only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			if !slices.Contains(stepKeys, k) && !slices.Contains(soloSteps, k) {
				log.Fatalf("-only: unknown step %q; use %s", k, strings.Join(append(stepKeys, soloSteps...), ", "))
			}
			c.steps[k] = true
		}
	}
	if c.steps["watchload"] {
		if len(c.steps) > 1 {
			log.Fatal("-only: watchload runs alone")
		}
		if c.duration <= 0 || c.workers < 1 || c.watchers < 1 {
			log.Fatal("-duration, -workers and -watchers must be positive")
		}
		if err := watchLoad(c); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(c); err != nil {
		log.Fatal(err)
	}
}

// env is everything the tables run against.
type env struct {
	cfg     config
	tmp     string
	durable *server // hashlined, fsync on
	nofsync *server // hashlined --fsync=false
	// prebuilt answers a Read of the durable root's files with a response
	// built once (bench/prebuilt): the transport alone.
	prebuilt *server
	engine   *direct // the service in this process, no transport, fsync on
	// parts writes and reads as the engine's Edit does, a step at a time
	// (the table "Where an Edit's time goes"), fsync on.
	parts  *workspace.Workspace
	steps  *workspace.Workspace          // the same steps in turn, on a file of their own
	docs   map[string]*hashline.Document // parsed edit-case states, as the engine caches them
	mcps   map[string]*mcpServer
	echo   string // bench/mcpecho, built: an MCP server that does no work
	roots  map[string]string
	report *report
	rev    int // the last revision bump wrote
}

func run(c config) error {
	tmp, err := os.MkdirTemp("", "hashline-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The servers and engines started here keep their state
	// (internal/state) under $XDG_STATE_HOME: in this run's directory,
	// not in the user's.
	if err := os.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state")); err != nil {
		return err
	}
	e := &env{cfg: c, tmp: tmp, mcps: map[string]*mcpServer{}, roots: map[string]string{}, docs: map[string]*hashline.Document{}, report: newReport()}
	defer e.close()

	log.Print("building hashlined, hashline and prebuilt")
	defer binarytest.Cleanup()
	hashlined, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		return err
	}
	hashlineBin, err := binarytest.Build(binarytest.Hashline)
	if err != nil {
		return err
	}
	prebuiltBin, err := binarytest.Build("github.com/hashline/hashline/bench/prebuilt")
	if err != nil {
		return err
	}
	if e.echo, err = binarytest.Build("github.com/hashline/hashline/bench/mcpecho"); err != nil {
		return err
	}
	for _, name := range []string{"durable", "nofsync", "engine", "parts", "steps", "mcp", "mcp-nofsync", "peer", "floor", "floor-nofsync", "floor-inplace"} {
		e.roots[name] = filepath.Join(tmp, name)
		if err := writeFixtures(e.roots[name]); err != nil {
			return err
		}
	}
	if e.durable, err = startDaemon(hashlined, e.roots["durable"]); err != nil {
		return err
	}
	if e.prebuilt, err = startServer(prebuiltBin, "--root", e.roots["durable"], "--listen", "127.0.0.1:0"); err != nil {
		return err
	}
	// The service itself, called with no transport.
	if e.engine, err = startDirect(e.roots["engine"], client.WithAgentID("bench")); err != nil {
		return err
	}
	if e.parts, err = workspace.Open(e.roots["parts"]); err != nil {
		return err
	}
	if e.steps, err = workspace.Open(e.roots["steps"]); err != nil {
		return err
	}
	if e.nofsync, err = startDaemon(hashlined, e.roots["nofsync"], "--fsync=false"); err != nil {
		return err
	}
	starts := []struct {
		name, root string
		argv       []string
	}{
		{"hashline mcp", e.roots["mcp"], []string{hashlineBin, "mcp", "--root", e.roots["mcp"]}},
		{"hashline mcp --fsync=false", e.roots["mcp-nofsync"], []string{hashlineBin, "mcp", "--fsync=false", "--root", e.roots["mcp-nofsync"]}},
		{"hashline mcp --server", e.roots["durable"], []string{hashlineBin, "mcp", "--server", e.durable.proc.Addr}},
	}
	if c.peer != "" {
		dir, err := filepath.Abs(c.peer)
		if err != nil {
			return err
		}
		bun := filepath.Join(dir, "node_modules", ".bin", "bun")
		entry := filepath.Join(dir, "node_modules", "mcp-hashline-edit-server", "src", "index.ts")
		if _, err := os.Stat(entry); err != nil {
			return fmt.Errorf("the peer is not installed (%v); run npm ci in %s, or pass -peer=''", err, c.peer)
		}
		starts = append(starts, struct {
			name, root string
			argv       []string
		}{"peer", e.roots["peer"], []string{bun, entry}})
		if v, err := exec.Command(bun, "--version").Output(); err == nil {
			e.report.env = append(e.report.env, "bun "+strings.TrimSpace(string(v))+", mcp-hashline-edit-server 0.2.0 (tools/peer/package-lock.json)")
		}
	}
	for _, s := range starts {
		m, err := startMCP(s.name, s.root, s.argv...)
		if err != nil {
			return err
		}
		m.dir = s.root
		e.mcps[s.name] = m
	}
	e.describeMachine()

	type step struct {
		key, name string
		fn        func() error
	}
	steps := []step{
		{"read", "read over gRPC", e.readGRPC},
		{"mcp", "read_file over MCP", e.readMCP},
		{"edit", "edit", e.edits},
		{"apply", "change set", func() error { return e.applySet(hashlined) }},
		{"history", "change history", e.historyRows},
		{"syntax", "syntax check", func() error { return e.syntaxRows(hashlined) }},
		{"load", "load", e.load},
		{"start", "process start-up", func() error { return e.startup(hashlineBin) }},
	}
	for _, step := range steps {
		if len(c.steps) > 0 && !c.steps[step.key] {
			continue
		}
		log.Printf("== %s", step.name)
		if err := step.fn(); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	e.report.env = append(e.report.env, "load average at the end: "+machine.LoadAvg())
	return e.report.write(c.out)
}

func (e *env) close() {
	for _, m := range e.mcps {
		m.close()
	}
	for _, d := range []*server{e.durable, e.nofsync, e.prebuilt} {
		if d != nil {
			d.close()
		}
	}
	if e.engine != nil {
		e.engine.Close()
	}
	for _, ws := range []*workspace.Workspace{e.parts, e.steps} {
		if ws != nil {
			ws.Close()
		}
	}
}

// writeFixtures creates the files of every table in root: rN.go to read,
// e1_N.go and e10_N.go to edit, wI.go for the load test's editors.
func writeFixtures(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	put := func(name, content string) error {
		return os.WriteFile(filepath.Join(root, name), []byte(content), 0o644)
	}
	for _, n := range sizes {
		src := sourceFile(n)
		if err := errors.Join(put(fmt.Sprintf("r%d.go", n), src), put(fmt.Sprintf("e1_%d.go", n), src), put(fmt.Sprintf("e10_%d.go", n), src)); err != nil {
			return err
		}
	}
	for i := range maxConcurrency {
		if err := put(fmt.Sprintf("w%d.go", i), sourceFile(100)); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) describeMachine() {
	// The report being rewritten is not a change to what is measured.
	e.report.env = append([]string{
		machine.Summary(),
		fmt.Sprintf("commit %s, %s", machine.Commit(e.cfg.out), time.Now().UTC().Format("2006-01-02 15:04 UTC")),
		"load average at the start: " + machine.LoadAvg(),
	}, e.report.env...)
}

// readGRPC: a Read of a whole file over gRPC against its floor, in-process
// tagging plus the same response from prebuilt (what moving it between
// processes costs). Each gRPC contender runs alternated with both parts of
// the floor in a run of its own: the default response allocates a message
// per line on both sides, and its garbage would be collected in whichever
// call comes next.
func (e *env) readGRPC() error {
	t := &table{
		title: "Read over gRPC against its floor",
		about: "The floor of a Read is tagging the file in this process (read, split, hash, format: what a Read with `omitLines` returns) plus the same response from `bench/prebuilt`, a server that built it once (the transport alone); the file is changed before every call, untimed, so that the server reads, hashes and parses it anew. " +
			"Each gRPC column is its own run, alternated with the floor's two parts, and its ratio is to that run's floor; the floor columns are those of the first run.",
		cols: []string{"file", "in-process tagging", "prebuilt response", "floor", "gRPC Read, text only", "gRPC Read, text and lines", "gRPC Read, text only, file unchanged"},
	}
	ctx := context.Background()
	for _, n := range sizes {
		path := fmt.Sprintf("r%d.go", n)
		full := filepath.Join(e.roots["durable"], path)
		var sink []byte
		read := func(c *client.Client, omit bool) func() error {
			return func() error {
				r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: path, OmitLines: omit})
				wantLines := n
				if omit {
					wantLines = 0
				}
				if err == nil && (r.GetTruncated() || int(r.GetTotalLines()) != n || len(r.GetLines()) != wantLines || strings.Count(r.GetText(), "\n") != n-1) {
					err = fmt.Errorf("read %d of %d lines (truncated %v)", len(r.GetLines()), r.GetTotalLines(), r.GetTruncated())
				}
				return err
			}
		}
		tag := func() error {
			b, err := os.ReadFile(full)
			if err != nil {
				return err
			}
			d := hashline.ParseDocument(b)
			sink = hashline.AppendTagged(sink[:0], hashline.Hasher{}, d, 1, d.Len(), 4096)
			return nil
		}
		changed := func() error { return e.bump(full) }
		row := []string{lineLabel(n), "", "", ""}
		for i, c := range []contender{
			{name: "gRPC text only", op: read(e.durable.c, true), prep: changed},
			{name: "gRPC text and lines", op: read(e.durable.c, false), prep: changed},
			{name: "gRPC text only, unchanged", op: read(e.durable.c, true)},
		} {
			prep := c.prep
			s, err := interleave([]contender{
				{name: "in-process tagging", op: tag, prep: prep},
				{name: "prebuilt", op: read(e.prebuilt.c, true), prep: prep},
				c,
			}, e.cfg.budget/3, e.cfg.minRounds, 2000)
			if err != nil {
				return err
			}
			tagged, moved, got := stats.Median(s[0]), stats.Median(s[1]), stats.Median(s[2])
			floor := tagged + moved
			if i == 0 {
				row[1], row[2], row[3] = ms(tagged), ms(moved), ms(floor)
				if n == 10_000 {
					e.report.atMost("gRPC Read of 10k lines, text only, file changed: floor", float64(got)/float64(floor), 1.25)
				}
			}
			row = append(row, fmt.Sprintf("%s (%s)", ms(got), ratio(got, floor)))
			log.Printf("read %s, %s: %s; tagging %s + prebuilt %s (%d rounds)", lineLabel(n), c.name, ms(got), ms(tagged), ms(moved), len(s[0]))
		}
		t.rows = append(t.rows, row)
	}
	e.report.add(t)
	return nil
}

// bump changes the file at path in place, untimed, keeping its length and
// its lines: bytes 1-7 of its first line (a fixture's "v000000") become a
// new revision number ("r000001", ...), so that the next read sees bytes
// no server has read before.
func (e *env) bump(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	e.rev++
	_, err = f.WriteAt([]byte(fmt.Sprintf("r%06d", e.rev%1_000_000)), 1)
	return errors.Join(err, f.Close())
}

// readMCP: read_file over MCP stdio, the peer vs ours.
func (e *env) readMCP() error {
	const echo = "no server work"
	names := e.mcpNames("hashline mcp", "hashline mcp --server")
	t := &table{
		title: "read_file over MCP stdio: the peer and ours",
		about: "`read_file {\"path\": FILE, \"limit\": 2000}` from the same Go MCP client to each server's stdin, alternated; the file is changed before every call (ours cannot answer from what it kept) except in the rows marked unchanged, and `ping` is one JSON-RPC round trip with no tool behind it. " +
			"`hashline mcp` is a client of the root's one engine (a `hashline engine` process it starts, over the root's unix socket); `hashline mcp --server` forwards to `hashlined` over gRPC; the last column is `bench/mcpecho`, which answers with hashline mcp's reply for the file, serialised once, and does no other work: the client and the pipe alone. Ratios are the peer's time over each server's, so the last one is the most any server could reach.",
		cols: append([]string{"file"}, names...),
	}
	// row measures one call on every server, alternated, each after its
	// prep (if not nil), and adds its row; n > 0 makes the row a target of
	// `hashline mcp` against the peer.
	row := func(label string, n int, prep, call func(m *mcpServer) error) error {
		var cs []contender
		for _, name := range names {
			m := e.mcps[name]
			c := contender{name: name, op: func() error { return call(m) }}
			if prep != nil {
				c.prep = func() error { return prep(m) }
			}
			cs = append(cs, c)
		}
		s, err := interleave(cs, e.cfg.budget, e.cfg.minRounds, 2000)
		if err != nil {
			return err
		}
		r := []string{label}
		peer, hasPeer := indexOf(names, "peer")
		for i := range names {
			cell := ms(stats.Median(s[i]))
			if hasPeer && i != peer {
				cell += fmt.Sprintf(" (%s)", ratio(stats.Median(s[peer]), stats.Median(s[i])))
				// The peer is one process, like `hashline mcp`; the
				// --server mode adds a hop the peer has no counterpart
				// for, so it is reported, not a target.
				if n > 0 && names[i] == "hashline mcp" {
					var noWork time.Duration
					if j, ok := indexOf(names, echo); ok {
						noWork = stats.Median(s[j])
					}
					e.report.peerTarget("`hashline mcp` read_file, "+label+", file changed", n, stats.Median(s[peer]), stats.Median(s[i]), noWork)
				}
			}
			r = append(r, cell)
		}
		t.rows = append(t.rows, r)
		log.Printf("MCP %s: %v", label, r[1:])
		return nil
	}
	// The floor: the same replies from a server that does no work. They
	// are the text hashline mcp answers for each file.
	if ours, ok := e.mcps["hashline mcp"]; ok {
		dir := filepath.Join(e.tmp, "echo")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, n := range sizes {
			path := fmt.Sprintf("r%d.go", n)
			text, err := ours.call("read_file", map[string]any{"path": path, "limit": 2000})
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, path), []byte(text), 0o644)
			}
			if err != nil {
				return err
			}
		}
		m, err := startMCP(echo, dir, e.echo, "-replies", dir)
		if err != nil {
			return err
		}
		defer m.close()
		m.dir = dir
		e.mcps[echo] = m
		defer delete(e.mcps, echo)
		names = append(names, echo)
		t.cols = append(t.cols, echo)
	}
	if err := row("ping", 0, nil, func(m *mcpServer) error { return m.ping() }); err != nil {
		return err
	}
	for _, n := range sizes {
		path := fmt.Sprintf("r%d.go", n)
		readPage := func(m *mcpServer) error {
			text, err := m.call("read_file", map[string]any{"path": path, "limit": 2000})
			if err == nil && strings.Count(text, "\n") < min(n, 2000) {
				err = fmt.Errorf("short read: %.200s", text)
			}
			return err
		}
		changed := func(m *mcpServer) error { return e.bump(filepath.Join(m.dir, path)) }
		if err := row(lineLabel(n), n, changed, readPage); err != nil {
			return err
		}
		if err := row(lineLabel(n)+", unchanged", 0, nil, readPage); err != nil {
			return err
		}
	}
	e.report.add(t)
	return nil
}

// mcpNames lists the started MCP servers among want, peer first.
func (e *env) mcpNames(want ...string) []string {
	var out []string
	if _, ok := e.mcps["peer"]; ok {
		out = append(out, "peer")
	}
	for _, w := range want {
		if _, ok := e.mcps[w]; ok {
			out = append(out, w)
		}
	}
	return out
}

func indexOf(s []string, v string) (int, bool) {
	for i, x := range s {
		if x == v {
			return i, true
		}
	}
	return -1, false
}

func lineLabel(n int) string {
	switch {
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk lines", n/1000)
	default:
		return fmt.Sprintf("%d lines", n)
	}
}
