package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/workspace"
)

// crashKills is how many times TestKillNineNeverTearsAFile kills the
// server: HASHLINE_CRASH_KILLS, else 10 with -short, else 50.
func crashKills(t *testing.T) int {
	if v := os.Getenv("HASHLINE_CRASH_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("HASHLINE_CRASH_KILLS=%q: want a positive count", v)
		}
		return n
	}
	if testing.Short() {
		return 10
	}
	return 50
}

// buildPlain builds hashlined without the race detector: the crash test
// restarts it dozens of times and measures the file system, not memory
// accesses, so it uses the build that starts fastest.
func buildPlain(t *testing.T) string {
	t.Helper()
	bin, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// fileModel is what one client knows about one file: the last content the
// server acknowledged and, while a request is unanswered, the content that
// request would leave and its request id; made lists the request ids of
// the changes made (acknowledged, or found landed after a kill) with the
// version each left, and notMade those found not landed.
type fileModel struct {
	name       string
	acked      []byte
	pending    []byte
	pendingRID string
	made       map[string]string
	notMade    []string
}

// TestKillNineNeverTearsAFile drives writes and edits to a few files while
// killing the real server with SIGKILL at random moments and restarting it.
// After every kill each file must be byte-identical to its last
// acknowledged version or to the version being written when the server
// died: never a mix, never empty. Temporary files a kill leaves behind must
// never be visible through Grep or Read, and the restarted server sweeps
// them away.
//
// The change history agrees with the files after every restart: every
// change made (acknowledged, or landed unacknowledged) is one entry, with
// its request id and the version it left; a change that did not land has
// none; and every Watch event delivered before a kill names, by its
// change id, an entry of that file and version (checkHistory).
//
// kill -9 tests atomicity (rename over a complete, closed temp file), not
// durability across power loss, which needs the fsyncs this cannot observe.
func TestKillNineNeverTearsAFile(t *testing.T) {
	// Most of its time is spent waiting on its own server: it overlaps with
	// the other tests that do.
	t.Parallel()
	bin := buildPlain(t)
	kills := crashKills(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d kills", seed, kills)
	rng := rand.New(rand.NewPCG(seed, seed>>1))

	root := t.TempDir()
	files := make([]*fileModel, 4)
	for i := range files {
		f := &fileModel{name: fmt.Sprintf("f%d.txt", i), acked: content(rng, i, 0), made: map[string]string{}}
		if err := os.WriteFile(filepath.Join(root, f.name), f.acked, 0o644); err != nil {
			t.Fatal(err)
		}
		files[i] = f
	}

	var acks, landedUnacked, torn, leftovers int
	var events []*hashlinev1.WatchResponse
	watched := 0
	for k := range kills {
		cmd, addr, _ := startBinary(t, bin, nil, "--root", root, "--listen", "127.0.0.1:0", "--log-level", "error")
		c, err := client.Dial(addr, client.WithAgentID("crash"))
		if err != nil {
			t.Fatal(err)
		}
		checkTempInvisible(t, c, root)
		checkHistory(t, k, c, files, events)
		watched += len(events)
		events = nil

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var mu sync.Mutex // guards acks and events
		// The Watch events delivered before the kill, for checkHistory.
		st, err := c.RPC().Watch(ctx, &hashlinev1.WatchRequest{})
		if err == nil {
			_, err = st.Header() // the subscription is live
		}
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for {
				ev, err := st.Recv()
				if err != nil {
					return
				}
				mu.Lock()
				events = append(events, ev)
				mu.Unlock()
			}
		})
		for i, f := range files {
			wg.Add(1)
			frng := rand.New(rand.NewPCG(seed+uint64(k), uint64(i)))
			go func() {
				defer wg.Done()
				for gen := 1; ctx.Err() == nil; gen++ {
					if err := step(ctx, c, f, frng, i, k*100000+gen); err != nil {
						if ctx.Err() == nil && !isConnErr(err) {
							t.Errorf("%s: %v", f.name, err)
						}
						return
					}
					mu.Lock()
					acks++
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(10+rng.IntN(140)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cancel()
		wg.Wait()
		c.Close()

		for _, f := range files {
			disk, err := os.ReadFile(filepath.Join(root, f.name))
			switch {
			case err != nil:
				t.Fatalf("kill %d: %s: %v", k, f.name, err)
			case bytes.Equal(disk, f.acked):
			case f.pending != nil && bytes.Equal(disk, f.pending):
				f.acked = f.pending // the write landed; its answer was lost
				f.made[f.pendingRID] = workspace.Version(f.pending)
				f.pendingRID = ""
				landedUnacked++
			default:
				torn++
				t.Errorf("kill %d: %s is %d bytes (version %s), neither the acknowledged %d bytes nor the pending %d",
					k, f.name, len(disk), workspace.Version(disk), len(f.acked), len(f.pending))
				f.acked = disk
			}
			f.pending = nil
			if f.pendingRID != "" {
				f.notMade = append(f.notMade, f.pendingRID)
				f.pendingRID = ""
			}
		}
		names, err := filepath.Glob(filepath.Join(root, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			base := filepath.Base(n)
			if workspace.IsTempName(base) {
				leftovers++
				continue
			}
			if !strings.HasPrefix(base, "f") {
				t.Errorf("kill %d: unexpected file %s", k, base)
			}
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("%d kills, %d acknowledged changes, %d landed but unacknowledged, %d torn, %d temp files left by kills, %d Watch events checked against the history",
		kills, acks, landedUnacked, torn, leftovers, watched+len(events))

	// A final start sweeps the leftovers away.
	restarted := time.Now()
	cmd, addr, _ := startBinary(t, bin, nil, "--root", root, "--listen", "127.0.0.1:0")
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkTempInvisible(t, c, root)
	checkHistory(t, kills, c, files, events)
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := staleTemps(t, root, restarted)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep left %d temp files: %v", len(left), left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
}

// step makes one change to f: a whole-file Write or a Read then an Edit of
// one line. f.pending holds the expected result while the call is out, and
// f.pendingRID its request id.
func step(ctx context.Context, c *client.Client, f *fileModel, rng *rand.Rand, id, gen int) error {
	rid := fmt.Sprintf("f%d-g%d", id, gen)
	if rng.IntN(2) == 0 {
		next := content(rng, id, gen)
		f.pending, f.pendingRID = next, rid
		resp, err := c.Write(ctx, &hashlinev1.WriteRequest{Path: f.name, Content: string(next), RequestId: rid})
		if err != nil {
			return err
		}
		return ack(f, next, resp.GetVersion())
	}
	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: f.name, Limit: 50})
	if err != nil {
		return err
	}
	if r.GetVersion() != workspace.Version(f.acked) {
		return fmt.Errorf("Read shows version %s, not the acknowledged %s", r.GetVersion(), workspace.Version(f.acked))
	}
	line := r.GetLines()[rng.IntN(len(r.GetLines()))]
	text := fmt.Sprintf("edited %d %d", id, gen)
	lines := strings.SplitAfter(string(f.acked), "\n")
	lines[line.GetNumber()-1] = text + "\n"
	next := []byte(strings.Join(lines, ""))
	f.pending, f.pendingRID = next, rid
	resp, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: f.name, Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(line), "", text)}, Context: new(int32), RequestId: rid})
	if err != nil {
		return err
	}
	return ack(f, next, resp.GetVersion())
}

func ack(f *fileModel, next []byte, version string) error {
	if version != workspace.Version(next) {
		return fmt.Errorf("acknowledged version %s is not that of the content sent (%s)", version, workspace.Version(next))
	}
	f.made[f.pendingRID] = version
	f.acked, f.pending, f.pendingRID = next, nil, ""
	return nil
}

// crashHistory returns the entries of the agent "crash" in the server's
// history, by request id.
func crashHistory(t *testing.T, c *client.Client) map[string][]*hashlinev1.HistoryEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := map[string][]*hashlinev1.HistoryEntry{}
	for tok := ""; ; {
		resp, err := c.History(ctx, &hashlinev1.HistoryRequest{Agent: "crash", MaxEntries: 1000, PageToken: tok})
		if err != nil {
			t.Fatalf("History: %v", err)
		}
		for _, e := range resp.GetEntries() {
			out[e.GetRequestId()] = append(out[e.GetRequestId()], e)
		}
		if tok = resp.GetNextPageToken(); tok == "" {
			return out
		}
	}
}

