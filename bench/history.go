package main

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// The targets of the change history (docs/DESIGN.md section 11).
const (
	historyEditLimit = 1.05 // an Edit with the history recorded, over one without
	blameLimit       = 20e6 // ns: Blame of a 10k-line file with 1,000 changes
	historyLimit     = 10e6 // ns: the last 100 changes of 100,000 logged
)

// historyCols are the columns of the history's table: every row of it
// has a cell for each.
var historyCols = []string{"operation", "without history", "with history", "with / without: median of rounds (95% CI), or target", "CPU per call: without, with (difference)"}

// historySettle is the pause after every call of the history's tables:
// the history writes an Edit's outcome within 5 ms of its call (a note,
// when no record follows), and that write belongs to the call that left
// it, not to the next one.
const historySettle = 10 * time.Millisecond

// historyRows measures what the change history costs and answers: an
// Edit of the service in this process (bench/direct.go) with the history
// recorded and without, alternated call by call, fsync on and off; Blame of a
// 10,000-line file with 1,000 changes in its history; History of the last
// 100 changes of a workspace with 100,000 logged.
func (e *env) historyRows() error {
	t := &table{
		title: "Change history: what recording costs an Edit, and its queries",
		about: "The service in this process with no transport (bench/direct.go). An Edit of one line with the change history recorded (its entry prepared and written to the history's file beside the content's sync, before the file is replaced; resolved after) against the same service without a history, on files of their own, in rounds of one call of each, the order rotating, every call followed by an untimed pause of " + historySettle.String() + " (the history writes an outcome within 5 ms): fsync on (the target) and, apart, off (the recording's own work, without the disk's waits). " +
			"The ratio is the median of the rounds' ratios of the two calls, with a 95% confidence interval of that median (order statistics): the disk's waits vary from call to call far more than recording costs, and only the interval says whether a ratio is the history's or the disk's. " +
			"CPU per call is the median CPU time of this process from a call's start to the end of its pause (the call's own and what it left in the background), and in brackets the median of the rounds' differences; " +
			"Apply of one-line edits of 10 files of 100 lines in 10 directories, with an intent log, fsync on, the same way (the set's entry is synced while its steps are done); " +
			"Blame of a 10,000-line file whose history holds its creation and 1,000 edits of a few lines each, every call reading the first page (2,000 lines) as Read does and attributing the whole file; History of the last 100 changes of a workspace whose history holds 100,000 (one-line edits of 1,000 files by 10 agents).",
		cols: historyCols,
	}
	dirs := map[string]string{}
	for _, name := range []string{"hist-on", "hist-off", "hist-on-nofsync", "hist-off-nofsync", "hist-blame", "hist-query"} {
		dirs[name] = filepath.Join(e.tmp, name)
		if err := writeFixtures(dirs[name]); err != nil {
			return err
		}
	}
	logAt := func(name string) (*history.Log, error) {
		return history.Open(filepath.Join(e.tmp, name+"-history"), history.Options{})
	}
	for _, fsync := range []bool{true, false} {
		suffix, label := "", "fsync on"
		if !fsync {
			suffix, label = "-nofsync", "fsync off"
		}
		if err := e.historyEditRows(t, logAt, dirs["hist-on"+suffix], dirs["hist-off"+suffix], fsync, label); err != nil {
			return err
		}
	}

	if err := e.historyApplyRow(t, logAt); err != nil {
		return err
	}
	blame, err := e.blameRow(dirs["hist-blame"])
	if err != nil {
		return err
	}
	t.rows = append(t.rows, blame)
	query, err := e.historyQueryRow(dirs["hist-query"])
	if err != nil {
		return err
	}
	t.rows = append(t.rows, query)
	e.report.add(t)
	return nil
}

// paired is a comparison of two contenders timed in rounds (rotate):
// without (contender 0) and with (contender 1).
type paired struct {
	without, with       time.Duration // wall p50
	ratio, lo, hi       float64       // median of the rounds' ratios, its 95% CI
	cpuWithout, cpuWith time.Duration // CPU per call p50
	cpuDiff             time.Duration // median of the rounds' CPU differences
	rounds              int
}

