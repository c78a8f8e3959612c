package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// benchAgents is the number of concurrent agents of the throughput
// benchmark, and benchRound the edits each makes per round.
const (
	benchAgents = 16
	benchRound  = 4
)

// BenchmarkAgentsThroughput compares, interleaved in one run over the real
// gRPC stack (bufconn, durable writes), 16 agents editing 16 distinct
// files with 16 agents editing one shared file. Each agent replaces its own
// line from the tags and version of its previous response; on the shared
// file every edit is serialised and rebased across the others' edits. It
// reports both rates and their ratio (shared/distinct).
func BenchmarkAgentsThroughput(b *testing.B) {
	e := newEnv(b)
	var shared strings.Builder
	for i := range benchAgents {
		e.write(fmt.Sprintf("own%02d.txt", i), fmt.Sprintf("agent %d: 0\n", i))
		fmt.Fprintf(&shared, "agent %d: 0\n", i)
	}
	e.write("shared.txt", shared.String())
	type state struct {
		c       *client.Client
		version string
		ref     string
	}
	setup := func(file func(i int) string, line func(i int) int) []*state {
		st := make([]*state, benchAgents)
		for i := range st {
			c := e.agent(fmt.Sprintf("agent%d", i))
			r := e.readAs(c, file(i))
			st[i] = &state{c: c, version: r.GetVersion(), ref: client.Ref(r.GetLines()[line(i)-1])}
		}
		return st
	}
	distinctFile := func(i int) string { return fmt.Sprintf("own%02d.txt", i) }
	distinct := setup(distinctFile, func(int) int { return 1 })
	sharedFile := func(int) string { return "shared.txt" }
	one := setup(sharedFile, func(i int) int { return i + 1 })
	n := 0
	round := func(st []*state, file func(int) string) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for i, s := range st {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range benchRound {
					resp, err := s.c.Edit(e.ctx, &hashlinev1.EditRequest{
						Path: file(i), BaseVersion: s.version, Context: new(int32),
						Edits: []*hashlinev1.FileEdit{client.Replace(s.ref, "", fmt.Sprintf("agent %d: %d", i, n*benchRound+k+1))},
					})
					if err != nil {
						b.Error(err)
						return
					}
					s.version, s.ref = resp.GetVersion(), client.Ref(resp.GetWindows()[0].GetLines()[0])
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	var tDistinct, tShared time.Duration
	for b.Loop() {
		tDistinct += round(distinct, distinctFile)
		tShared += round(one, sharedFile)
		n++
	}
	edits := float64(n * benchAgents * benchRound)
	rd, rs := edits/tDistinct.Seconds(), edits/tShared.Seconds()
	b.ReportMetric(rd, "distinct-edits/s")
	b.ReportMetric(rs, "shared-edits/s")
	b.ReportMetric(rs/rd, "shared/distinct")
}
