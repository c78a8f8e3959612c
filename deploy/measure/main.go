// Command measure measures what the deployment's figures rest on, and
// prints them as the Markdown of BENCHMARKS.md's "Deployment" section:
//
//   - the resident memory of one hashlined idle, right after 20 agents
//     have each read 300 files, and once it has gone quiet after them
//     (the Kubernetes manifests' requests), of the binary the image ships;
//
//   - what the router (nginx with deploy/nginx's configuration) adds to a
//     Read's p50 on loopback: the same Read, direct and through the
//     router, alternated call by call.
//
//     cd deploy && go run ./measure
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/deploy/internal/stack"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
)

func main() {
	agents := flag.Int("agents", 20, "agents that each read every file")
	files := flag.Int("files", 300, "files in the workspace")
	lines := flag.Int("lines", 200, "lines per file")
	calls := flag.Int("calls", 3000, "Reads direct and through the router, each")
	only := flag.String("only", "", "rss or router: measure only that")
	flag.Parse()
	// The image's hashlined is static (Dockerfile, deploy/image): so are
	// the ones measured here, built by the go command this process runs.
	os.Setenv("CGO_ENABLED", "0")
	defer binarytest.Cleanup()
	dir, err := os.MkdirTemp("", "hashline-measure-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if *only != "router" {
		if err := rss(dir, *agents, *files, *lines); err != nil {
			log.Fatal(err)
		}
	}
	if *only != "rss" {
		if err := router(dir, *calls); err != nil {
			log.Fatal(err)
		}
	}
}

// source is a file of n lines of Go-like code.
func source(i, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package p%d\n\n", i)
	for l := 2; l < n; l++ {
		fmt.Fprintf(&b, "\tx%d := compute(%d, \"value %d of file %d\") // line %d\n", l, l*i, l, i, l)
	}
	return b.String()
}

// mem is a process's resident memory, from /proc/PID/status, in bytes.
type mem struct {
	rss, hwm   int64 // VmRSS, VmHWM
	anon, file int64 // RssAnon, RssFile: the heap and stacks; the binary's pages
}

// status reads the resident memory of pid.
func status(pid int) (mem, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return mem{}, err
	}
	defer f.Close()
	var m mem
	fields := map[string]*int64{"VmRSS": &m.rss, "VmHWM": &m.hwm, "RssAnon": &m.anon, "RssFile": &m.file}
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		p := fields[k]
		if !ok || p == nil {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return mem{}, err
		}
		*p = kb << 10
	}
	return m, s.Err()
}

