//go:build linux

// Command bench-grep compares our search with ripgrep on one corpus, in one
// run: for each query it runs rg, the in-process engine (internal/grep) and
// Grep through a real hashlined over loopback gRPC, alternating between the
// three for several rounds, then prints the medians and their ratio to rg.
// Every run's match count must equal rg's, or it fails.
//
// It reads CPU times from /proc, so it is built on Linux only.
//
// It is run by bench/bench-grep.sh (make bench-grep), which installs rg,
// copies the corpus and builds the binaries.
//
// Before measuring, the corpus (a copy: it is changed) loses the files that
// the two tools would treat differently by design, so that both search the
// same files: symbolic links (rg does not follow them), files that are not
// UTF-8 (we skip them, rg searches them) and files with a NUL byte that is
// not in their first 8 KiB (rg's binary detection looks further, in larger
// blocks). Binary files with a NUL early on stay: both skip them. The file
// sets are then compared: rg --files, less the binary and empty files, must
// be exactly the files our engine finds a line in.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	mdsection "github.com/hashline/hashline/bench/section"
	"github.com/hashline/hashline/bench/served"

	"github.com/hashline/hashline/bench/machine"
	"github.com/hashline/hashline/bench/stats"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
)

// query is one benchmark query, as rg arguments and as our options.
type query struct {
	name    string
	literal bool // a literal query: the tighter target applies
	rg      []string
	opts    grep.Options
}

// target is the most the ratio to rg may be (docs/DESIGN.md section 11).
func (q query) target() float64 {
	if q.literal {
		return 1.2
	}
	return 1.5
}

var queries = []query{
	{"func main", true, []string{"func main"}, grep.Options{Pattern: "func main"}},
	{"func main --glob '*.go'", true, []string{"--glob", "*.go", "func main"}, grep.Options{Pattern: "func main", Globs: []string{"*.go"}}},
	{"-i func main", true, []string{"-i", "func main"}, grep.Options{Pattern: "func main", CaseInsensitive: true}},
	{`(Context|Deadline)\(`, false, []string{`(Context|Deadline)\(`}, grep.Options{Pattern: `(Context|Deadline)\(`}},
	{`\w+_test\b`, false, []string{`\w+_test\b`}, grep.Options{Pattern: `\w+_test\b`}},
	{"-C2 func main", true, []string{"-C2", "func main"}, grep.Options{Pattern: "func main", Before: 2, After: 2}},
	{"no match", true, []string{"hashline_no_such_token_q9"}, grep.Options{Pattern: "hashline_no_such_token_q9"}},
}

// rgFlags make rg apply the rules our engine applies: .gitignore files
// whether or not the tree is a git repository, nothing from outside it.
var rgFlags = []string{"--no-config", "--no-require-git", "--no-ignore-global", "--no-ignore-parent",
	"--color", "never", "--no-heading", "-n", "--stats"}

var verbose bool

const (
	mdBegin = "<!-- bench:grep -->"
	mdEnd   = "<!-- /bench:grep -->"
)

