package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ownInitBudget is the most this module's own packages may allocate while
// they are initialised, together: about twice what their lookup tables
// take. Every command, --version included, pays for every linked
// package's init before main runs, and harnesses run hashline once per
// tool call; a schema, registry or large regexp built in a package-level
// var belongs behind a sync.OnceValue, built on first use.
const ownInitBudget = 32 << 10

// initLine is one line of GODEBUG=inittrace=1:
// "init PKG @T ms, C ms clock, B bytes, A allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

type pkgInit struct {
	pkg          string
	bytes, count int
}

// initTrace runs bin with args under GODEBUG=inittrace=1 and returns the
// packages it initialised, in order.
func initTrace(t *testing.T, bin string, args ...string) []pkgInit {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	var out []pkgInit
	for line := range strings.Lines(stderr.String()) {
		m := initLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		b, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		out = append(out, pkgInit{pkg: m[1], bytes: b, count: n})
	}
	return out
}

// TestOwnPackagesDoLittleAtInit: the packages of this module that
// hashline links (the engine and the MCP bridge included, since Go
// initialises every linked package whatever the command) do no more at
// init than fill small tables. The generated protobuf code is left out:
// its init registers the API's descriptors, which every call needs.
func TestOwnPackagesDoLittleAtInit(t *testing.T) {
	trace := initTrace(t, hashlineBin, "--version")
	own := func(p string) bool {
		return p == "main" || (strings.HasPrefix(p, "github.com/hashline/hashline/") && !strings.HasPrefix(p, "github.com/hashline/hashline/gen/"))
	}
	var mine []pkgInit
	total, sawMain := 0, false
	for _, p := range trace {
		if own(p.pkg) {
			mine = append(mine, p)
			total += p.bytes
			sawMain = sawMain || p.pkg == "main"
		}
	}
	if !sawMain {
		t.Fatalf("no init line for package main in the trace of %d packages: is GODEBUG=inittrace=1 still the format parsed here?", len(trace))
	}
	slices.SortFunc(mine, func(a, b pkgInit) int { return b.bytes - a.bytes })
	var report strings.Builder
	for _, p := range mine {
		report.WriteString("  " + p.pkg + ": " + strconv.Itoa(p.bytes) + " bytes, " + strconv.Itoa(p.count) + " allocs\n")
	}
	t.Logf("%d packages initialised; this module's allocate %d bytes:\n%s", len(trace), total, report.String())
	if total > ownInitBudget {
		t.Errorf("this module's packages allocate %d bytes at init, over %d: move what the largest build at init behind a sync.OnceValue\n%s", total, ownInitBudget, report.String())
	}
}
