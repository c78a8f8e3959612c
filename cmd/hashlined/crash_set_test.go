package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// TestKillNineNeverTearsAChangeSet drives change sets of several files in
// several directories (Apply) while killing the real server with SIGKILL
// at random moments and restarting it. Every set writes one marker into
// the first line of each of its files; after each restart (which finishes
// committed sets from the intent log before it serves) the files of a set
// must all carry the same marker, and that marker must be the last
// acknowledged set's or the one in flight: never a mix. The change history
// holds one entry of each set made (acknowledged, or landed) with its four
// files, and none of a set that did not land.
func TestKillNineNeverTearsAChangeSet(t *testing.T) {
	// Most of its time is spent waiting on its own server: it overlaps with
	// the other tests that do.
	t.Parallel()
	bin := buildPlain(t)
	kills := crashKills(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d kills", seed, kills)
	rng := rand.New(rand.NewPCG(seed, seed>>2))

	root := t.TempDir()
	const workers, filesPerSet = 3, 4
	type group struct {
		files          []string
		acked, pending string // markers, and request ids
		landedUnacked  int
		rng            *rand.Rand
		gen            int
		made           []string // the sets made
		notMade        []string // the sets that did not land
	}
	groups := make([]*group, workers)
	for w := range groups {
		g := &group{acked: fmt.Sprintf("w%d-g0", w)}
		for i := range filesPerSet {
			g.files = append(g.files, fmt.Sprintf("d%d/w%d.txt", i, w))
			p := filepath.Join(root, g.files[i])
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, setContent(rng, g.acked, i), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		groups[w] = g
	}
	check := func(k int) {
		for _, g := range groups {
			markers := map[string]bool{}
			for _, f := range g.files {
				markers[marker(t, filepath.Join(root, f))] = true
			}
			switch {
			case len(markers) != 1:
				t.Errorf("kill %d: a torn set: the files of %v carry markers %v (acknowledged %s, pending %q)", k, g.files, markers, g.acked, g.pending)
			case markers[g.acked]:
				if g.pending != "" {
					g.notMade = append(g.notMade, g.pending)
				}
			case g.pending != "" && markers[g.pending]:
				g.acked = g.pending
				g.made = append(g.made, g.pending)
				g.landedUnacked++
			default:
				t.Errorf("kill %d: %v carry %v, neither the acknowledged %s nor the pending %q", k, g.files, markers, g.acked, g.pending)
			}
			g.pending = ""
		}
	}
	// checkHistory: the history holds one entry of each set made, with
	// its four files, and nothing else of the agent.
	checkHistory := func(k int, addr string) {
		c, err := client.Dial(addr, client.WithAgentID("crash"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		got := crashHistory(t, c)
		n := 0
		for _, es := range got {
			n += len(es)
		}
		made := 0
		for _, g := range groups {
			made += len(g.made)
			for _, rid := range g.made {
				if es := got[rid]; len(es) != 1 || len(es[0].GetFiles()) != filesPerSet {
					t.Errorf("restart %d: the set %s, made, is in the history as %v", k, rid, es)
				}
			}
			for _, rid := range g.notMade {
				if es := got[rid]; len(es) != 0 {
					t.Errorf("restart %d: the set %s did not land, and the history holds %v", k, rid, es)
				}
			}
		}
		if n != made {
			t.Errorf("restart %d: the history holds %d entries of the agent, %d sets were made", k, n, made)
		}
	}
	var acks int
	for k := range kills {
		cmd, addr, _ := startBinary(t, bin, nil, "--root", root, "--listen", "127.0.0.1:0", "--log-level", "error")
		check(k)
		checkHistory(k, addr)
		if t.Failed() {
			break
		}
		c, err := client.Dial(addr, client.WithAgentID("crash"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var mu sync.Mutex
		for w, g := range groups {
			g.rng = rand.New(rand.NewPCG(seed+uint64(k), uint64(w)))
			wg.Go(func() {
				for ctx.Err() == nil {
					g.gen++
					m := fmt.Sprintf("w%d-k%d-g%d", w, k, g.gen)
					req := &hashlinev1.ApplyRequest{RequestId: m}
					for i, f := range g.files {
						req.Changes = append(req.Changes, &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{Path: f, Content: string(setContent(g.rng, m, i))}}})
					}
					g.pending = m
					resp, err := c.Apply(ctx, req)
					if err != nil {
						if ctx.Err() == nil && !isConnErr(err) {
							t.Errorf("%s: %v", m, err)
						}
						return
					}
					if len(resp.GetResults()) != filesPerSet || resp.GetChangeSet() == "" {
						t.Errorf("%s: response %v", m, resp)
					}
					g.acked, g.pending = m, ""
					g.made = append(g.made, m)
					mu.Lock()
					acks++
					mu.Unlock()
				}
			})
		}
		time.Sleep(time.Duration(10+rng.IntN(140)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cancel()
		wg.Wait()
		c.Close()
	}
	// The last kill's sets are finished by one more start.
	cmd, addr, _ := startBinary(t, bin, nil, "--root", root, "--listen", "127.0.0.1:0", "--log-level", "error")
	check(kills)
	checkHistory(kills, addr)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	unacked := 0
	for _, g := range groups {
		unacked += g.landedUnacked
	}
	t.Logf("%d kills, %d acknowledged sets of %d files, %d landed but unacknowledged", kills, acks, filesPerSet, unacked)
}

// setContent is a file of a set: the marker on the first line, then 1 KiB
// to 256 KiB of lines, so that staging takes long enough for kills to land
// inside it.
func setContent(rng *rand.Rand, m string, i int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "set %s\n", m)
	n := 16 << rng.IntN(9)
	for j := range n {
		fmt.Fprintf(&b, "file %d line %d %s\n", i, j, strings.Repeat("y", 40))
	}
	return b.Bytes()
}

// marker is the marker on the first line of the file at p.
func marker(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return fmt.Sprintf("(unreadable first line %q: %v)", line, err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(line, "set "), "\n")
}
