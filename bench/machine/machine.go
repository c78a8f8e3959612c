// Package machine describes the machine and the checkout a benchmark runs
// on, for the reports that `make bench` writes.
package machine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Summary names the CPU, the core count, GOMAXPROCS and the Go toolchain:
// "AMD EPYC, 2 cores (GOMAXPROCS 2), go1.26.8 linux/amd64".
func Summary() string {
	return fmt.Sprintf("%s, %d cores (GOMAXPROCS %d), %s %s/%s", CPU(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// CPU is the first "model name" of /proc/cpuinfo, or "unknown CPU".
func CPU() string { return fromFile("/proc/cpuinfo", cpuModel) }

func cpuModel(cpuinfo string) string {
	for line := range strings.SplitSeq(cpuinfo, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// LoadAvg is the three load averages of /proc/loadavg ("0.52 1.10 1.31"),
// or "unknown".
func LoadAvg() string { return fromFile("/proc/loadavg", loadAvg) }

// fromFile parses the file at path, or parses "" if it cannot be read:
// every parser says "unknown" of what it cannot find.
func fromFile(path string, parse func(string) string) string {
	data, _ := os.ReadFile(path)
	return parse(string(data))
}

func loadAvg(s string) string {
	f := strings.Fields(s)
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Commit is the short hash of HEAD, with " (with uncommitted changes)" when
// tracked files anywhere in the checkout, other than the excluded ones (the
// report being written, as a path from the working directory), differ from
// it, or "" outside a git checkout.
func Commit(exclude ...string) string {
	rev, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return ""
	}
	// The benchmarks run in bench/; the commit covers the whole checkout.
	args := []string{"status", "--porcelain", "--untracked-files=no", "--", ":(top)"}
	for _, e := range exclude {
		// git refuses a path outside the checkout (a report in /tmp),
		// which needs no excluding anyway.
		abs, err := filepath.Abs(e)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(strings.TrimSpace(string(top)), abs); err == nil && filepath.IsLocal(rel) {
			args = append(args, ":(top,exclude)"+filepath.ToSlash(rel))
		}
	}
	out, err := exec.Command("git", args...).Output()
	switch {
	case err != nil:
		return strings.TrimSpace(string(rev)) + " (uncommitted changes unknown)"
	case len(out) > 0:
		return strings.TrimSpace(string(rev)) + " (with uncommitted changes)"
	}
	return strings.TrimSpace(string(rev))
}
