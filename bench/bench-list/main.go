//go:build linux

// Command bench-list compares List with `rg --files` on one generated
// tree: 10,000 files in nested directories, with a .gitignore. Each round
// runs rg, the in-process walk (internal/grep List) and List through a real
// hashlined over loopback gRPC (every page), alternating, and prints the
// medians and their ratio to rg; the target is 1.5x (issue 24). rg --files
// lists files only and stats nothing; List also lists directories and
// stats every file for its size, so the comparison is of the whole job a
// listing does. When rg is not installed the table says so and the other
// two rows are still measured.
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
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/grep"
)

func main() {
	dir := flag.String("dir", "", "where to generate the tree (default a temp dir, removed after)")
	files := flag.Int("files", 10000, "files in the tree")
	rgBin := flag.String("rg", "rg", "ripgrep binary")
	hashlined := flag.String("hashlined", "", "hashlined binary (default: built from this checkout)")
	rounds := flag.Int("rounds", 9, "measured rounds (after one warm-up round)")
	page := flag.Int("page", 100000, "List's max_entries (100000: one page; 1000: the default pages)")
	flag.Parse()
	if err := run(*dir, *files, *rgBin, *hashlined, *rounds, *page); err != nil {
		fmt.Fprintf(os.Stderr, "bench-list: FAIL: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string, n int, rgBin, hashlinedBin string, rounds, page int) error {
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
	p, err := binarytest.Start(hashlinedBin, binarytest.Options{Stderr: os.Stderr,
		Args: []string{"--root", dir, "--listen", "127.0.0.1:0", "--log-level", "warn"}})
	if err != nil {
		return err
	}
	defer p.Stop(10 * time.Second)
	conn, err := grpc.NewClient(p.Addr, append(client.TransportOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))...)
	if err != nil {
		return err
	}
	defer conn.Close()
	c := client.New(conn)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()

	runners := []struct {
		name string
		run  func() (int, error)
	}{
		{"rg --files", func() (int, error) {
			if rgErr != nil {
				return 0, rgErr
			}
			// The rules List applies: .gitignore files whether or not the
			// tree is a git repository, nothing from outside it.
			cmd := exec.Command(rgPath, "--no-config", "--no-require-git", "--no-ignore-global", "--no-ignore-parent", "--files")
			cmd.Dir = dir
			out, err := cmd.Output()
			return strings.Count(string(out), "\n"), err
		}},
		{"List in-process", func() (int, error) {
			files := 0
			err := grep.List(ctx, root.FS(), grep.ListOptions{Path: ".", Recursive: true}, func(e grep.ListEntry) error {
				if e.Type == 0 {
					files++
				}
				return nil
			})
			return files, err
		}},
		{"List over gRPC", func() (int, error) {
			files := 0
			err := c.ListAll(ctx, &hashlinev1.ListRequest{Recursive: true, MaxEntries: int32(page)}, func(es []*hashlinev1.Entry) error {
				for _, e := range es {
					if e.GetType() == hashlinev1.EntryType_ENTRY_TYPE_FILE {
						files++
					}
				}
				return nil
			})
			return files, err
		}},
	}
	times := make([][]time.Duration, len(runners))
	var want int
	for round := 0; round <= rounds; round++ {
		for k := range runners {
			r := (k + round) % len(runners)
			start := time.Now()
			got, err := runners[r].run()
			d := time.Since(start)
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
			if round > 0 {
				times[r] = append(times[r], d)
			}
		}
	}
	fmt.Printf("tree: %d files (%d listed, the rest .gitignore'd) in %s; %d rounds; List max_entries %d; load %s\n",
		n, want, dir, rounds, page, loadavg())
	fmt.Println("| run | median ms | vs rg --files |")
	fmt.Println("|---|---:|---:|")
	var rg time.Duration
	if len(times[0]) > 0 {
		rg = stats.Median(times[0])
	}
	for r, run := range runners {
		if len(times[r]) == 0 {
			fmt.Printf("| %s | not measured: %v | |\n", run.name, rgErr)
			continue
		}
		m := stats.Median(times[r])
		vs := "n/a (no rg)"
		if rg > 0 {
			vs = fmt.Sprintf("%.2fx", float64(m)/float64(rg))
		}
		fmt.Printf("| %s | %.1f | %s |\n", run.name, float64(m)/1e6, vs)
	}
	if rg > 0 {
		ratio := float64(stats.Median(times[2])) / float64(rg)
		verdict := "met"
		if ratio > 1.5 || math.IsNaN(ratio) {
			verdict = "NOT met"
		}
		fmt.Printf("target List over gRPC <= 1.5x rg --files: %.2fx, %s\n", ratio, verdict)
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

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
