//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmePath is the README whose shell blocks TestReadme runs; the
// convention is documented in the README itself (section "Make targets").
const readmePath = "../../README.md"

var fenceRE = regexp.MustCompile("^```(sh|bash|shell)(?:\\s+(.*))?$")

// readmeBlock is one fenced shell block of the README.
type readmeBlock struct {
	line   int    // of the opening fence, 1-based
	info   string // the info string after the language
	script string
}

// readmeBlocks returns the README's shell blocks in order.
func readmeBlocks(t *testing.T, text string) []readmeBlock {
	t.Helper()
	var out []readmeBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := readmeBlock{line: i + 1, info: strings.TrimSpace(m[2])}
		j := i + 1
		for ; j < len(lines) && lines[j] != "```"; j++ {
		}
		if j == len(lines) {
			t.Fatalf("%s:%d: unclosed block", readmePath, i+1)
		}
		b.script = strings.Join(lines[i+1:j], "\n") + "\n"
		out = append(out, b)
		i = j
	}
	return out
}

// skipReason is why a block is not run ("" when it is), or an error for an
// info string the convention does not know.
func skipReason(info string) (string, error) {
	if info == "" {
		return "", nil
	}
	reason, ok := strings.CutPrefix(info, "no-test:")
	if !ok || strings.TrimSpace(reason) == "" {
		return "", fmt.Errorf("info string %q: want nothing, or \"no-test: REASON\"", info)
	}
	return strings.TrimSpace(reason), nil
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func TestReadmeBlockMarkers(t *testing.T) {
	for _, tc := range []struct {
		name, info, want string
		bad              bool
	}{
		{"a plain sh block is run", "", "", false},
		{"no-test with a reason is skipped", "no-test: needs the network", "needs the network", false},
		{"no-test without a reason is refused", "no-test:", "", true},
		{"an unknown marker is refused", "skip", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := skipReason(tc.info)
			if (err != nil) != tc.bad || got != tc.want {
				t.Errorf("skipReason(%q) = %q, %v", tc.info, got, err)
			}
		})
	}
}

// TestReadme runs the README's shell blocks, in order, as one script: the
// walkthroughs a reader follows must work as written, from any directory.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and builds grpcurl")
	}
	text, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	// Servers the blocks left in the background are stopped with it.
	script.WriteString("set -e -o pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n")
	ran := 0
	for _, b := range readmeBlocks(t, string(text)) {
		reason, err := skipReason(b.info)
		if err != nil {
			t.Errorf("%s:%d: %v", readmePath, b.line, err)
			continue
		}
		if reason != "" {
			continue
		}
		fmt.Fprintf(&script, "echo '== README.md:%d' >&2\n%s", b.line, b.script)
		ran++
	}
	if ran == 0 {
		t.Fatal("no runnable block in the README")
	}
	// The ports of the examples become free ones, so that a server the
	// machine already runs (another test, a reader's) is not in the way.
	// One pass (a Replacer), so that a free port that happens to contain
	// one of these numbers is not replaced again.
	var ports []string
	for p := 7420; p <= 7429; p++ {
		ports = append(ports, fmt.Sprint(p), freePort(t))
	}
	src := strings.NewReplacer(ports...).Replace(script.String())

	bin := t.TempDir()
	for name, target := range map[string]string{"hashline": hashlineBin, "hashlined": hashlinedBin, "grpcurl": grpcurl(t)} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", src)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+dir, "HOME="+dir)
	// Its own process group, so that a server a failed script left in the
	// background is killed with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A background server still holding the output open must not keep
	// Run waiting once bash has exited.
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("the README's shell blocks failed (%v); the last \"== README.md:N\" names the block:\n%s", err, out.String())
	}
}
