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
		fmt.Fprintf(&script, "echo '== README.md:%d' >&2\n%s", b.line, instrument(b))
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
	links := map[string]string{"hashline": hashlineBin, "hashlined": hashlinedBin, "grpcurl": grpcurl(t)}
	// The formatter example runs gofmt, which comes with Go: the one in
	// the GOROOT of the go command running the test, whatever the PATH.
	if goroot, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		links["gofmt"] = filepath.Join(strings.TrimSpace(string(goroot)), "bin", "gofmt")
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	// TMPDIR: a server running as root runs its formatters as nobody, who
	// must be able to enter it (a t.TempDir is private to the test's user).
	dir, err := os.MkdirTemp("", "readme-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
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
	checkSamples(t, out.String())
}

// The sample output of a command in a runnable block is the "# " lines
// right after it ("#" alone is an empty line; "(stderr) " may start the
// first). instrument brackets each such command's output with markers,
// and checkSamples compares it with the sample: a hashline command's
// output line for line; another's (grpcurl's JSON, summarised in the
// README) as an ordered subset (subset), each sample line an output line
// with surrounding spaces trimmed, lines holding "…" or "..." skipped.
const (
	sampleBegin = "@@sample README.md:"
	sampleEnd   = "@@end"
)

// instrument returns b's script with the markers around every command
// that a sample follows.
func instrument(b readmeBlock) string {
	lines := strings.Split(strings.TrimSuffix(b.script, "\n"), "\n")
	before := map[int]string{} // line index -> marker to print before it
	for i := 1; i < len(lines); i++ {
		if !isSample(lines[i]) || isSample(lines[i-1]) || strings.TrimSpace(lines[i-1]) == "" {
			continue
		}
		start := commandStart(lines, i-1)
		before[start] = fmt.Sprintf("echo '%s%d'", sampleBegin, b.line+1+i)
		before[i] = "echo '" + sampleEnd + "'"
	}
	var out strings.Builder
	for i, l := range lines {
		if m, ok := before[i]; ok {
			out.WriteString(m + "\n")
		}
		out.WriteString(l + "\n")
	}
	return out.String()
}

func isSample(line string) bool { return line == "#" || strings.HasPrefix(line, "# ") }

// commandStart is the first line of the command that ends at line end:
// the line holding its heredoc's "<<" when end closes one, and the first
// of the lines joined to it by a trailing backslash.
func commandStart(lines []string, end int) int {
	i := end
	if strings.TrimSpace(lines[i]) == "EOF" {
		for i > 0 && !strings.Contains(lines[i], "<<") {
			i--
		}
	}
	for i > 0 && strings.HasSuffix(strings.TrimRight(lines[i-1], " "), "\\") {
		i--
	}
	return i
}

// checkSamples compares each bracketed output of the script's output with
// its sample in the README.
func checkSamples(t *testing.T, out string) {
	t.Helper()
	text, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Split(string(text), "\n")
	checked := 0
	rest := out
	for {
		_, after, ok := strings.Cut(rest, sampleBegin)
		if !ok {
			break
		}
		head, body, _ := strings.Cut(after, "\n")
		var line int
		fmt.Sscan(head, &line)
		got, tail, ok := strings.Cut(body, sampleEnd+"\n")
		if !ok {
			t.Fatalf("README.md:%d: no end marker in the output", line)
		}
		rest = tail
		var want []string
		for i := line - 1; i < len(readme) && isSample(readme[i]); i++ {
			w := strings.TrimPrefix(strings.TrimPrefix(readme[i], "#"), " ")
			want = append(want, strings.TrimPrefix(w, "(stderr) "))
		}
		cmd := readme[commandStart(readme, line-2)]
		gotLines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if strings.HasPrefix(cmd, "hashline ") {
			if strings.Join(gotLines, "\n") != strings.Join(want, "\n") {
				t.Errorf("README.md:%d: the sample of %q differs from what it prints:\n%s", line, cmd, lineDiff(strings.Join(want, "\n"), strings.Join(gotLines, "\n")))
			}
		} else if missing := subset(want, gotLines); missing != "" {
			t.Errorf("README.md:%d: %q does not print the sample line %q (in order); it printed:\n%s", line, cmd, missing, got)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no sample output was checked")
	}
}

// subset returns the first line of want (trimmed, abbreviations skipped)
// not found in got after the previous one, or "". Sample lines that
// follow each other with no abbreviation between must be output lines
// that follow each other too: a sample leaves out only what it marks.
func subset(want, got []string) string {
	j, adjacent := 0, false
	for _, w := range want {
		w = strings.TrimSpace(w)
		if w == "" || strings.Contains(w, "…") || strings.Contains(w, "...") {
			adjacent = false
			continue
		}
		if adjacent {
			if j >= len(got) || strings.TrimSpace(got[j]) != w {
				return w
			}
			j++
			continue
		}
		for j < len(got) && strings.TrimSpace(got[j]) != w {
			j++
		}
		if j == len(got) {
			return w
		}
		j++
		adjacent = true
	}
	return ""
}

func TestReadmeSampleSubset(t *testing.T) {
	got := []string{"ERROR:", "  Message: stale", "    1:c9|package main", "    2:05|", "  Details:", "  1) {"}
	for _, tc := range []struct {
		name    string
		want    []string
		missing string
	}{
		{"every line, in order", []string{"ERROR:", "Message: stale", "1:c9|package main", "2:05|"}, ""},
		{"a marked gap", []string{"ERROR:", "…", "2:05|", "Details:"}, ""},
		{"a line left out without a mark", []string{"Message: stale", "2:05|"}, "2:05|"},
		{"a line not printed", []string{"ERROR:", "Code: Aborted"}, "Code: Aborted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := subset(tc.want, got); got != tc.missing {
				t.Errorf("subset = %q, want %q", got, tc.missing)
			}
		})
	}
}

// TestReadmeMakeTargets: the README's "Make targets" list names every
// target the Makefile documents (what make help prints).
func TestReadmeMakeTargets(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "## Make targets\n")
	if !ok {
		t.Fatal("the README has no \"## Make targets\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	target := regexp.MustCompile(`(?m)^([a-z][a-zA-Z_-]+):.*## `)
	n := 0
	for _, m := range target.FindAllStringSubmatch(string(mk), -1) {
		n++
		if !strings.Contains(section, "`"+m[1]+"`") {
			t.Errorf("the README's Make targets do not list `%s`", m[1])
		}
	}
	if n == 0 {
		t.Fatal("no documented target in the Makefile")
	}
}