func main() {
	corpus := flag.String("corpus", "", "directory to search (a copy: files are removed from it, see the package doc)")
	rgBin := flag.String("rg", "rg", "ripgrep binary")
	hashlined := flag.String("hashlined", "", "hashlined binary")
	rounds := flag.Int("rounds", 7, "measured rounds (after one warm-up round)")
	md := flag.String("md", "", "rewrite the grep section of this markdown file with the results")
	command := flag.String("command", "make bench-grep", "the command to show in the markdown section")
	only := flag.String("only", "", "run only the queries whose name contains this")
	flag.BoolVar(&verbose, "v", false, "print every run's time")
	flag.Parse()
	if *corpus == "" || *hashlined == "" {
		fail("usage: bench-grep -corpus DIR -hashlined BIN [-rg rg] [-rounds N] [-md FILE]")
	}
	if err := run(*corpus, *rgBin, *hashlined, *rounds, *md, *command, *only); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-grep: FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func run(corpus, rgBin, hashlinedBin string, rounds int, md, command, only string) error {
	ctx := context.Background()
	loadStart := machine.LoadAvg()
	pruned, binaries, err := prune(corpus)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(corpus)
	if err != nil {
		return err
	}
	defer root.Close()
	files, bytesTotal, err := checkFileSets(ctx, rgBin, corpus, grep.RootFS(root), binaries)
	if err != nil {
		return err
	}
	fmt.Printf("corpus %s: %d text files searched, %.1f MB (%d binary files skipped by both; %d files removed where the tools differ by design)\n",
		corpus, files, float64(bytesTotal)/1e6, len(binaries), pruned)

	srv, err := startServer(hashlinedBin, corpus)
	if err != nil {
		return err
	}
	defer srv.Stop()
	rpc := hashlinev1.NewFileServiceClient(srv.Conn)

	qs := slices.DeleteFunc(slices.Clone(queries), func(q query) bool { return !strings.Contains(q.name, only) })
	// Each runner returns what it found and the CPU time it used: rg's
	// process, this process for the engine, the server's and this
	// process's for gRPC.
	runners := []struct {
		name string
		run  func(query) (count, time.Duration, error)
	}{
		{"rg", func(q query) (count, time.Duration, error) { return runRG(rgBin, corpus, q) }},
		{"in-process", func(q query) (count, time.Duration, error) {
			cpu := selfCPU()
			c, err := runEngine(ctx, grep.RootFS(root), q)
			return c, selfCPU() - cpu, err
		}},
		{"gRPC", func(q query) (count, time.Duration, error) {
			cpu, scpu := selfCPU(), srv.cpu()
			c, err := runGRPC(ctx, rpc, q)
			return c, selfCPU() - cpu + srv.cpu() - scpu, err
		}},
	}
	times := make([][][]time.Duration, len(qs))
	cpus := make([][][]time.Duration, len(qs))
	counts := make([]count, len(qs))
	for i := range qs {
		times[i] = make([][]time.Duration, len(runners))
		cpus[i] = make([][]time.Duration, len(runners))
	}
	for round := 0; round <= rounds; round++ {
		for i, q := range qs {
			var got [3]count
			// Rotate the order so that no runner always goes first.
			for k := range runners {
				r := (k + round + i) % len(runners)
				start := time.Now()
				c, cpu, err := runners[r].run(q)
				d := time.Since(start)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", q.name, runners[r].name, err)
				}
				got[r] = c
				if verbose {
					fmt.Printf("round %d %-28s %-10s %4.0f ms wall %4.0f ms CPU\n", round, q.name, runners[r].name, float64(d)/1e6, float64(cpu)/1e6)
				}
				if round > 0 {
					times[i][r] = append(times[i][r], d)
					cpus[i][r] = append(cpus[i][r], cpu)
				}
			}
			for r := 1; r < len(runners); r++ {
				if got[r] != got[0] {
					return fmt.Errorf("%s: %s found %d matching lines in %d files, rg %d in %d",
						q.name, runners[r].name, got[r].lines, got[r].files, got[0].lines, got[0].files)
				}
			}
			counts[i] = got[0]
		}
		if round == 0 {
			fmt.Printf("warm-up round done; %d measured rounds\n", rounds)
		}
	}
	res := make([]result, len(qs))
	for i, q := range qs {
		res[i] = result{q: q, count: counts[i]}
		for r := range runners {
			res[i].median[r] = stats.Median(times[i][r])
			res[i].cpu[r] = stats.Median(cpus[i][r])
		}
	}
	table := render(res)
	fmt.Print(table)
	target := verdict(res)
	fmt.Println(target)
	if md != "" {
		ri := runInfo{files: files, bytes: bytesTotal, binaries: len(binaries), pruned: pruned, rounds: rounds,
			rgBin: rgBin, command: command, loadStart: loadStart, loadEnd: machine.LoadAvg(), rev: machine.Commit(md)}
		if err := writeSection(md, section(table, target, ri)); err != nil {
			return err
		}
		fmt.Printf("wrote the grep section of %s\n", md)
	}
	return nil
}

