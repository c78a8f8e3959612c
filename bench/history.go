package main

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

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

// historyRows measures what the change history costs and answers: an
// Edit of the service in this process (bench/direct.go) with the history
// recorded and without, alternated call by call, fsync on and off; Blame of a
// 10,000-line file with 1,000 changes in its history; History of the last
// 100 changes of a workspace with 100,000 logged.
func (e *env) historyRows() error {
	t := &table{
		title: "Change history: what recording costs an Edit, and its queries",
		about: "The service in this process with no transport (bench/direct.go). An Edit of one line with the change history recorded (its entry prepared and written to the history's file before the file is replaced, resolved after) against the same service without a history, alternated call by call on files of their own, fsync on (the target) and, apart, off (the recording's own work, without the disk's waits); " +
			"Apply of one-line edits of 10 files of 100 lines in 10 directories, with an intent log, fsync on, the same way (the set's entry is synced while its steps are done); " +
			"Blame of a 10,000-line file whose history holds its creation and 1,000 edits of a few lines each, every call reading the first page (2,000 lines) as Read does and attributing the whole file; History of the last 100 changes of a workspace whose history holds 100,000 (one-line edits of 1,000 files by 10 agents).",
		cols: []string{"operation", "without history", "with history", "ratio or target"},
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
		s, err := interleaveSettled([]contender{edit("off", off), edit("on", on)}, e.cfg.budget, max(e.cfg.minRounds, 100), 2000, e.cfg.settle)
		if err != nil {
			return err
		}
		without, with := stats.Median(s[0]), stats.Median(s[1])
		if fsync {
			e.report.atMost(fmt.Sprintf("in-process Edit p50, %s, 1 line replaced, with the change history recorded: with / without", lineLabel(n)), float64(with)/float64(without), historyEditLimit)
		}
		t.rows = append(t.rows, []string{fmt.Sprintf("Edit p50, %s, 1 line replaced, %s", lineLabel(n), label), ms(without), ms(with), ratio(with, without)})
		log.Printf("history: Edit %s, %s: without %s, with %s (%d rounds)", lineLabel(n), label, ms(without), ms(with), len(s[0]))
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
	s, err := interleaveSettled([]contender{apply("off"), apply("on")}, e.cfg.budget, max(e.cfg.minRounds, 40), 1000, e.cfg.settle)
	if err != nil {
		return err
	}
	without, with := stats.Median(s[0]), stats.Median(s[1])
	t.rows = append(t.rows, []string{fmt.Sprintf("Apply p50, %d one-line edits in %d directories, fsync on", applyFiles, applyFiles), ms(without), ms(with), ratio(with, without)})
	log.Printf("history: Apply: without %s, with %s (%d rounds)", ms(without), ms(with), len(s[0]))
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
	s, err := interleave([]contender{{name: "blame", op: func() error {
		r, err := d.Client.Blame(ctx, &hashlinev1.BlameRequest{Path: "big.go"})
		if err == nil && (len(r.GetLines()) != min(len(lines), engine.DefaultReadLimit) || r.GetLines()[0].GetChangeId() == "") {
			err = fmt.Errorf("blame gave %d lines, the first by %q", len(r.GetLines()), r.GetLines()[0].GetChangeId())
		}
		return err
	}}}, e.cfg.budget, e.cfg.minRounds, 500)
	if err != nil {
		return nil, err
	}
	got := stats.Median(s[0])
	e.report.atMost("Blame of a 10k-line file with 1,000 changes in its history, in-process: ms / 20 ms", float64(got)/blameLimit, 1)
	log.Printf("history: Blame %s (%d rounds)", ms(got), len(s[0]))
	return []string{fmt.Sprintf("Blame, %d-line file, %d changes", len(lines), changes), "—", ms(got), "<= 20 ms"}, nil
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
	s, err := interleave([]contender{{name: "history", op: func() error {
		r, err := d.Client.History(ctx, &hashlinev1.HistoryRequest{MaxEntries: 100})
		if err == nil && len(r.GetEntries()) != 100 {
			err = fmt.Errorf("history gave %d entries", len(r.GetEntries()))
		}
		return err
	}}}, e.cfg.budget, e.cfg.minRounds, 2000)
	if err != nil {
		return nil, err
	}
	got := stats.Median(s[0])
	e.report.atMost("History, the last 100 changes of a workspace with 100,000 logged, in-process: ms / 10 ms", float64(got)/historyLimit, 1)
	log.Printf("history: History %s (%d rounds)", ms(got), len(s[0]))
	return []string{fmt.Sprintf("History, last 100 of %d logged", logged), "—", ms(got), "<= 10 ms"}, nil
}
