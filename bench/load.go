package main

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

var concurrencies = []int{1, 16, 64}

const maxConcurrency = 64

// loadOp is one unary call made by worker w; each worker owns its state.
type loadOp struct {
	name string
	d    *server
	// newWorker returns the call worker w makes in a loop.
	newWorker func(w int) func(ctx context.Context) error
}

// loadResult is one contender at one concurrency, over all its runs.
type loadResult struct {
	throughput []float64 // calls per second, one per run
	lat        []time.Duration
}

// load: unary throughput and latency at several concurrencies, against an
// empty call on the same server.
func (e *env) load() error {
	ops := []loadOp{
		{"health Check (empty call)", e.durable, func(int) func(context.Context) error {
			h := healthpb.NewHealthClient(e.durable.conn)
			return func(ctx context.Context) error {
				_, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
				return err
			}
		}},
		{"Read, 100 lines", e.durable, func(int) func(context.Context) error {
			return func(ctx context.Context) error {
				_, err := e.durable.c.Read(ctx, &hashlinev1.ReadRequest{Path: "r100.go"})
				return err
			}
		}},
		{"Edit, 1 line of 100 (own file per worker)", e.durable, e.editWorker(e.durable)},
		{"Edit, --fsync=false (unsafe)", e.nofsync, e.editWorker(e.nofsync)},
	}
	t := &table{
		title: "Unary load: throughput and latency vs an empty call",
		about: fmt.Sprintf("N workers on one gRPC connection to `hashlined` call in a loop for %s per run, %d runs per cell, the contenders alternated run by run; each editing worker toggles a line of its own 100-line file. "+
			"Throughput is the median of the runs, p50 and p99 are over every call, and the ratios are to the empty call (`grpc.health.v1.Health/Check`) on the first server.", e.cfg.loadDur, e.cfg.loadRound),
		cols: []string{"call", "workers", "calls/s", "p50", "p99", "throughput vs empty", "p50 vs empty"},
	}
	// Each round runs the contenders in a new random order (a fixed seed,
	// as interleave does), so that none always follows the same one.
	order := rand.New(rand.NewPCG(3, 4))
	for _, c := range concurrencies {
		res := make([]loadResult, len(ops))
		for range e.cfg.loadRound {
			for _, i := range order.Perm(len(ops)) {
				tp, lat, err := runLoad(ops[i], c, e.cfg.loadDur)
				if err != nil {
					return fmt.Errorf("%s at %d workers: %w", ops[i].name, c, err)
				}
				res[i].throughput = append(res[i].throughput, tp)
				res[i].lat = append(res[i].lat, lat...)
			}
		}
		emptyTP, emptyP50 := stats.Median(res[0].throughput), stats.Percentile(res[0].lat, 50)
		for i, op := range ops {
			tp, p50 := stats.Median(res[i].throughput), stats.Percentile(res[i].lat, 50)
			row := []string{op.name, fmt.Sprint(c), fmt.Sprintf("%.0f", tp), ms(p50), ms(stats.Percentile(res[i].lat, 99)), "—", "—"}
			if i > 0 {
				row[5] = fmt.Sprintf("%.2fx", tp/emptyTP)
				row[6] = ratio(p50, emptyP50)
			}
			t.rows = append(t.rows, row)
			log.Printf("load %s x%d: %.0f/s p50 %s p99 %s", op.name, c, tp, ms(p50), ms(stats.Percentile(res[i].lat, 99)))
		}
	}
	e.report.add(t)
	return nil
}

// editWorker gives each worker its own file wI.go, toggled like editCase.
func (e *env) editWorker(d *server) func(w int) func(context.Context) error {
	c := newEditCase("load", 100, 1)
	state := make([]int, maxConcurrency)
	read := make([]bool, maxConcurrency)
	return func(w int) func(context.Context) error {
		path := fmt.Sprintf("w%d.go", w)
		return func(ctx context.Context) error {
			if !read[w] {
				// The line the edits reference, as an agent reads it first.
				if _, err := d.c.Read(ctx, &hashlinev1.ReadRequest{Path: path, Offset: int32(c.lines[0]), Limit: 1}); err != nil {
					return err
				}
				read[w] = true
			}
			from := state[w]
			_, err := d.c.Edit(ctx, &hashlinev1.EditRequest{Path: path, Edits: []*hashlinev1.FileEdit{
				client.Replace(c.refs[from][0], "", c.newLine(from, c.lines[0])),
			}})
			if err == nil {
				state[w] = 1 - from
			}
			return err
		}
	}
}

// runLoad runs op with c workers for d and returns calls per second and
// every call's latency.
func runLoad(op loadOp, c int, d time.Duration) (float64, []time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lats := make([][]time.Duration, c)
	errs := make([]error, c)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range c {
		call := op.newWorker(w)
		wg.Go(func() {
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := call(ctx); err != nil {
					errs[w] = err
					cancel()
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, nil, err
		}
	}
	all := slices.Concat(lats...)
	return float64(len(all)) / elapsed.Seconds(), all, nil
}
