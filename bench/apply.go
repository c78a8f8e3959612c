package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/floor"
)

// applyFiles is how many files the change set of the apply step edits.
const applyFiles = 10

// applySet measures a change set of ten one-line edits in ten files
// (Apply over loopback to its own hashlined, fsync on, with its intent
// record) against ten sequential raw durable writes of the same ten files'
// new contents, side by side: the rounds alternate the two. It does so
// twice: with the files in ten directories (the target, Apply p50 <= 1x:
// every directory is synced by both, so the set can only group its syncs by
// running them at once) and in one directory (where the set syncs it once).
func (e *env) applySet(bin string) error {
	var rows [][]string
	for _, dirs := range []int{applyFiles, 1} {
		r, err := e.applyRows(bin, dirs)
		if err != nil {
			return err
		}
		rows = append(rows, r...)
	}
	e.report.add(&table{
		title: "A change set against sequential writes",
		about: fmt.Sprintf("Apply of %d one-line edits in %d files of 100 lines to its own hashlined, fsync on, with its intent record, against %d raw durable writes of the same new contents one after another (temp file, fsync, rename, fsync of the directory), alternated over %d rounds; the files in %d directories, then in one.", applyFiles, applyFiles, applyFiles, max(e.cfg.minRounds, 40), applyFiles),
		cols:  []string{"files in", "contender", "p50", "p90"},
		rows:  rows,
	})
	return nil
}

// applyRows runs the rounds of applySet with the files in dirs
// directories and returns its table rows.
func (e *env) applyRows(bin string, dirs int) ([][]string, error) {
	tmp := filepath.Join(e.tmp, fmt.Sprintf("apply-%d", dirs))
	served, raw := filepath.Join(tmp, "served"), filepath.Join(tmp, "raw")
	src := sourceFile(100)
	names := make([]string, applyFiles)
	for i := range names {
		names[i] = fmt.Sprintf("pkg%d/f%d.go", i%dirs, i)
		for _, root := range []string{served, raw} {
			p := filepath.Join(root, names[i])
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				return nil, err
			}
		}
	}
	d, err := startServer(bin, "--root", served, "--listen", "127.0.0.1:0", "--log-level", "error", "--state-dir", filepath.Join(tmp, "state"))
	if err != nil {
		return nil, err
	}
	defer d.close()
	cl := client.New(d.conn, client.WithAgentID("bench"))
	ctx := context.Background()
	lines := strings.SplitAfter(src, "\n")
	const target = 50 // the line each round rewrites
	var applyTimes, rawTimes []time.Duration
	rounds := max(e.cfg.minRounds, 40)
	for r := range rounds {
		// Untimed: the tags of each file's line as it is now.
		req := &hashlinev1.ApplyRequest{}
		text := fmt.Sprintf("\t// round %d", r)
		for _, n := range names {
			rd, err := cl.Read(ctx, &hashlinev1.ReadRequest{Path: n, Offset: target, Limit: 1})
			if err != nil {
				return nil, err
			}
			req.Changes = append(req.Changes, &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{
				Path: n, Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(rd.GetLines()[0]), "", text)}, Context: new(int32)}}})
		}
		lines[target-1] = text + "\n"
		next := []byte(strings.Join(lines, ""))
		t0 := time.Now()
		if _, err := cl.Apply(ctx, req); err != nil {
			return nil, err
		}
		applyTimes = append(applyTimes, time.Since(t0))
		t0 = time.Now()
		for _, n := range names {
			if err := floor.DurableWrite(filepath.Join(raw, n), next); err != nil {
				return nil, err
			}
		}
		rawTimes = append(rawTimes, time.Since(t0))
		time.Sleep(e.cfg.settle)
	}
	for _, n := range names {
		got, err := os.ReadFile(filepath.Join(served, n))
		if err != nil {
			return nil, err
		}
		want, _ := os.ReadFile(filepath.Join(raw, n))
		if string(got) != string(want) {
			return nil, fmt.Errorf("%s: the served file differs from the raw one", n)
		}
	}
	ap, rp := stats.Percentile(applyTimes, 50), stats.Percentile(rawTimes, 50)
	where := fmt.Sprintf("%d directories", dirs)
	if dirs == 1 {
		where = "one directory"
	} else {
		e.report.atMost(fmt.Sprintf("Apply of %d one-line edits in %d files in %s: p50 / %d sequential raw durable writes", applyFiles, applyFiles, where, applyFiles), float64(ap)/float64(rp), 1)
	}
	log.Printf("apply, %s: set %s, raw writes %s (%d rounds)", where, ms(ap), ms(rp), rounds)
	return [][]string{
		{where, "Apply (one set)", ms(ap), ms(stats.Percentile(applyTimes, 90))},
		{where, fmt.Sprintf("%d sequential raw durable writes", applyFiles), ms(rp), ms(stats.Percentile(rawTimes, 90))},
	}, nil
}