func pairOf(wall, cpu samples) paired {
	ratios := stats.Ratios(wall[1], wall[0])
	lo, hi := stats.MedianCI(ratios, 1.96)
	diffs := make([]time.Duration, min(len(cpu[0]), len(cpu[1])))
	for i := range diffs {
		diffs[i] = cpu[1][i] - cpu[0][i]
	}
	return paired{without: stats.Median(wall[0]), with: stats.Median(wall[1]),
		ratio: stats.Median(ratios), lo: lo, hi: hi,
		cpuWithout: stats.Median(cpu[0]), cpuWith: stats.Median(cpu[1]), cpuDiff: stats.Median(diffs), rounds: len(ratios)}
}

// row is the table's row of p, named what.
func (p paired) row(what string) []string {
	return []string{what, ms(p.without), ms(p.with), fmt.Sprintf("%.3fx (%.3f to %.3f)", p.ratio, p.lo, p.hi),
		fmt.Sprintf("%s, %s (%+.0f µs)", ms(p.cpuWithout), ms(p.cpuWith), float64(p.cpuDiff)/float64(time.Microsecond))}
}

func (p paired) String() string {
	return fmt.Sprintf("without %s, with %s, ratio %.3f (95%% CI %.3f to %.3f), CPU %s, %s (%+.0f µs), %d rounds",
		ms(p.without), ms(p.with), p.ratio, p.lo, p.hi, ms(p.cpuWithout), ms(p.cpuWith), float64(p.cpuDiff)/float64(time.Microsecond), p.rounds)
}

// historyEditRows adds the rows of an Edit with the history recorded and
// without, on the roots on and off, with fsync as given.
func (e *env) historyEditRows(t *table, logAt func(string) (*history.Log, error), onRoot, offRoot string, fsync bool, label string) error {
	ctx := context.Background()
	onLog, err := logAt(filepath.Base(onRoot))
	if err != nil {
		return err
	}
	defer onLog.Close()
	wsOpts := []workspace.Option{workspace.WithFsync(fsync)}
	on, err := startDirectWith(onRoot, wsOpts, []engine.Option{engine.WithHistory(onLog)}, client.WithAgentID("bench"))
	if err != nil {
		return err
	}
	defer on.Close()
	off, err := startDirectWith(offRoot, wsOpts, nil, client.WithAgentID("bench"))
	if err != nil {
		return err
	}
	defer off.Close()
	// The target's rows get the rounds a ratio of a few percent needs to
	// stand out of the disk's noise.
	budget, minRounds := e.cfg.budget, max(e.cfg.minRounds, 100)
	if fsync {
		budget, minRounds = 2*e.cfg.budget, max(e.cfg.minRounds, 300)
	}
	for _, n := range []int{100, 10_000} {
		c := newEditCase("1", n, 1)
		path := fmt.Sprintf("e1_%d.go", n)
		state := map[string]int{}
		edit := func(name string, d *direct) contender {
			return contender{name: name, op: func() error {
				from := state[name]
				_, err := d.Client.Edit(ctx, &hashlinev1.EditRequest{Path: path, Edits: []*hashlinev1.FileEdit{client.Replace(c.refs[from][0], "", c.newLine(from, c.lines[0]))}})
				if err == nil {
					state[name] = 1 - from
				}
				return err
			}}
		}
		wall, cpu, err := rotate([]contender{edit("off", off), edit("on", on)}, budget, minRounds, 5000, max(e.cfg.settle, historySettle))
		if err != nil {
			return err
		}
		p := pairOf(wall, cpu)
		if fsync {
			e.report.atMost(fmt.Sprintf("in-process Edit p50, %s, 1 line replaced, with the change history recorded: with / without, median of paired calls", lineLabel(n)), p.ratio, historyEditLimit)
		}
		t.rows = append(t.rows, p.row(fmt.Sprintf("Edit, %s, 1 line replaced, %s", lineLabel(n), label)))
		log.Printf("history: Edit %s, %s: %s", lineLabel(n), label, p)
		for name, root := range map[string]string{"on": onRoot, "off": offRoot} {
			got, err := os.ReadFile(filepath.Join(root, path))
			if err != nil {
				return err
			}
			if string(got) != c.states[state[name]] {
				return fmt.Errorf("the Edit %s history left %s in an unexpected state", name, path)
			}
		}
	}
	return nil
}

