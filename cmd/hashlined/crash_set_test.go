package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
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

// TestKillNineNeverTearsARevert is TestKillNineNeverTearsAChangeSet for
// Revert: each worker applies a set of several files, then reverts it
// (several edits, committed through the intent log), while the real server
// is killed with SIGKILL at random moments and restarted. After every
// restart the files of a group all carry one marker, the acknowledged one
// or the one in flight (a revert is all or nothing), and the history
// agrees with the disk: every entry of a group names all its files, a
// revert entry is exactly the inverse of the set entry before it, which it
// names, and the history never runs ahead of the disk: its newest entry is
// the disk's state, or a call before it whose successors' entries the kill
// cut off (the history is written without a sync per change, so its last
// milliseconds may be lost; it never holds a change that did not land).
func TestKillNineNeverTearsARevert(t *testing.T) {
	t.Parallel()
	bin := buildPlain(t)
	kills := max(crashKills(t)/2, 5)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d kills", seed, kills)
	rng := rand.New(rand.NewPCG(seed, seed>>3))

	root := t.TempDir()
	const workers, filesPerSet = 2, 3
	// op is an acknowledged call: its change id and the marker it left.
	type op struct{ id, marker string }
	type group struct {
		files          []string
		acked, pending string // markers
		rng            *rand.Rand
		gen            int
		reverts        int
		ops            []op
		// inRevert says the call in flight is a revert; cutOff and
		// cutLanded count the reverts a kill cut off, and those of them
		// that had landed.
		inRevert          bool
		cutOff, cutLanded int
	}
	// markerOf is the marker of each content written to a group's first
	// file, by its version.
	markerOf := map[string]string{}
	var mu sync.Mutex
	groups := make([]*group, workers)
	for w := range groups {
		g := &group{acked: fmt.Sprintf("r%d-g0", w)}
		for i := range filesPerSet {
			g.files = append(g.files, fmt.Sprintf("r%d/w%d.txt", i, w))
			p := filepath.Join(root, g.files[i])
			os.MkdirAll(filepath.Dir(p), 0o755)
			content := revertContent(rng, g.acked, i)
			if i == 0 {
				markerOf[workspace.Version(content)] = g.acked
			}
			if err := os.WriteFile(p, content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		groups[w] = g
	}
	// landed is the marker of a call the kill cut off that landed, by
	// group; its entry may be in the history under an id no one was told.
	landed := map[*group]string{}
	check := func(k int) {
		clear(landed)
		for _, g := range groups {
			if g.inRevert && g.pending != "" {
				g.cutOff++
				if marker(t, filepath.Join(root, g.files[0])) == g.pending {
					g.cutLanded++
				}
			}
			g.inRevert = false
			markers := map[string]bool{}
			for _, f := range g.files {
				markers[marker(t, filepath.Join(root, f))] = true
			}
			switch {
			case len(markers) != 1:
				t.Errorf("kill %d: a torn set or revert: the files of %v carry markers %v (acknowledged %s, pending %q)", k, g.files, markers, g.acked, g.pending)
			case markers[g.acked]:
			case g.pending != "" && markers[g.pending]:
				g.acked = g.pending
				landed[g] = g.pending
				g.ops = append(g.ops, op{marker: g.pending}) // its id unknown
			default:
				t.Errorf("kill %d: %v carry %v, neither the acknowledged %s nor the pending %q", k, g.files, markers, g.acked, g.pending)
			}
			g.pending = ""
		}
	}
	agrees := func(k int, c *client.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, g := range groups {
			h, err := c.History(ctx, &hashlinev1.HistoryRequest{Path: g.files[0], MaxEntries: 1000})
			if err != nil {
				t.Fatal(err)
			}
			entries := h.GetEntries() // newest first
			for i, e := range entries {
				if len(e.GetFiles()) != filesPerSet {
					t.Errorf("kill %d: entry %s of %v names %d files", k, e.GetChangeId(), g.files, len(e.GetFiles()))
					continue
				}
				if e.GetKind() != hashlinev1.ChangeKind_CHANGE_KIND_REVERT {
					continue
				}
				if i+1 == len(entries) || entries[i+1].GetChangeId() != e.GetReverts() {
					t.Errorf("kill %d: revert %s names %s, not the entry before it", k, e.GetChangeId(), e.GetReverts())
					continue
				}
				set := entries[i+1]
				for j, f := range e.GetFiles() {
					sf := set.GetFiles()[j]
					if f.GetPath() != sf.GetPath() || f.GetNewVersion() != sf.GetOldVersion() || f.GetOldVersion() != sf.GetNewVersion() {
						t.Errorf("kill %d: revert %s of %s: %v is not the inverse of %v", k, e.GetChangeId(), set.GetChangeId(), f, sf)
					}
				}
			}
			if len(entries) == 0 {
				continue
			}
			newest := entries[0]
			onDisk := true
			for _, f := range newest.GetFiles() {
				b, err := os.ReadFile(filepath.Join(root, f.GetPath()))
				if err != nil || workspace.Version(b) != f.GetNewVersion() {
					onDisk = false
				}
			}
			// The newest entry is a call that landed: by its id, or, for one
			// whose id no one was told (its reply or the look-up of its id
			// cut off), by the state it left. The disk holds that state, or
			// one a call after it left.
			at := slices.IndexFunc(g.ops, func(o op) bool { return o.id == newest.GetChangeId() })
			if at < 0 {
				left := ""
				for _, f := range newest.GetFiles() {
					if f.GetPath() == g.files[0] {
						left = markerOf[f.GetNewVersion()]
					}
				}
				for i, o := range g.ops {
					if o.id == "" && o.marker == left {
						at = i
					}
				}
				if at < 0 {
					t.Errorf("kill %d: the newest entry %s of %v is no call that landed", k, newest.GetChangeId(), g.files)
					continue
				}
			}
			if !onDisk && !slices.ContainsFunc(g.ops[at+1:], func(o op) bool { return o.marker == g.acked }) {
				t.Errorf("kill %d: the newest entry %s of %v left %s, but the disk holds %s, which no later call left: the history is ahead of the disk",
					k, newest.GetChangeId(), g.files, g.ops[at].marker, g.acked)
			}
		}
	}
	for k := range kills + 1 {
		cmd, addr, _ := startBinary(t, bin, nil, "--root", root, "--listen", "127.0.0.1:0", "--log-level", "error")
		check(k)
		c, err := client.Dial(addr, client.WithAgentID("crash"))
		if err != nil {
			t.Fatal(err)
		}
		agrees(k, c)
		if t.Failed() || k == kills {
			c.Close()
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			break
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w, g := range groups {
			g.rng = rand.New(rand.NewPCG(seed+uint64(k), uint64(w)))
			wg.Go(func() {
				for ctx.Err() == nil {
					g.gen++
					m, prev := fmt.Sprintf("r%d-k%d-g%d", w, k, g.gen), g.acked
					req := &hashlinev1.ApplyRequest{}
					for i, f := range g.files {
						content := revertContent(g.rng, m, i)
						if i == 0 {
							mu.Lock()
							markerOf[workspace.Version(content)] = m
							mu.Unlock()
						}
						req.Changes = append(req.Changes, &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{Path: f, Content: string(content)}}})
					}
					g.pending = m
					if _, err := c.Apply(ctx, req); err != nil {
						if ctx.Err() == nil && !isConnErr(err) {
							t.Errorf("%s: %v", m, err)
						}
						return
					}
					g.acked, g.pending = m, ""
					g.ops = append(g.ops, op{marker: m}) // its id, once History says
					h, err := c.History(ctx, &hashlinev1.HistoryRequest{Path: g.files[0], MaxEntries: 1})
					if err != nil {
						if ctx.Err() == nil && !isConnErr(err) {
							t.Errorf("%s: History: %v", m, err)
						}
						return
					}
					set := h.GetEntries()[0]
					if set.GetKind() != hashlinev1.ChangeKind_CHANGE_KIND_SET {
						t.Errorf("%s: the newest entry is %v, not the set", m, set)
						return
					}
					g.ops[len(g.ops)-1].id = set.GetChangeId()
					g.pending, g.inRevert = prev, true
					resp, err := c.RPC().Revert(ctx, &hashlinev1.RevertRequest{ChangeId: set.GetChangeId()})
					if err != nil {
						if ctx.Err() == nil && !isConnErr(err) {
							t.Errorf("revert of %s (%s): %v", m, set.GetChangeId(), err)
						}
						return
					}
					if len(resp.GetResults()) != filesPerSet || resp.GetReverted() != set.GetChangeId() {
						t.Errorf("revert of %s: response %v", m, resp)
					}
					g.acked, g.pending, g.inRevert = prev, "", false
					g.ops = append(g.ops, op{resp.GetChangeId(), prev})
					g.reverts++
				}
			})
		}
		time.Sleep(time.Duration(50+rng.IntN(300)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cancel()
		wg.Wait()
		c.Close()
	}
	reverts, cut, cutLanded := 0, 0, 0
	for _, g := range groups {
		reverts, cut, cutLanded = reverts+g.reverts, cut+g.cutOff, cutLanded+g.cutLanded
	}
	t.Logf("%d kills, %d acknowledged reverts of sets of %d files; %d reverts cut off by a kill, %d of them landed", kills, reverts, filesPerSet, cut, cutLanded)
	if reverts == 0 {
		t.Error("no revert was acknowledged: the test tested nothing")
	}
}

// revertContent is a file of TestKillNineNeverTearsARevert's sets: the
// marker on the first line, then 16 to 1024 lines, so that each run
// reverts several sets and kills land inside their commits too.
func revertContent(rng *rand.Rand, m string, i int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "set %s\n", m)
	n := 16 << rng.IntN(7)
	for j := range n {
		fmt.Fprintf(&b, "file %d line %d %s\n", i, j, strings.Repeat("z", 40))
	}
	return b.Bytes()
}