// metrics returns the values of names on the Prometheus page at url.
func metrics(url string, names ...string) (map[string]string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]string{}
	s := bufio.NewScanner(resp.Body)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), " ")
		if ok && slices.Contains(names, k) {
			out[k] = v
		}
	}
	return out, s.Err()
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func rss(dir string, agents, files, lines int) error {
	// The binary the image ships (Dockerfile, deploy/image): static (main
	// sets CGO_ENABLED=0; no libc mapped), without gRPC's tracing and
	// without symbol tables.
	bin, err := binarytest.Build(binarytest.Hashlined, "-tags=grpcnotrace", "-trimpath", "-ldflags=-s -w")
	if err != nil {
		return err
	}
	b, err := stack.NewBackend(bin, filepath.Join(dir, "rss"), "alpha", "--metrics-listen", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var size int64
	for i := range files {
		text := source(i, lines)
		size += int64(len(text))
		p := filepath.Join(b.Root, fmt.Sprintf("pkg%02d", i%30), fmt.Sprintf("f%03d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	// One token per agent: with tokens, the token names the agent (the
	// x-agent-id of the call is ignored), and the server remembers what
	// each agent was shown of each file.
	var toks strings.Builder
	toks.WriteString("tokens:\n")
	token := func(a int) string { return fmt.Sprintf("agent-%d-token-0123456789abcdef", a) }
	for a := range agents {
		fmt.Fprintf(&toks, "  - token: %s\n    agent: agent-%d\n    permission: write\n", token(a), a)
	}
	if err := os.WriteFile(b.Tokens, []byte(toks.String()), 0o600); err != nil {
		return err
	}
	if err := b.Start(); err != nil {
		return err
	}
	defer b.Stop(30 * time.Second)
	pid := b.Pid()
	time.Sleep(2 * time.Second)
	idle, err := status(pid)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, agents)
	for a := range agents {
		wg.Go(func() {
			c, err := client.Dial(b.Addr, client.WithToken(token(a)))
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := range files {
				p := fmt.Sprintf("pkg%02d/f%03d.go", i%30, i)
				if _, err := c.Read(context.Background(), &hashlinev1.ReadRequest{Path: p}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	after, err := status(pid)
	if err != nil {
		return err
	}
	// hashlined returns what the reads freed once it has been quiet for a
	// couple of seconds (daemon.TuneRuntime): this waits well past that.
	time.Sleep(6 * time.Second)
	quiet, err := status(pid)
	if err != nil {
		return err
	}
	heap, err := metrics(b.MetricsURL(), "go_memstats_heap_inuse_bytes", "go_memstats_heap_alloc_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes", "hashline_cache_bytes", "go_gc_gogc_percent", "go_gc_gomemlimit_bytes")
	if err != nil {
		return err
	}
	log.Printf("after quiet: %v", heap)
	inuse, _ := strconv.ParseFloat(heap["go_memstats_heap_inuse_bytes"], 64)
	gogc := heap["go_gc_gogc_percent"]
	if os.Getenv("GOGC") == "" {
		gogc += " (default; 400 while calls on large files run)"
	}
	fmt.Printf("### Resident memory of one hashlined\n\n")
	fmt.Printf("hashlined with its default flags, a workspace of %d Go-like files of %d lines (%s); %d agents, each with its own connection, read every file once, all at once. VmRSS, VmHWM, RssAnon and RssFile from /proc, the heap in use from hashlined's metrics; %s/%s, %d cores.\n\n",
		files, lines, mib(size), agents, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("| GOGC | idle (2 s after start) | after %d agents read %d files | quiet (6 s later) | of which anon / file | heap in use | peak (VmHWM) | target |\n|---|---|---|---|---|---|---|---|\n", agents, files)
	fmt.Printf("| %s | %s | %s | %s | %s / %s | %s | %s | < 32 MB |\n\n", gogc, mib(idle.rss), mib(after.rss), mib(quiet.rss), mib(quiet.anon), mib(quiet.file), mib(int64(inuse)), mib(quiet.hwm))
	return nil
}

func router(dir string, calls int) error {
	s, err := stack.Start(filepath.Join(dir, "router"), []string{"alpha"}, nil)
	if err != nil {
		return err
	}
	defer s.Stop()
	b := s.Backends["alpha"]
	if err := os.WriteFile(filepath.Join(b.Root, "f.go"), []byte(source(1, 100)), 0o644); err != nil {
		return err
	}
	opts := []client.Option{client.WithToken(b.Token), client.WithAgentID("agent"), client.WithWorkspace("alpha")}
	direct, err := client.Dial(b.Addr, opts...)
	if err != nil {
		return err
	}
	defer direct.Close()
	routed, err := client.Dial(s.Router.Addr, opts...)
	if err != nil {
		return err
	}
	defer routed.Close()
	ctx := context.Background()
	req := &hashlinev1.ReadRequest{Path: "f.go"}
	read := func(c *client.Client) (time.Duration, error) {
		t0 := time.Now()
		_, err := c.Read(ctx, req)
		return time.Since(t0), err
	}
	// Warm both paths (connections, the router's upstream connections).
	for range 200 {
		if _, err := read(direct); err != nil {
			return err
		}
		if _, err := read(routed); err != nil {
			return err
		}
	}
	var d, r []time.Duration
	for i := range calls {
		first, second := direct, routed
		if i%2 == 1 {
			first, second = routed, direct
		}
		t1, err := read(first)
		if err != nil {
			return err
		}
		t2, err := read(second)
		if err != nil {
			return err
		}
		if first == direct {
			d, r = append(d, t1), append(r, t2)
		} else {
			d, r = append(d, t2), append(r, t1)
		}
		time.Sleep(200 * time.Microsecond)
	}
	pct := func(xs []time.Duration, p float64) time.Duration {
		slices.Sort(xs)
		return xs[int(float64(len(xs)-1)*p)]
	}
	ms := func(x time.Duration) string { return fmt.Sprintf("%.3f ms", float64(x)/float64(time.Millisecond)) }
	dp50, rp50 := pct(d, 0.5), pct(r, 0.5)
	fmt.Printf("### What the router adds to a Read\n\n")
	fmt.Printf("A Read of a 100-line file by the Go client, direct to hashlined and through nginx with deploy/nginx/hashline-router.conf (routing by the x-hashline-workspace header, upstream keepalive), alternated call by call, %d calls each after 200 to warm up; loopback, %d cores.\n\n", calls, runtime.NumCPU())
	fmt.Printf("| path | p50 | p90 | p99 |\n|---|---|---|---|\n")
	fmt.Printf("| direct | %s | %s | %s |\n", ms(dp50), ms(pct(d, 0.9)), ms(pct(d, 0.99)))
	fmt.Printf("| through the router | %s | %s | %s |\n", ms(rp50), ms(pct(r, 0.9)), ms(pct(r, 0.99)))
	fmt.Printf("\nThe router adds %s to the p50 (target <= 0.3 ms).\n", ms(rp50-dp50))
	return nil
}
