package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
)

// watchLoadShared is how many files every worker also edits (besides its
// own), so that edits meet on the same files as well as on distinct ones.
const watchLoadShared = 4

// watchStreamsPerConn stays under hashlined's --max-concurrent-streams
// default (256), past which further Watch calls would wait for a slot.
const watchStreamsPerConn = 200

// watchLoadResult is one run of the watch load test.
type watchLoadResult struct {
	watchers     int
	edits        []time.Duration // every successful Edit's latency
	conflicts    int             // STALE_REF on the shared files
	reads        int
	vmHWM, vmRSS int64 // bytes, from /proc/PID/status at the end
	elapsed      time.Duration
	opened       int
}

// watchLoad (-only watchload): Edit latency with and without stalled Watch
// subscribers. Two runs, each on a fresh hashlined (fsync on, its defaults)
// over loopback and fresh files: N workers loop Read then Edit of one line,
// alternating between a file of their own and one of a few shared files;
// in the second run W Watch streams of the whole workspace are open whose
// client never reads (64 KiB static flow-control windows, so the server's
// sends block once a stream's window is full). It prints Edit p50 and p99
// of both runs, their ratio, and the server's peak and final RSS. The RSS
// is the server's as it runs by default, with Go's collector settings, so
// it shows garbage awaiting collection as much as memory held. It writes no
// report: it is a measurement to run by hand, never in CI.
func watchLoad(c config) error {
	tmp, err := os.MkdirTemp("", "hashline-watchload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The servers keep their state under $XDG_STATE_HOME: here.
	if err := os.Setenv("XDG_STATE_HOME", filepath.Join(tmp, "state")); err != nil {
		return err
	}
	log.Print("building hashlined")
	defer binarytest.Cleanup()
	bin, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		return err
	}
	var res []watchLoadResult
	for i, watchers := range []int{0, c.watchers} {
		log.Printf("run %d: %d workers for %s, %d stalled watchers", i+1, c.workers, c.duration, watchers)
		r, err := watchLoadRun(bin, filepath.Join(tmp, fmt.Sprint("run", i)), c, watchers)
		if err != nil {
			return fmt.Errorf("run with %d watchers: %w", watchers, err)
		}
		res = append(res, r)
	}
	fmt.Printf("\nwatchload: %d workers x %s per run (Read + Edit of one line, own file and %d shared files), hashlined on loopback, fsync on\n\n",
		c.workers, c.duration, watchLoadShared)
	fmt.Println("| stalled watchers | edits | edits/s | STALE_REF (shared) | Edit p50 | Edit p99 | server VmHWM | server VmRSS at end |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range res {
		fmt.Printf("| %d | %d | %.0f | %d | %s | %s | %s | %s |\n", r.watchers, len(r.edits), float64(len(r.edits))/r.elapsed.Seconds(), r.conflicts,
			ms(stats.Percentile(r.edits, 50)), ms(stats.Percentile(r.edits, 99)), mib(r.vmHWM), mib(r.vmRSS))
	}
	without, with := res[0], res[1]
	p50 := float64(stats.Percentile(with.edits, 50)) / float64(stats.Percentile(without.edits, 50))
	p99 := float64(stats.Percentile(with.edits, 99)) / float64(stats.Percentile(without.edits, 99))
	verdict := "met"
	if p50 > 1.5 {
		verdict = "MISSED"
	}
	fmt.Printf("\nwith/without: Edit p50 %.2fx, p99 %.2fx (target p50 <= 1.5x: %s); %d watch streams were open through the second run\n",
		p50, p99, verdict, with.opened)
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func watchLoadRun(bin, root string, c config, watchers int) (watchLoadResult, error) {
	res := watchLoadResult{watchers: watchers}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return res, err
	}
	src := sourceFile(100)
	for i := range c.workers {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("w%d.go", i)), []byte(src), 0o644); err != nil {
			return res, err
		}
	}
	for i := range watchLoadShared {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("s%d.go", i)), []byte(src), 0o644); err != nil {
			return res, err
		}
	}
	d, err := startServer(bin, "--root", root, "--listen", "127.0.0.1:0", "--log-level", "error")
	if err != nil {
		return res, err
	}
	defer d.close()

	stopWatch, opened, err := openStalledWatchers(d.proc.Addr, watchers)
	if err != nil {
		return res, err
	}
	defer stopWatch()
	res.opened = opened

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		runErr  error
		started = time.Now()
	)
	warmUntil := started.Add(2 * time.Second)
	deadline := warmUntil.Add(c.duration)
	lats := make([][]time.Duration, c.workers)
	conflicts := make([]int, c.workers)
	reads := make([]int, c.workers)
	for w := range c.workers {
		cl := client.New(d.conn, client.WithAgentID(fmt.Sprintf("bench-%d", w)))
		rng := rand.New(rand.NewPCG(uint64(w), 7))
		wg.Go(func() {
			for n := 0; time.Now().Before(deadline) && ctx.Err() == nil; n++ {
				path := fmt.Sprintf("w%d.go", w)
				if n%2 == 1 {
					path = fmt.Sprintf("s%d.go", rng.IntN(watchLoadShared))
				}
				r, err := cl.Read(ctx, &hashlinev1.ReadRequest{Path: path})
				if err != nil {
					mu.Lock()
					runErr = errors.Join(runErr, fmt.Errorf("worker %d Read %s: %w", w, path, err))
					mu.Unlock()
					cancel()
					return
				}
				reads[w]++
				lines := r.GetLines()
				ln := lines[rng.IntN(len(lines))]
				t0 := time.Now()
				_, err = cl.Edit(ctx, &hashlinev1.EditRequest{Path: path, BaseVersion: r.GetVersion(), Edits: []*hashlinev1.FileEdit{
					client.Replace(client.Ref(ln), "", fmt.Sprintf("\tv%06d := f(%d) // worker %d, edit %d", ln.GetNumber()-1, n, w, n)),
				}})
				took := time.Since(t0)
				switch {
				case errors.Is(err, client.ErrStaleRef):
					conflicts[w]++ // another worker changed that line of a shared file
				case err != nil:
					if ctx.Err() == nil {
						mu.Lock()
						runErr = errors.Join(runErr, fmt.Errorf("worker %d Edit %s: %w", w, path, err))
						mu.Unlock()
					}
					cancel()
					return
				case t0.After(warmUntil):
					lats[w] = append(lats[w], took)
				}
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(warmUntil)
	if runErr != nil {
		return res, runErr
	}
	res.edits = slices.Concat(lats...)
	for w := range c.workers {
		res.conflicts += conflicts[w]
		res.reads += reads[w]
	}
	res.vmHWM, res.vmRSS, err = procMemory(d.proc.Cmd.Process.Pid)
	log.Printf("%d watchers: %d edits, p50 %s, p99 %s, VmHWM %s, VmRSS %s", watchers, len(res.edits),
		ms(stats.Percentile(res.edits, 50)), ms(stats.Percentile(res.edits, 99)), mib(res.vmHWM), mib(res.vmRSS))
	return res, err
}

// openStalledWatchers opens n Watch streams of the whole workspace whose
// client never reads, spread over connections with the smallest static
// flow-control windows grpc allows (64 KiB), and returns once the server
// has answered every one (its response headers say the subscription is
// live). An event is a few hundred bytes, so after a few hundred edits
// every stream's window is full and its server side can only block in
// Send, or fall behind.
func openStalledWatchers(addr string, n int) (stop func(), opened int, err error) {
	var conns []*grpc.ClientConn
	ctx, cancel := context.WithCancel(context.Background())
	stop = func() {
		cancel()
		for _, c := range conns {
			c.Close()
		}
	}
	for i := range n {
		if i%watchStreamsPerConn == 0 {
			conn, err := grpc.NewClient("passthrough:///"+addr,
				grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithStaticStreamWindowSize(64<<10), grpc.WithStaticConnWindowSize(64<<10))
			if err != nil {
				stop()
				return nil, 0, err
			}
			conns = append(conns, conn)
		}
		rpc := hashlinev1.NewFileServiceClient(conns[len(conns)-1])
		wctx := metadata.AppendToOutgoingContext(ctx, client.AgentMetadataKey, fmt.Sprint("watcher-", i))
		st, err := rpc.Watch(wctx, &hashlinev1.WatchRequest{})
		if err == nil {
			_, err = st.Header()
		}
		if err != nil {
			stop()
			return nil, 0, fmt.Errorf("watch stream %d: %w", i, err)
		}
		opened++ // the stream lives on in its connection; nobody reads it
	}
	return stop, opened, nil
}

// procMemory reads the peak and current resident set of a process.
func procMemory(pid int) (hwm, rss int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status %s: %w", pid, k, err)
		}
		if k == "VmHWM" {
			hwm = kb << 10
		} else {
			rss = kb << 10
		}
	}
	return hwm, rss, s.Err()
}