// historyApplyRow adds the row of a change set of ten one-line edits in
// ten directories (with an intent log, fsync on) with the history
// recorded and without.
func (e *env) historyApplyRow(t *table, logAt func(string) (*history.Log, error)) error {
	ctx := context.Background()
	src := sourceFile(100)
	names := make([]string, applyFiles)
	svc := map[string]*direct{}
	for _, name := range []string{"off", "on"} {
		root := filepath.Join(e.tmp, "hist-apply-"+name)
		for i := range names {
			names[i] = fmt.Sprintf("pkg%d/f%d.go", i, i)
			p := filepath.Join(root, names[i])
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				return err
			}
		}
		sd, err := state.Open(filepath.Join(e.tmp, "hist-apply-state-"+name), root)
		if err != nil {
			return err
		}
		intents, err := sd.Intents(true)
		if err != nil {
			return err
		}
		opts := []engine.Option{engine.WithIntentLog(intents)}
		if name == "on" {
			lg, err := logAt("hist-apply-on")
			if err != nil {
				return err
			}
			defer lg.Close()
			opts = append(opts, engine.WithHistory(lg))
		}
		d, err := startDirectWith(root, nil, opts, client.WithAgentID("bench"))
		if err != nil {
			return err
		}
		defer d.Close()
		svc[name] = d
	}
	c := newEditCase("1", 100, 1)
	at := map[string]int{}
	apply := func(name string) contender {
		return contender{name: name, op: func() error {
			from := at[name]
			req := &hashlinev1.ApplyRequest{}
			for _, n := range names {
				req.Changes = append(req.Changes, &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{
					Path: n, Edits: []*hashlinev1.FileEdit{client.Replace(c.refs[from][0], "", c.newLine(from, c.lines[0]))}, Context: new(int32)}}})
			}
			_, err := svc[name].Client.Apply(ctx, req)
			if err == nil {
				at[name] = 1 - from
			}
			return err
		}}
	}
	wall, cpu, err := rotate([]contender{apply("off"), apply("on")}, e.cfg.budget, max(e.cfg.minRounds, 40), 1000, max(e.cfg.settle, historySettle))
	if err != nil {
		return err
	}
	p := pairOf(wall, cpu)
	t.rows = append(t.rows, p.row(fmt.Sprintf("Apply, %d one-line edits in %d directories, fsync on", applyFiles, applyFiles)))
	log.Printf("history: Apply: %s", p)
	return nil
}