// count is what a search found: matching lines and the files with one.
type count struct{ lines, files int }

// prune removes the files the two tools treat differently by design (see
// the package doc) and returns how many it removed and the binary files
// both skip (by path relative to corpus).
func prune(corpus string) (int, map[string]bool, error) {
	// The list of removed files lives next to the corpus, so that a reused
	// copy still reports them.
	list := filepath.Clean(corpus) + ".pruned"
	old, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, nil, err
	}
	removed := len(strings.Fields(string(old)))
	lf, err := os.OpenFile(list, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, nil, err
	}
	defer lf.Close()
	binaries := map[string]bool{}
	err = filepath.WalkDir(corpus, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(corpus, p)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			removed++
			fmt.Fprintln(lf, rel)
			return os.Remove(p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		nul := bytes.IndexByte(data, 0)
		switch {
		case nul >= 0 && nul < 8<<10:
			binaries[rel] = true
		case nul >= 0 || !utf8.Valid(data):
			removed++
			fmt.Fprintln(lf, rel)
			return os.Remove(p)
		}
		return nil
	})
	return removed, binaries, err
}

// checkFileSets makes sure rg and we search the same files: the files rg
// lists, less binary and empty ones, must be the files in which our engine
// finds a line. It returns their number and size.
func checkFileSets(ctx context.Context, rgBin, corpus string, fsys fs.FS, binaries map[string]bool) (int, int64, error) {
	cmd := exec.Command(rgBin, append(slices.Clone(rgFlags[:4]), "--files")...)
	cmd.Dir = corpus
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("rg --files: %w", err)
	}
	theirs := map[string]bool{}
	for _, name := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name = strings.TrimPrefix(name, "./")
		if binaries[name] {
			continue
		}
		if fi, err := os.Stat(filepath.Join(corpus, name)); err == nil && fi.Size() > 0 {
			theirs[name] = true
		}
	}
	ours := map[string]bool{}
	sum, err := grep.Search(ctx, fsys, grep.Options{Pattern: "^", MaxMatches: math.MaxInt32}, func(f grep.File) error {
		ours[f.Path] = true
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	var onlyRG, onlyUs []string
	for name := range theirs {
		if !ours[name] {
			onlyRG = append(onlyRG, name)
		}
	}
	for name := range ours {
		if !theirs[name] {
			onlyUs = append(onlyUs, name)
		}
	}
	if len(onlyRG)+len(onlyUs) > 0 {
		slices.Sort(onlyRG)
		slices.Sort(onlyUs)
		return 0, 0, fmt.Errorf("file sets differ: %d only searched by rg %q, %d only by us %q",
			len(onlyRG), onlyRG[:min(10, len(onlyRG))], len(onlyUs), onlyUs[:min(10, len(onlyUs))])
	}
	return len(ours), sum.BytesScanned, nil
}

var statsLine = regexp.MustCompile(`(?m)^(\d+) (matched lines|files contained matches)$`)

// runRG runs rg with its output (the matching lines, numbered, as a person
// would read them) going through a pipe to this process, and reads the
// counts from its --stats.
func runRG(rgBin, corpus string, q query) (count, time.Duration, error) {
	// Flags, then the pattern after "--", then the path.
	args := append(slices.Clone(rgFlags), q.rg[:len(q.rg)-1]...)
	args = append(args, "--", q.rg[len(q.rg)-1], ".")
	cmd := exec.Command(rgBin, args...)
	cmd.Dir = corpus
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return count{}, 0, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return count{}, 0, err
	}
	tail := &tailWriter{max: 4 << 10}
	if _, err := io.Copy(tail, stdout); err != nil {
		return count{}, 0, err
	}
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		// Exit status 1 is "no match".
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			return count{}, 0, fmt.Errorf("rg: %v: %s", err, stderr.String())
		}
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var c count
	for _, m := range statsLine.FindAllStringSubmatch(string(tail.buf), -1) {
		n, _ := strconv.Atoi(m[1])
		if m[2] == "matched lines" {
			c.lines = n
		} else {
			c.files = n
		}
	}
	return c, cpu, nil
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	buf []byte
	max int
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// runEngine runs the engine in this process and prints what it finds as
// tagged lines, "path:LINE:HASH|content" (context lines with "-"), to a
// buffer that is thrown away, as rg's output is.
func runEngine(ctx context.Context, fsys fs.FS, q query) (count, error) {
	opts := q.opts
	opts.MaxMatches = math.MaxInt32
	h := hashline.Hasher{}
	w := bufio.NewWriterSize(io.Discard, 64<<10)
	var c count
	_, err := grep.Search(ctx, fsys, opts, func(f grep.File) error {
		c.files++
		for _, l := range f.Lines {
			sep := byte('-')
			if l.Match {
				sep = ':'
				c.lines++
			}
			w.WriteString(f.Path)
			w.WriteByte(sep)
			w.WriteString(strconv.Itoa(l.Number))
			w.WriteByte(sep)
			w.WriteString(h.Sum(l.Content))
			w.WriteByte('|')
			w.WriteString(l.Content)
			w.WriteByte('\n')
		}
		return nil
	})
	w.Flush()
	return c, err
}

