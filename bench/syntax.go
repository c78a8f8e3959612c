package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/syntax/syntaxtest"
)

// The targets of the syntax check (issue 35): what it adds to an Edit's
// p50, as a ratio on a file of 10k lines and in time on one of 100.
const (
	syntaxEditLimit = 1.10             // advisory over off, 10k lines
	syntaxSmallAdd  = time.Millisecond // advisory minus off, 100 lines
)

// syntaxModes are the hashlined servers the syntax step compares, by
// their --syntax: off first, the baseline of the ratios.
var syntaxModes = []string{"off", "advisory", "strict"}

// syntaxRows measures what the syntax check adds to an Edit as a user
// feels it: three hashlined processes over loopback, one per --syntax
// mode, each with its own copy of the files, timed in rounds of one Edit
// of each, the order rotating.
func (e *env) syntaxRows(hashlined string) error {
	t := &table{
		title: "Syntax check: what it adds to an Edit",
		about: "Three `hashlined` processes over loopback, fsync on, one per `--syntax` mode (off; advisory, the default, where the check runs beside the durable write and the reply waits for both; strict, where it runs before the write), each serving its own copy of the files. " +
			"An Edit replaces one line near the middle of a gofmt'd Go file or the same in TypeScript (functions of ten lines), changing a number (`total += i * 7` to `total += i * (7 + 1)` and back), so the file keeps parsing, the common case; a file of 16 KiB or more is parsed around the change. " +
			"Rounds of one Edit of each server, the order rotating, each followed by an untimed pause of " + historySettle.String() + " (hashlined records a change history by default, whose outcome is written within 5 ms). " +
			"The ratios are the medians of the rounds' ratios to the Edit of the server with the check off, with a 95% confidence interval of that median; CPU per Edit is each hashlined's own (user and system, from /proc, over all its rounds, pauses included).",
		cols: []string{"file", "off: p50, CPU per Edit", "advisory: p50, CPU", "advisory / off: median of rounds (95% CI)", "strict: p50, CPU", "strict / off"},
	}
	type file struct {
		label, name string
		content     string
		line        int // the line the Edit replaces
	}
	var files []file
	for _, lang := range []string{"go", "ts"} {
		for _, n := range []int{100, 10_000} {
			content := syntaxtest.Source(lang == "ts", n)
			lines := strings.Split(content, "\n")
			at := 0
			for i := len(lines) / 2; i < len(lines); i++ {
				if syntaxtest.EditedLine(lines[i]) != lines[i] {
					at = i + 1
					break
				}
			}
			label := "Go"
			if lang == "ts" {
				label = "TypeScript"
			}
			files = append(files, file{label: fmt.Sprintf("%s, %s (%d KiB)", label, lineLabel(n), len(content)>>10), name: fmt.Sprintf("s%d.%s", n, lang), content: content, line: at})
		}
	}
	servers := make([]*server, len(syntaxModes))
	for i, mode := range syntaxModes {
		root := filepath.Join(e.tmp, "syntax-"+mode)
		if err := os.MkdirAll(root, 0o755); err != nil {
			return err
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(root, f.name), []byte(f.content), 0o644); err != nil {
				return err
			}
		}
		s, err := startDaemon(hashlined, root, "--syntax", mode)
		if err != nil {
			return err
		}
		defer s.close()
		servers[i] = s
	}
	ctx := context.Background()
	budget, minRounds := 2*e.cfg.budget, max(e.cfg.minRounds, 300)
	for _, f := range files {
		old := strings.Split(f.content, "\n")[f.line-1]
		texts := [2]string{syntaxtest.EditedLine(old), old}
		cs := make([]contender, len(servers))
		for i, s := range servers {
			r, err := s.c.Read(ctx, &hashlinev1.ReadRequest{Path: f.name})
			if err != nil {
				return err
			}
			ref := client.Ref(r.GetLines()[f.line-1])
			k := 0
			cs[i] = contender{name: syntaxModes[i], op: func() error {
				resp, err := s.c.Edit(ctx, &hashlinev1.EditRequest{Path: f.name, Context: new(int32),
					Edits: []*hashlinev1.FileEdit{client.Replace(ref, "", texts[k%2])}})
				if err != nil {
					return err
				}
				if d := resp.GetDiagnostics(); len(d) > 0 {
					return fmt.Errorf("the edit broke %s: %v", f.name, d)
				}
				ref = client.Ref(resp.GetWindows()[0].GetLines()[0])
				k++
				return nil
			}}
		}
		cpu0 := make([]time.Duration, len(servers))
		for i, s := range servers {
			cpu0[i] = procCPU(s.proc.Cmd.Process.Pid)
		}
		wall, _, err := rotate(cs, budget, minRounds, 3000, max(e.cfg.settle, historySettle))
		if err != nil {
			return err
		}
		cpu := make([]time.Duration, len(servers))
		for i, s := range servers {
			// Every round, and the warm-up's three calls, ran one Edit of each.
			cpu[i] = (procCPU(s.proc.Cmd.Process.Pid) - cpu0[i]) / time.Duration(len(wall[i])+3)
		}
		advisory, strict := pairOf(samples{wall[0], wall[1]}, samples{nil, nil}), pairOf(samples{wall[0], wall[2]}, samples{nil, nil})
		row := []string{f.label,
			fmt.Sprintf("%s, %s", ms(advisory.without), ms(cpu[0])),
			fmt.Sprintf("%s, %s", ms(advisory.with), ms(cpu[1])),
			fmt.Sprintf("%.3fx (%.3f to %.3f)", advisory.ratio, advisory.lo, advisory.hi),
			fmt.Sprintf("%s, %s", ms(strict.with), ms(cpu[2])),
			fmt.Sprintf("%.3fx (%.3f to %.3f)", strict.ratio, strict.lo, strict.hi)}
		t.rows = append(t.rows, row)
		log.Printf("syntax: %s: %s", f.label, strings.Join(row[1:], "; "))
		if strings.Contains(f.label, "10k") {
			e.report.atMost(fmt.Sprintf("hashlined Edit p50, %s, with the syntax check (advisory, the default) / without, median of paired calls", f.label), advisory.ratio, syntaxEditLimit)
		} else {
			// At most syntaxSmallAdd more, as a ratio to this run's p50
			// without the check.
			e.report.atMost(fmt.Sprintf("hashlined Edit p50, %s, with the syntax check (advisory) / without, median of paired calls: at most %s more than the p50 without (%s)", f.label, ms(syntaxSmallAdd), ms(advisory.without)),
				advisory.ratio, 1+float64(syntaxSmallAdd)/float64(advisory.without))
		}
	}
	e.report.add(t)
	return nil
}

// procCPU is the CPU time process pid has used, user and system, all its
// threads; 0 where /proc cannot tell.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's name, which is in parentheses and
	// may hold spaces: state is the first, utime the 12th, stime the 13th.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	// The kernel counts in clock ticks of 1/100 s (USER_HZ) on Linux.
	return time.Duration(u+k) * 10 * time.Millisecond
}
