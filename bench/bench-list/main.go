//go:build linux

// Command bench-list compares List with `rg --files` on one generated
// tree: 10,000 files in nested directories, with a .gitignore. Each round
// runs, alternating (the order rotates every round): rg, the in-process
// walk (internal/grep List), and List through a real hashlined over
// loopback gRPC three ways: as client.ListAll lists a whole tree (pages of
// the most entries the server gives, which it may still cut at its
// response limit: the row says how many pages the client got), in pages of
// the API's default 1000 entries (a model's page; no target), and as
// ListAll with include_versions (every file read; no target). It prints
// the medians of wall time and their ratio to rg; the target is 1.5x for
// the whole-tree listing (issue 24).
//
// It prints the CPU time of each run too, the client's (rg's own, or this
// process's) and the server's (every thread of hashlined, from
// /proc/PID/task/*/schedstat): on a shared machine the wall times of
// single runs swing with the load, and the CPU times say where the time
// went. rg --files lists files only and stats nothing; List also lists
// directories and stats every file for its size, so the comparison is of
// the whole job a listing does. When rg is not installed the table says so
// and the other rows are still measured.
//
// Every run's file count must equal rg's, or it fails.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hashline/hashline/bench/machine"
	"github.com/hashline/hashline/bench/section"
	"github.com/hashline/hashline/bench/served"
	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/grep"
)

// The markers of this program's section of BENCHMARKS.md.
const (
	mdBegin = "<!-- bench:list -->"
	mdEnd   = "<!-- /bench:list -->"
)

