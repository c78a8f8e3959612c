package main

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hashline/hashline/bench/stats"
)

// startupLimit is the wall time a harness that runs `hashline` once per
// tool call may pay for one small read through a running server, process
// start included (docs/DESIGN.md section 11).
const startupLimit = 10e6 // ns

// attachLimit is what finding and attaching to the root's running engine
// (hashline --local, hashline mcp) may add to a command's start-up.
const attachLimit = 2e6 // ns

// startup times whole processes: `hashline read` of a small file through
// the running hashlined, `hashline --version` (start-up alone), and, as
// the floors of starting any process, `true`, `cat` of the same file and,
// where it is installed, ripgrep searching it.
func (e *env) startup(hashlineBin string) error {
	path := filepath.Join(e.roots["durable"], "start.txt")
	if err := os.WriteFile(path, []byte("hello\nworld\n"), 0o644); err != nil {
		return err
	}
	run := func(argv ...string) func() error {
		return func() error {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = e.roots["durable"]
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %v: %s", argv, err, out)
			}
			return nil
		}
	}
	cs := []contender{
		{name: "hashline read", op: run(hashlineBin, "read", "start.txt", "--server", e.durable.proc.Addr)},
		// The same hashlined, found as the root's engine through its
		// socket, as hashline mcp and --local find it.
		{name: "hashline read --local", op: run(hashlineBin, "read", "start.txt", "--local")},
		{name: "hashline --version", op: run(hashlineBin, "--version")},
		{name: "true", op: run("true")},
		{name: "cat", op: run("cat", "start.txt")},
	}
	cols := []string{"hashline read (small file, running server)", "hashline read --local (the same server, attached)", "hashline --version", "true", "cat"}
	if rg, err := exec.LookPath("rg"); err == nil {
		cs = append(cs, contender{name: "rg", op: run(rg, "-n", "hello", "start.txt")})
		cols = append(cols, "rg -n hello")
	}
	s, err := interleave(cs, e.cfg.budget, e.cfg.minRounds, 2000)
	if err != nil {
		return err
	}
	row := make([]string, len(cs))
	for i := range cs {
		row[i] = ms(stats.Median(s[i]))
	}
	read := stats.Median(s[0])
	e.report.atMost("`hashline read` of a small file through a running hashlined, process start included: wall time / 10 ms", float64(read)/startupLimit, 1)
	attach := stats.Median(s[1]) - read
	e.report.atMost("attaching to the root's running engine (`hashline read --local` less `hashline read --server`): ms / 2 ms", float64(attach)/attachLimit, 1)
	log.Printf("start-up: hashline read %s, --local %s, --version %s (%d rounds)", ms(read), ms(stats.Median(s[1])), ms(stats.Median(s[2])), len(s[0]))
	e.report.add(&table{
		title: "Process start-up",
		about: "Whole processes, started and waited for one after another, alternated: what a harness that runs `hashline` once per tool call pays per call. `true`, `cat` of the same file and (where installed) ripgrep are the cost of starting any process on this machine.",
		cols:  cols,
		rows:  [][]string{row},
	})
	return nil
}
