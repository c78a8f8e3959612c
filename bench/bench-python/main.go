//go:build linux

// Command bench-python compares the Python client's Read with the Go
// client's on one file of 10,000 lines, both reading it whole in one call
// from the same real hashlined over loopback gRPC (started with a read
// limit that lets one Read return the whole file). The Python client runs
// in a process of its own (worker.py, with hashline_client from this
// checkout); the two clients alternate in rounds, the order rotating, so
// that the machine's load falls on both alike. It prints the medians and
// their ratio, for the tagged lines (what read returns by default) and for
// the text alone (omit_lines); the target is the Python client within 1.5x
// of the Go client's time (issue 36).
package main

import (
	"bufio"
	"context"
	_ "embed"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashline/hashline/bench/machine"
	"github.com/hashline/hashline/bench/section"
	"github.com/hashline/hashline/bench/served"
	"github.com/hashline/hashline/bench/stats"
	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
)

// The markers of this program's section of BENCHMARKS.md.
const (
	mdBegin = "<!-- bench:python -->"
	mdEnd   = "<!-- /bench:python -->"
)

//go:embed worker.py
var worker []byte

func main() {
	lines := flag.Int("lines", 10000, "lines in the file read")
	rounds := flag.Int("rounds", 15, "rounds; each makes -calls calls from each client, the first round a warm-up")
	calls := flag.Int("calls", 10, "calls per client per round")
	python := flag.String("python", "", "python3 that imports grpc and google.protobuf (default: python3, then /usr/bin/python3)")
	src := flag.String("client", "../client/python/src", "the Python client's source directory (PYTHONPATH)")
	hashlined := flag.String("hashlined", "", "hashlined binary (default: built from this checkout)")
	md := flag.String("md", "", "rewrite this program's section of this Markdown file")
	flag.Parse()
	if err := run(*lines, *rounds, *calls, *python, *src, *hashlined, *md); err != nil {
		fmt.Fprintln(os.Stderr, "bench-python:", err)
		os.Exit(1)
	}
}

