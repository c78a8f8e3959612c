package server_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// TestChangeSetsAndEditsInterleaveWithoutLoss runs agents that append
// lines at once, each either by a single-file Edit or by an Apply that
// appends to several files (overlapping other agents' sets, in any
// order), some sets refused whole because one change names a missing
// file. At the end every file holds exactly the lines of the accepted
// changes: each accepted set's lines in all its files, no refused set's
// line anywhere. A deadlock between sets locking overlapping files would
// hang the test.
func TestChangeSetsAndEditsInterleaveWithoutLoss(t *testing.T) {
	agents, ops, files := 6, 25, 5
	if testing.Short() {
		agents, ops = 4, 10
	}
	e, _ := intentEnv(t)
	names := make([]string, files)
	for i := range names {
		names[i] = fmt.Sprintf("f%d.txt", i)
		e.write(names[i], "header\n")
	}
	var mu sync.Mutex
	accepted := map[string][]string{} // file -> lines appended by accepted changes
	var wg sync.WaitGroup
	for a := range agents {
		c := client.New(e.conn, client.WithAgentID(fmt.Sprintf("agent%d", a)))
		rng := rand.New(rand.NewPCG(uint64(a), 7))
		wg.Go(func() {
			for op := range ops {
				line := fmt.Sprintf("agent %d op %d", a, op)
				if rng.IntN(3) == 0 {
					f := names[rng.IntN(files)]
					if _, err := c.Edit(e.ctx, &hashlinev1.EditRequest{Path: f, Edits: []*hashlinev1.FileEdit{client.Append(line)}}); err != nil {
						t.Errorf("%s: %v", line, err)
						return
					}
					mu.Lock()
					accepted[f] = append(accepted[f], line)
					mu.Unlock()
					continue
				}
				picked := rng.Perm(files)[:2+rng.IntN(files-1)]
				req := &hashlinev1.ApplyRequest{}
				for _, i := range picked {
					req.Changes = append(req.Changes, editChange(names[i], client.Append(line)))
				}
				refuse := rng.IntN(5) == 0
				if refuse {
					req.Changes = append(req.Changes, editChange("missing.txt", client.Append(line)))
				}
				_, err := c.Apply(e.ctx, req)
				switch {
				case refuse && reasonOf(err) != hashlinev1.ErrorReason_ERROR_REASON_NOT_FOUND:
					t.Errorf("%s: a set with a missing file got %v", line, err)
					return
				case !refuse && err != nil:
					t.Errorf("%s: %v", line, err)
					return
				case !refuse:
					mu.Lock()
					for _, i := range picked {
						accepted[names[i]] = append(accepted[names[i]], line)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, f := range names {
		got := strings.Split(strings.TrimSuffix(e.read(f), "\n"), "\n")[1:]
		want := accepted[f]
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s holds %d appended lines, the log of accepted changes %d:\n got %q\nwant %q", f, len(got), len(want), got, want)
		}
	}
}
