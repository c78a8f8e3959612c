package server_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/floor"
	"github.com/hashline/hashline/internal/syntax/syntaxtest"
)

// file4K is a ~4 KiB, 100-line source file.
func file4K() string {
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "\tvalue%03d := compute(%03d) // line of about forty bytes\n", i, i)
	}
	return b.String()
}

// BenchmarkEditVsDurableWrite interleaves, in one run, a raw durable write
// of a 4 KiB file (the physical floor) and a one-line Edit of the same file
// through the full gRPC stack over bufconn, and reports both medians and
// their ratio (the targets are make bench's, docs/DESIGN.md section 11).
// Interleaving makes the ratio robust on a noisy machine.
func BenchmarkEditVsDurableWrite(b *testing.B) {
	e := newEnv(b)
	content := file4K()
	e.seed("f.go", content)
	floorPath := filepath.Join(b.TempDir(), "floor.go")
	ref := tag(content, 50)
	texts := [2]string{"\tvalue049 := 1", "\tvalue049 := 2"}
	var edits, floors []time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		if err := floor.DurableWrite(floorPath, []byte(content)); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.go", Context: new(int32),
			Edits: []*hashlinev1.FileEdit{client.Replace(ref, "", texts[i%2])}})
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		ref = client.Ref(resp.GetWindows()[0].GetLines()[0])
		floors, edits = append(floors, t1.Sub(t0)), append(edits, t2.Sub(t1))
	}
	fp, ep := floor.Median(floors), floor.Median(edits)
	b.ReportMetric(float64(fp.Microseconds()), "floor-p50-µs")
	b.ReportMetric(float64(ep.Microseconds()), "edit-p50-µs")
	b.ReportMetric(float64(ep)/float64(fp), "edit/floor")
}

// BenchmarkReadSmallFile reads the 4 KiB file through the full stack.
func BenchmarkReadSmallFile(b *testing.B) {
	e := newEnv(b)
	e.write("f.go", file4K())
	for b.Loop() {
		if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.go"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEditSyntax measures what the syntax check adds to an Edit: one
// line of a Go or TypeScript file of 100 or 10k lines replaced, through the
// full gRPC stack, by three servers in turn in one loop (so that the load
// of a shared machine falls on all alike, each first in turn): with the
// check off, advisory (the default, beside the durable write) and strict
// (before it). The edit keeps the file parsing, the common case. Besides
// the wall time, the process's CPU time during each call (all threads,
// the garbage collector's included) is reported.
func BenchmarkEditSyntax(b *testing.B) {
	for _, lang := range []string{"go", "ts"} {
		for _, lines := range []int{100, 10_000} {
			b.Run(fmt.Sprintf("%s-%d", lang, lines), func(b *testing.B) {
				content := syntaxtest.Source(lang == "ts", lines)
				name := "f." + lang
				// A line near the middle, within the first page the seed's
				// Read shows.
				n := min(strings.Count(content[:len(content)/2], "\n")+1, 1503)
				line := strings.Split(content, "\n")[n-1]
				texts := [2]string{line + " ", line}
				modes := []engine.SyntaxMode{engine.SyntaxOff, engine.SyntaxAdvisory, engine.SyntaxStrict}
				envs := make([]*env, len(modes))
				refs := make([]string, len(modes))
				times := make([][]time.Duration, len(modes))
				cpus := make([][]time.Duration, len(modes))
				for i, m := range modes {
					envs[i] = newEnv(b, engine.WithSyntax(m))
					envs[i].seed(name, content)
					refs[i] = tag(content, n)
				}
				for k := 0; b.Loop(); k++ {
					// Each mode goes first in turn.
					for j := range envs {
						i := (j + k) % len(envs)
						e := envs[i]
						c0, t0 := cpuTime(), time.Now()
						resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: name, Context: new(int32),
							Edits: []*hashlinev1.FileEdit{client.Replace(refs[i], "", texts[k%2])}})
						if err != nil {
							b.Fatal(err)
						}
						times[i] = append(times[i], time.Since(t0))
						cpus[i] = append(cpus[i], cpuTime()-c0)
						if len(resp.GetDiagnostics()) > 0 {
							b.Fatalf("the edit broke the file: %v", resp.GetDiagnostics())
						}
						refs[i] = client.Ref(resp.GetWindows()[0].GetLines()[0])
					}
				}
				off, offCPU := floor.Median(times[0]), floor.Median(cpus[0])
				for i, m := range modes {
					b.ReportMetric(float64(floor.Median(times[i]).Microseconds()), m.String()+"-p50-µs")
					b.ReportMetric(float64(floor.Median(cpus[i]).Microseconds()), m.String()+"-cpu-p50-µs")
				}
				b.ReportMetric(float64(floor.Median(times[1])-off)/float64(off)*100, "advisory-%")
				b.ReportMetric(float64(floor.Median(times[2])-off)/float64(off)*100, "strict-%")
				b.ReportMetric(float64(floor.Median(cpus[1])-offCPU)/float64(max(offCPU, 1))*100, "advisory-cpu-%")
			})
		}
	}
}