// findPython returns the first python3 that imports grpc and protobuf, as
// the Makefile's test-python does.
func findPython(want string) (string, error) {
	cands := []string{"python3", "/usr/bin/python3"}
	if want != "" {
		cands = []string{want}
	}
	for _, p := range cands {
		if exec.Command(p, "-c", "import grpc, google.protobuf").Run() == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no python3 imports grpc and google.protobuf (tried %s); install python3-grpcio and python3-protobuf, or set -python", strings.Join(cands, ", "))
}

// pyReader is a running worker.py: each batch asks it for n calls and
// returns their times.
type pyReader struct {
	cmd *exec.Cmd
	in  *bufio.Writer
	out *bufio.Scanner
	w   interface{ Close() error }
}

func startPython(py, src, addr, path string, limit, want int, omit bool) (*pyReader, error) {
	dir, err := os.MkdirTemp("", "bench-python-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // the interpreter has read the script by the time it answers
	script := filepath.Join(dir, "worker.py")
	if err := os.WriteFile(script, worker, 0o600); err != nil {
		return nil, err
	}
	absSrc, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	o := "0"
	if omit {
		o = "1"
	}
	cmd := exec.Command(py, script, addr, path, strconv.Itoa(limit), o, strconv.Itoa(want))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+absSrc, "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &pyReader{cmd: cmd, in: bufio.NewWriter(stdin), out: bufio.NewScanner(stdout), w: stdin}
	p.out.Buffer(make([]byte, 1<<16), 1<<20)
	if _, err := p.batch(1); err != nil { // connects and reads the script
		p.stop()
		return nil, err
	}
	return p, nil
}

func (p *pyReader) batch(n int) ([]time.Duration, error) {
	fmt.Fprintln(p.in, n)
	if err := p.in.Flush(); err != nil {
		return nil, err
	}
	if !p.out.Scan() {
		return nil, fmt.Errorf("the Python worker stopped: %v", p.cmd.Wait())
	}
	var out []time.Duration
	for _, f := range strings.Fields(p.out.Text()) {
		ns, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the Python worker answered %q", p.out.Text())
		}
		out = append(out, time.Duration(ns))
	}
	if len(out) != n {
		return nil, fmt.Errorf("the Python worker made %d calls, not %d", len(out), n)
	}
	return out, nil
}

func (p *pyReader) stop() {
	p.w.Close()
	p.cmd.Wait()
}

func run(lines, rounds, calls int, python, src, hashlinedBin, md string) error {
	py, err := findPython(python)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-python-ws-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "\tx%d := fmt.Sprintf(\"line %%d of a generated file\", %d) // padding to a typical line length\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.go"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if hashlinedBin == "" {
		if hashlinedBin, err = binarytest.Build(binarytest.Hashlined); err != nil {
			return err
		}
		defer binarytest.Cleanup()
	}
	p, err := served.Start(hashlinedBin, dir, "--read-limit", strconv.Itoa(lines), "--read-bytes", strconv.Itoa(4*b.Len()))
	if err != nil {
		return err
	}
	defer p.Stop()
	c := client.New(p.Conn)
	ctx := context.Background()

	type row struct {
		name   string
		omit   bool
		goT    []time.Duration
		pyT    []time.Duration
		median [2]time.Duration
	}
	rows := []*row{{name: "tagged lines (read)"}, {name: "text only (omit_lines)", omit: true}}
	for _, r := range rows {
		pr, err := startPython(py, src, p.Addr, "big.go", lines, lines, r.omit)
		if err != nil {
			return err
		}
		goBatch := func(n int) ([]time.Duration, error) {
			var out []time.Duration
			for range n {
				t := time.Now()
				res, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "big.go", Limit: int32(lines), OmitLines: r.omit})
				d := time.Since(t)
				if err != nil {
					return nil, err
				}
				got := len(res.GetLines())
				if r.omit {
					got = strings.Count(res.GetText(), "\n") + 1
				}
				if got != lines {
					return nil, fmt.Errorf("the Go client read %d lines, want %d", got, lines)
				}
				out = append(out, d)
			}
			return out, nil
		}
		for round := range rounds {
			for k := range 2 {
				var ts []time.Duration
				var err error
				if (round+k)%2 == 0 {
					ts, err = goBatch(calls)
					if round > 0 {
						r.goT = append(r.goT, ts...)
					}
				} else {
					ts, err = pr.batch(calls)
					if round > 0 {
						r.pyT = append(r.pyT, ts...)
					}
				}
				if err != nil {
					pr.stop()
					return err
				}
			}
		}
		pr.stop()
		r.median = [2]time.Duration{stats.Median(r.goT), stats.Median(r.pyT)}
	}

	pyVersion, _ := exec.Command(py, "-c", "import sys, grpc, google.protobuf as p; print('Python %d.%d, grpcio %s, protobuf %s' % (sys.version_info[0], sys.version_info[1], grpc.__version__, p.__version__))").Output()
	var out strings.Builder
	fmt.Fprintf(&out, "One file of %d lines (%d bytes) read whole in one Read from a real hashlined over loopback gRPC, by the Go client in this process and by the Python client (`hashline_client`, %s) in its own; %d rounds of %d calls from each, alternated, the order rotating, after a warm-up round; load average %s at the end.\n\n",
		lines, b.Len(), strings.TrimSpace(string(pyVersion)), rounds-1, calls, machine.LoadAvg())
	fmt.Fprintln(&out, "| Read of | Go p50 ms | Python p50 ms | Python / Go |")
	fmt.Fprintln(&out, "|---|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(&out, "| %s | %.2f | %.2f | %.2fx |\n", r.name, ms(r.median[0]), ms(r.median[1]), float64(r.median[1])/float64(r.median[0]))
	}
	ratio := float64(rows[0].median[1]) / float64(rows[0].median[0])
	verdict := "met"
	if ratio > 1.5 {
		verdict = "NOT met"
	}
	fmt.Fprintf(&out, "\nTarget: the Python client's Read of %d lines <= 1.5x the Go client's: %.2fx, %s.\n", lines, ratio, verdict)
	fmt.Print(out.String())
	if md != "" {
		return section.Write(md, mdBegin, mdEnd, mdBegin+"\n<!-- Generated by `make bench-python` (bench/bench-python); edits here are overwritten. -->\n\n## The Python client's Read\n\n"+out.String()+mdEnd+"\n")
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
