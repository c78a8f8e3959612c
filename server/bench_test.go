package server_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/floor"
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