// checkHistory checks, after restart k, that the history holds exactly one
// entry of every change made to files, leaving the version it left, none
// of the changes that did not land and nothing else of the agent "crash";
// and that every Watch event of events (delivered before the kill) names
// an entry of its file and version.
func checkHistory(t *testing.T, k int, c *client.Client, files []*fileModel, events []*hashlinev1.WatchResponse) {
	t.Helper()
	got := crashHistory(t, c)
	byID := map[string]*hashlinev1.HistoryEntry{}
	made := 0
	for _, f := range files {
		for rid, v := range f.made {
			made++
			es := got[rid]
			if len(es) != 1 || len(es[0].GetFiles()) != 1 || es[0].GetFiles()[0].GetPath() != f.name || es[0].GetFiles()[0].GetNewVersion() != v {
				t.Errorf("restart %d: the change %s of %s, made (version %s), is in the history as %v", k, rid, f.name, v, es)
			}
		}
		for _, rid := range f.notMade {
			if es := got[rid]; len(es) != 0 {
				t.Errorf("restart %d: the change %s of %s did not land, and the history holds %v", k, rid, f.name, es)
			}
		}
	}
	n := 0
	for _, es := range got {
		n += len(es)
		for _, e := range es {
			byID[e.GetChangeId()] = e
		}
	}
	if n != made {
		t.Errorf("restart %d: the history holds %d entries of the agent, %d changes were made", k, n, made)
	}
	for _, ev := range events {
		e := byID[ev.GetChangeId()]
		if e == nil || len(e.GetFiles()) != 1 || e.GetFiles()[0].GetPath() != ev.GetPath() || e.GetFiles()[0].GetNewVersion() != ev.GetNewVersion() {
			t.Errorf("restart %d: the Watch event of %s (version %s) named change %q, which the history holds as %v", k, ev.GetPath(), ev.GetNewVersion(), ev.GetChangeId(), e)
		}
	}
}