// runGRPC runs Grep through the server and counts what the stream carries.
func runGRPC(ctx context.Context, rpc hashlinev1.FileServiceClient, q query) (count, error) {
	o := q.opts
	stream, err := rpc.Grep(ctx, &hashlinev1.GrepRequest{
		Pattern: o.Pattern, Glob: o.Globs, CaseInsensitive: o.CaseInsensitive,
		Before: int32(o.Before), After: int32(o.After), MaxMatches: math.MaxInt32,
	})
	if err != nil {
		return count{}, err
	}
	var c count
	for {
		msg, err := stream.Recv()
		if err != nil {
			return c, fmt.Errorf("stream ended without a summary: %w", err)
		}
		if s := msg.GetSummary(); s != nil {
			if int(s.GetMatches()) != c.lines || int(s.GetFilesMatched()) != c.files {
				return c, fmt.Errorf("summary says %d lines in %d files, the stream carried %d in %d", s.GetMatches(), s.GetFilesMatched(), c.lines, c.files)
			}
			return c, nil
		}
		c.files++
		for _, l := range msg.GetFile().GetLines() {
			if l.GetMatch() {
				c.lines++
			}
		}
	}
}

// server is a running hashlined and a connection to it.
type server struct{ *served.Server }

func startServer(bin, root string) (*server, error) {
	s, err := served.Start(bin, root)
	if err != nil {
		return nil, err
	}
	return &server{s}, nil
}

// cpu returns the CPU time the server has used so far (Linux only; 0
// elsewhere), in clock ticks of 10 ms.
func (s *server) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 12th and 13th.
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// selfCPU returns the CPU time this process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type result struct {
	q      query
	count  count
	median [3]time.Duration
	cpu    [3]time.Duration
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/1e6) }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// render returns the results as a markdown table.
func render(res []result) string {
	var b strings.Builder
	b.WriteString("| query | matches (files) | rg ms | in-process ms | gRPC ms | in-process / rg | gRPC / rg | target | CPU ms: rg / in-process / gRPC |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range res {
		// A "|" in a table cell, even in code, must be escaped.
		fmt.Fprintf(&b, "| `%s` | %d (%d) | %s | %s | %s | %.2f | %.2f | <= %.1f | %s / %s / %s |\n", strings.ReplaceAll(r.q.name, "|", `\|`), r.count.lines, r.count.files,
			ms(r.median[0]), ms(r.median[1]), ms(r.median[2]), ratio(r.median[1], r.median[0]), ratio(r.median[2], r.median[0]), r.q.target(),
			ms(r.cpu[0]), ms(r.cpu[1]), ms(r.cpu[2]))
	}
	return b.String()
}