// blameRow logs a 10,000-line file's creation and 1,000 edits of it (a
// few lines replaced, inserted or deleted at random places, written
// without fsync to be quick) through the service, then times Blame of it.
func (e *env) blameRow(root string) ([]string, error) {
	ctx := context.Background()
	lg, err := history.Open(filepath.Join(e.tmp, "hist-blame-history"), history.Options{})
	if err != nil {
		return nil, err
	}
	defer lg.Close()
	d, err := startDirectWith(root, []workspace.Option{workspace.WithFsync(false)}, []engine.Option{engine.WithHistory(lg)}, client.WithAgentID("bench"))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	const n, changes = 10_000, 1000
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("\tvalue%05d := compute(%05d) // a line of about fifty bytes", i, i)
	}
	if _, err := d.Client.Write(ctx, &hashlinev1.WriteRequest{Path: "big.go", Content: strings.Join(lines, "\n") + "\n"}); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 1; i < changes; i++ {
		at := rng.IntN(len(lines))
		del := min(rng.IntN(3), len(lines)-at)
		add := rng.IntN(4)
		if del == 0 && add == 0 {
			add = 1
		}
		ins := make([]string, add)
		for j := range ins {
			ins[j] = fmt.Sprintf("\tedit%d := %d // a line of an edit", i, j)
		}
		lines = append(lines[:at:at], append(ins, lines[at+del:]...)...)
		// A Write of the whole file: the service records its hunks, a
		// few lines, as an Edit's.
		if _, err := d.Client.Write(ctx, &hashlinev1.WriteRequest{Path: "big.go", Content: strings.Join(lines, "\n") + "\n"}); err != nil {
			return nil, err
		}
	}
	wall, cpu, err := rotate([]contender{{name: "blame", op: func() error {
		r, err := d.Client.Blame(ctx, &hashlinev1.BlameRequest{Path: "big.go"})
		if err == nil && (len(r.GetLines()) != min(len(lines), engine.DefaultReadLimit) || r.GetLines()[0].GetChangeId() == "") {
			err = fmt.Errorf("blame gave %d lines, the first by %q", len(r.GetLines()), r.GetLines()[0].GetChangeId())
		}
		return err
	}}}, e.cfg.budget, e.cfg.minRounds, 500, 0)
	if err != nil {
		return nil, err
	}
	got := stats.Median(wall[0])
	e.report.atMost("Blame of a 10k-line file with 1,000 changes in its history, in-process: ms / 20 ms", float64(got)/blameLimit, 1)
	log.Printf("history: Blame %s, CPU %s (%d rounds)", ms(got), ms(stats.Median(cpu[0])), len(wall[0]))
	return []string{fmt.Sprintf("Blame p50, %d-line file, %d changes", len(lines), changes), "—", ms(got), "<= 20 ms", "—, " + ms(stats.Median(cpu[0]))}, nil
}

// historyQueryRow logs 100,000 one-line edits of 1,000 files in 50
// directories by 10 agents straight into a history (as the engine would
// append them), then times History of the workspace's last 100 through
// the service.
func (e *env) historyQueryRow(root string) ([]string, error) {
	ctx := context.Background()
	dir := filepath.Join(e.tmp, "hist-query-history")
	lg, err := history.Open(dir, history.Options{})
	if err != nil {
		return nil, err
	}
	defer lg.Close()
	const logged = 100_000
	c := history.Change{Kind: history.KindEdit, RequestID: "0195b2c4-7d1e-7aa0-9c1f-3b5e8f0a2d44"}
	for i := range logged {
		c.Agent = fmt.Sprintf("agent-%d", i%10)
		c.Files = []history.File{{Path: fmt.Sprintf("dir%02d/file%04d.go", i%50, i%1000),
			Before: "v2-0123456789abcdef0123456789abcdef", After: "v2-fedcba9876543210fedcba9876543210",
			Hunks: []history.Hunk{{Hunk: versions.Hunk{A0: 41, A1: 42, B0: 41, B1: 42}, Removed: []string{"\treturn nil, err"}, Added: []string{"\treturn nil, fmt.Errorf(\"handler: %w\", err)"}}}}}
		if _, err := lg.Append(c); err != nil {
			return nil, err
		}
	}
	d, err := startDirectWith(root, nil, []engine.Option{engine.WithHistory(lg)}, client.WithAgentID("bench"))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	wall, cpu, err := rotate([]contender{{name: "history", op: func() error {
		r, err := d.Client.History(ctx, &hashlinev1.HistoryRequest{MaxEntries: 100})
		if err == nil && len(r.GetEntries()) != 100 {
			err = fmt.Errorf("history gave %d entries", len(r.GetEntries()))
		}
		return err
	}}}, e.cfg.budget, e.cfg.minRounds, 2000, 0)
	if err != nil {
		return nil, err
	}
	got := stats.Median(wall[0])
	e.report.atMost("History, the last 100 changes of a workspace with 100,000 logged, in-process: ms / 10 ms", float64(got)/historyLimit, 1)
	log.Printf("history: History %s, CPU %s (%d rounds)", ms(got), ms(stats.Median(cpu[0])), len(wall[0]))
	return []string{fmt.Sprintf("History p50, last 100 of %d logged", logged), "—", ms(got), "<= 10 ms", "—, " + ms(stats.Median(cpu[0]))}, nil
}