// content returns a new whole-file content: 1 KiB to 1 MiB of numbered
// lines, so writes take long enough for kills to land inside them.
func content(rng *rand.Rand, id, gen int) []byte {
	n := 16 << rng.IntN(11) // 16 .. 16384 lines of ~64 bytes
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "file %d gen %d line %d %s\n", id, gen, i, strings.Repeat("x", 40))
	}
	return b.Bytes()
}

// staleTemps lists the temp files under root older than since.
func staleTemps(t *testing.T, root string, since time.Time) []string {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(root, ".hashline-*.tmp"))
	var stale []string
	for _, p := range left {
		fi, err := os.Lstat(p)
		if err == nil && !fi.IsDir() && fi.ModTime().Before(since) {
			stale = append(stale, p)
		}
	}
	return stale
}

// checkTempInvisible makes sure no temp file on disk shows through the API:
// Grep skips them, Read refuses their names.
func checkTempInvisible(t *testing.T, c *client.Client, root string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	left, _ := filepath.Glob(filepath.Join(root, ".hashline-*.tmp"))
	if _, err := c.Grep(ctx, &hashlinev1.GrepRequest{Pattern: "line", Literal: true, Hidden: true, MaxMatches: 100000}, func(f *hashlinev1.GrepFile) error {
		if workspace.IsTempName(f.GetPath()) {
			t.Errorf("Grep shows the temp file %s", f.GetPath())
		}
		return nil
	}); err != nil && !isConnErr(err) {
		t.Errorf("grep: %v", err)
	}
	for _, p := range left {
		rel, _ := filepath.Rel(root, p)
		_, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: rel})
		if !errors.Is(err, &client.Error{Reason: "INVALID_PATH"}) {
			t.Errorf("Read of the temp file %s: %v, want INVALID_PATH", rel, err)
		}
	}
}

// isConnErr reports the errors a call gets when the server dies under it.
func isConnErr(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled:
		return true
	}
	return false
}
