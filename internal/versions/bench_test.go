package versions_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/floor"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// file10K is a 10,000-line source file of about 520 KiB.
func file10K() []string {
	lines := make([]string, 10_000)
	for i := range lines {
		lines[i] = fmt.Sprintf("\tvalue%05d := compute(%05d) // a line of about fifty bytes", i, i)
	}
	return lines
}

// BenchmarkRebaseVsDurableWrite measures, interleaved in one run, a rebase
// (diff base -> current and the mapping of one reference) of a 10k-line
// file across one intervening edit, and a durable write of the same file
// (internal/floor, the cost every edit pays anyway). It reports both
// medians and their ratio; the target is rebase/write < 1.
func BenchmarkRebaseVsDurableWrite(b *testing.B) {
	lines := file10K()
	base := doc(lines...)
	other := slices.Clone(lines)
	other[7000] = "\tvalue07000 := 42 // another agent's edit"
	cur := doc(other...)
	edits := []hashline.Edit{replace(ref(base, 9000), "", "\tvalue09000 := 0")}
	raw := []byte(cur.Text())
	path := filepath.Join(b.TempDir(), "f.go")
	var rebases, writes []time.Duration
	for b.Loop() {
		t0 := time.Now()
		r, err := versions.Rebase(base, cur, edits, h)
		t1 := time.Now()
		if err != nil || r.Refs != 1 {
			b.Fatal(r, err)
		}
		if err := floor.DurableWrite(path, raw); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		rebases, writes = append(rebases, t1.Sub(t0)), append(writes, t2.Sub(t1))
	}
	rp, wp := floor.Median(rebases), floor.Median(writes)
	b.ReportMetric(float64(rp.Microseconds()), "rebase-p50-µs")
	b.ReportMetric(float64(wp.Microseconds()), "write-p50-µs")
	b.ReportMetric(float64(rp)/float64(wp), "rebase/write")
}

// BenchmarkDiffScattered is the diff alone over a 10k-line file with k
// scattered one-line changes: the go-udiff path below 50, diffmatchpatch
// above (1000: a rebase across a thousand scattered changes).
func BenchmarkDiffScattered(b *testing.B) {
	lines := file10K()
	base := doc(lines...)
	for _, k := range []int{1, 10, 100, 1000} {
		other := slices.Clone(lines)
		for i := range k {
			other[(i*7919)%len(other)] = strings.ToUpper(other[(i*7919)%len(other)])
		}
		cur := doc(other...)
		b.Run(fmt.Sprintf("changes=%d", k), func(b *testing.B) {
			for b.Loop() {
				versions.Diff(base, cur)
			}
		})
	}
}
