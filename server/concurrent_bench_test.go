package server_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/floor"
	"github.com/hashline/hashline/internal/workspace"
)

// concurrentRound is the number of writes each writer makes per round of
// BenchmarkConcurrentDurableWrites.
const concurrentRound = 4

// BenchmarkConcurrentDurableWrites compares, in one run, N concurrent
// writers each replacing its own 4 KiB file in one directory, fsync on,
// three ways: raw durable writes (the floor: temp file, fsync, rename,
// fsync of the directory), workspace.WriteFile, and a one-line Edit through
// the full gRPC stack over bufconn. The contenders take turns round by
// round, so the machine's noise falls on all three alike; it reports each
// rate in writes/s and the ratios to the floor (docs/DESIGN.md section 11).
func BenchmarkConcurrentDurableWrites(b *testing.B) {
	for _, n := range []int{16, 64} {
		b.Run(fmt.Sprintf("writers=%d", n), func(b *testing.B) { benchConcurrentWrites(b, n) })
	}
}

func benchConcurrentWrites(b *testing.B, n int) {
	content := file4K()
	texts := [2]string{"\tvalue049 := 1", "\tvalue049 := 2"}
	toggled := [2][]byte{
		[]byte(strings.Replace(content, "\tvalue049 := compute(049) // line of about forty bytes", texts[0], 1)),
		[]byte(strings.Replace(content, "\tvalue049 := compute(049) // line of about forty bytes", texts[1], 1)),
	}
	name := func(i int) string { return fmt.Sprintf("w%02d.go", i) }

	rawDir := b.TempDir()
	raw := func(i, k int) error {
		return floor.DurableWrite(filepath.Join(rawDir, name(i)), toggled[k%2])
	}

	ws, err := workspace.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	write := func(i, k int) error {
		_, err := ws.WriteFile(name(i), toggled[k%2], workspace.WriteOptions{})
		return err
	}

	e := newEnv(b)
	refs := make([]string, n)
	for i := range n {
		e.seed(name(i), content)
		refs[i] = tag(content, 50)
	}
	edit := func(i, k int) error {
		resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: name(i), Context: new(int32),
			Edits: []*hashlinev1.FileEdit{client.Replace(refs[i], "", texts[k%2])}})
		if err != nil {
			return err
		}
		refs[i] = client.Ref(resp.GetWindows()[0].GetLines()[0])
		return nil
	}

	contenders := []struct {
		metric string
		do     func(i, k int) error
		took   time.Duration
	}{
		{metric: "raw-writes/s", do: raw},
		{metric: "writefile-writes/s", do: write},
		{metric: "edit-writes/s", do: edit},
	}
	rounds := 0
	for b.Loop() {
		// Rotate which contender goes first, so none always follows the
		// same one's leftover writeback.
		for j := range contenders {
			c := &contenders[(rounds+j)%len(contenders)]
			start := time.Now()
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					for k := range concurrentRound {
						if err := c.do(i, rounds*concurrentRound+k); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			c.took += time.Since(start)
		}
		rounds++
	}
	writes := float64(rounds * n * concurrentRound)
	rate := make([]float64, len(contenders))
	for j, c := range contenders {
		rate[j] = writes / c.took.Seconds()
		b.ReportMetric(rate[j], c.metric)
	}
	b.ReportMetric(rate[1]/rate[0], "writefile/raw")
	b.ReportMetric(rate[2]/rate[0], "edit/raw")
}