// verdict says which queries miss the targets of docs/DESIGN.md section 11:
// at most 1.5x rg on every query, 1.2x on literal ones.
func verdict(res []result) string {
	var miss []string
	for _, r := range res {
		limit := r.q.target()
		for k, name := range []string{"", "in-process", "gRPC"} {
			if k > 0 && ratio(r.median[k], r.median[0]) > limit {
				miss = append(miss, fmt.Sprintf("`%s` %s %.2f > %.1f", r.q.name, name, ratio(r.median[k], r.median[0]), limit))
			}
		}
	}
	if len(miss) == 0 {
		return "Target (<= 1.5x rg on every query, <= 1.2x on literal ones): met on every query, in-process and over gRPC."
	}
	return "Target (<= 1.5x rg on every query, <= 1.2x on literal ones): missed on " + strings.Join(miss, "; ") + "."
}

// runInfo is what the markdown section says about the run.
type runInfo struct {
	files                   int
	bytes                   int64
	binaries, pruned        int
	rounds                  int
	rgBin, command          string
	loadStart, loadEnd, rev string
}

func section(table, target string, ri runInfo) string {
	rgv, _ := exec.Command(ri.rgBin, "--version").Output()
	rgVersion, _, _ := strings.Cut(string(rgv), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n<!-- Generated by bench/bench-grep.sh (bench/bench-grep); edits here are overwritten. -->\n\n", mdBegin)
	b.WriteString("## Grep against ripgrep\n\n")
	fmt.Fprintf(&b, "One run of `%s`: for each query, rg, our engine in-process and Grep through a real `hashlined` over loopback gRPC, alternating (the order rotates every round), %d rounds after a warm-up round; every figure is a median of the run. Match counts (matching lines and files) equal rg's in every run, or the run fails.\n\n", ri.command, ri.rounds)
	b.WriteString("Machine:\n\n")
	fmt.Fprintf(&b, "- %s, %s\n", machine.Summary(), rgVersion)
	if ri.rev != "" {
		fmt.Fprintf(&b, "- commit %s, %s\n", ri.rev, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	}
	fmt.Fprintf(&b, "- load average at the start: %s; at the end: %s (2 cores; they count this benchmark's own processes too; read the ratios, not the absolute times)\n\n", ri.loadStart, ri.loadEnd)
	fmt.Fprintf(&b, "Corpus: a copy of `$(go env GOROOT)/src`, %d text files, %.0f MB searched; %d binary files are skipped by both; %d files were removed from the copy because the tools treat them differently by design (symlinks, which rg does not follow; non-UTF-8 files, which we skip; NUL bytes past the first 8 KiB, which rg's binary detection finds and ours does not). rg's file list, less binary and empty files, is checked to be exactly the files we search.\n\n",
		ri.files, float64(ri.bytes)/1e6, ri.binaries, ri.pruned)
	b.WriteString("- rg: `rg --no-config --no-require-git --no-ignore-global --no-ignore-parent -n --stats`, printing numbered lines to a pipe read by the driver (`--no-require-git` so that it honours the .gitignore files as we do, outside a git repository).\n")
	b.WriteString("- in-process: `grep.Search` (unlimited matches), formatting every line as `path:LINE:HASH|content` into a discarded buffer.\n")
	b.WriteString("- gRPC: `Grep` with unlimited `maxMatches` through the real server binary, with versions, hashes, submatches and the agent's view recorded; the client counts the lines it receives.\n")
	b.WriteString("- CPU: median CPU time (user + system) of one run: rg's process; the driver's process for in-process; the server's (in 10 ms ticks) plus the client's for gRPC.\n\n")
	b.WriteString(table)
	fmt.Fprintf(&b, "\n%s\n%s\n", target, mdEnd)
	return b.String()
}

// writeSection replaces this program's section of file (or appends it, or
// creates the file), leaving the rest as it is.
func writeSection(file, sec string) error { return mdsection.Write(file, mdBegin, mdEnd, sec) }