func main() {
	dir := flag.String("dir", "", "where to generate the tree (default a temp dir, removed after)")
	files := flag.Int("files", 10000, "files in the tree")
	rgBin := flag.String("rg", "rg", "ripgrep binary")
	hashlined := flag.String("hashlined", "", "hashlined binary (default: built from this checkout)")
	rounds := flag.Int("rounds", 9, "measured rounds (after one warm-up round)")
	md := flag.String("md", "", "also write the table as the bench-list section of this markdown file (BENCHMARKS.md)")
	flag.Parse()
	if err := run(*dir, *files, *rgBin, *hashlined, *rounds, *md); err != nil {
		fmt.Fprintf(os.Stderr, "bench-list: FAIL: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string, n int, rgBin, hashlinedBin string, rounds int, md string) error {
	ctx := context.Background()
	if dir == "" {
		d, err := os.MkdirTemp("", "hashline-bench-list-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if err := makeTree(dir, n); err != nil {
		return err
	}
	if hashlinedBin == "" {
		var err error
		if hashlinedBin, err = binarytest.Build(binarytest.Hashlined); err != nil {
			return err
		}
		defer binarytest.Cleanup()
	}
	rgPath, rgErr := exec.LookPath(rgBin)
	p, err := served.Start(hashlinedBin, dir)
	if err != nil {
		return err
	}
	defer p.Stop()
	c := client.New(p.Conn)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()

	// grpcList lists the tree through the server, every page, and returns
	// the files and the pages it took.
	grpcList := func(req *hashlinev1.ListRequest) (files, pages int, err error) {
		err = c.ListAll(ctx, req, func(es []*hashlinev1.Entry) error {
			pages++
			for _, e := range es {
				if e.GetType() == hashlinev1.EntryType_ENTRY_TYPE_FILE {
					files++
				}
			}
			return nil
		})
		return files, pages, err
	}
	pid := p.Cmd.Process.Pid
	type runner struct {
		name string
		// run returns the files listed, the pages, and the CPU time of
		// the client when it is not this process.
		run    func() (files, pages int, cpu time.Duration, err error)
		target bool
		server bool
	}
	runners := []runner{
		{name: "rg --files", run: func() (int, int, time.Duration, error) {
			if rgErr != nil {
				return 0, 0, 0, rgErr
			}
			// The rules List applies: .gitignore files whether or not the
			// tree is a git repository, nothing from outside it.
			cmd := exec.Command(rgPath, "--no-config", "--no-require-git", "--no-ignore-global", "--no-ignore-parent", "--files")
			cmd.Dir = dir
			out, err := cmd.Output()
			var cpu time.Duration
			if cmd.ProcessState != nil {
				cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			return strings.Count(string(out), "\n"), 1, cpu, err
		}},
		{name: "List in-process", run: func() (int, int, time.Duration, error) {
			files := 0
			err := grep.List(ctx, grep.RootFS(root), grep.ListOptions{Path: ".", Recursive: true}, func(e grep.ListEntry) error {
				if e.Type == 0 {
					files++
				}
				return nil
			})
			return files, 1, -1, err
		}},
		{name: "List over gRPC, whole tree (client.ListAll)", target: true, server: true, run: func() (int, int, time.Duration, error) {
			files, pages, err := grpcList(&hashlinev1.ListRequest{Recursive: true})
			return files, pages, -1, err
		}},
		{name: "List over gRPC, 1000-entry pages (the API default)", server: true, run: func() (int, int, time.Duration, error) {
			files, pages, err := grpcList(&hashlinev1.ListRequest{Recursive: true, MaxEntries: 1000})
			return files, pages, -1, err
		}},
		{name: "List over gRPC, whole tree, include_versions", server: true, run: func() (int, int, time.Duration, error) {
			files, pages, err := grpcList(&hashlinev1.ListRequest{Recursive: true, IncludeVersions: true})
			return files, pages, -1, err
		}},
	}
	type sample struct{ wall, client, server time.Duration }
	samples := make([][]sample, len(runners))
	pages := make([]int, len(runners))
	var want int
	for round := 0; round <= rounds; round++ {
		for k := range runners {
			r := (k + round) % len(runners)
			srv0 := taskCPU(pid)
			self0 := selfCPU()
			start := time.Now()
			got, np, cpu, err := runners[r].run()
			wall := time.Since(start)
			self := selfCPU() - self0
			srv := taskCPU(pid) - srv0
			if r == 0 && err != nil {
				continue // no rg: its row says so
			}
			if err != nil {
				return fmt.Errorf("%s: %w", runners[r].name, err)
			}
			if want == 0 {
				want = got
			} else if got != want {
				return fmt.Errorf("%s found %d files, another runner %d", runners[r].name, got, want)
			}
			if cpu < 0 {
				cpu = self
			}
			if !runners[r].server {
				srv = -1
			}
			pages[r] = np
			if round > 0 {
				samples[r] = append(samples[r], sample{wall, cpu, srv})
			}
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "A generated tree of %d files (%d listed, the rest .gitignore'd) in nested directories; %d rounds alternated, the order rotating; load average %s at the end. "+
		"`rg --files` lists files only and stats nothing; List also lists directories and stats every file for its size. CPU: the client's (rg's own, or the bench process's) and the server's (every thread of hashlined).\n\n",
		n, want, rounds, machine.LoadAvg())
	fmt.Fprintln(&out, "| run | pages | median ms | vs rg --files | CPU ms: client | CPU ms: server |")
	fmt.Fprintln(&out, "|---|---:|---:|---:|---:|---:|")
	median := func(r int, f func(sample) time.Duration) time.Duration {
		v := make([]time.Duration, len(samples[r]))
		for i, s := range samples[r] {
			v[i] = f(s)
		}
		return stats.Median(v)
	}
	ms := func(d time.Duration) string {
		if d < 0 {
			return ""
		}
		return fmt.Sprintf("%.1f", float64(d)/1e6)
	}
	var rg time.Duration
	if len(samples[0]) > 0 {
		rg = median(0, func(s sample) time.Duration { return s.wall })
	}
	for r, run := range runners {
		if len(samples[r]) == 0 {
			fmt.Fprintf(&out, "| %s | | not measured: %v | | | |\n", run.name, rgErr)
			continue
		}
		m := median(r, func(s sample) time.Duration { return s.wall })
		vs := "n/a (no rg)"
		if rg > 0 {
			vs = fmt.Sprintf("%.2fx", float64(m)/float64(rg))
		}
		fmt.Fprintf(&out, "| %s | %d | %s | %s | %s | %s |\n", run.name, pages[r], ms(m), vs,
			ms(median(r, func(s sample) time.Duration { return s.client })),
			ms(median(r, func(s sample) time.Duration { return s.server })))
	}
	out.WriteString("\n")
	if rg > 0 {
		for r, run := range runners {
			if !run.target {
				continue
			}
			ratio := float64(median(r, func(s sample) time.Duration { return s.wall })) / float64(rg)
			verdict := "met"
			if ratio > 1.5 || math.IsNaN(ratio) {
				verdict = "NOT met"
			}
			fmt.Fprintf(&out, "Target: %s <= 1.5x `rg --files`: %.2fx, %s.\n", run.name, ratio, verdict)
		}
	}
	fmt.Print(out.String())
	if md != "" {
		return section.Write(md, mdBegin, mdEnd, mdBegin+"\n## List and rg --files\n\n"+out.String()+mdEnd+"\n")
	}
	return nil
}

// makeTree writes n small files under dir, 20 to a directory, three levels
// deep, plus a .gitignore that hides every tenth directory's *.log files.
func makeTree(dir string, n int) error {
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored/\n"), 0o644); err != nil {
		return err
	}
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("a%02d", i/1000), fmt.Sprintf("b%02d", i/100%10), fmt.Sprintf("c%02d", i/20%5))
		if i%50 == 0 {
			d = filepath.Join(d, "ignored")
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), []byte("package x\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// taskCPU is the CPU time the threads of process pid have used, from the
// first field of each thread's schedstat (nanoseconds on the CPU), or 0
// when it cannot be read.
func taskCPU(pid int) time.Duration {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}
