package checkers

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "gofmt", want: []string{"gofmt"}},
		{in: "  ruff  check\t--stdin-filename {} -  ", want: []string{"ruff", "check", "--stdin-filename", "{}", "-"}},
		{in: `sh -c 'echo "$1" | tr a b' sh {}`, want: []string{"sh", "-c", `echo "$1" | tr a b`, "sh", "{}"}},
		{in: `a "b \"c\" \\ \d" e`, want: []string{"a", `b "c" \ \d`, "e"}},
		{in: `a\ b c\'d`, want: []string{"a b", "c'd"}},
		{in: `x '' ""`, want: []string{"x", "", ""}},
		{in: `--x='a b'`, want: []string{"--x=a b"}},
		{in: "$HOME * > out", want: []string{"$HOME", "*", ">", "out"}},
		{in: "a 'b", bad: true},
		{in: `a "b`, bad: true},
		{in: `a \`, bad: true},
	}
	for _, tt := range tests {
		got, err := Split(tt.in)
		if (err != nil) != tt.bad || !tt.bad && !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

func TestParseAndMatch(t *testing.T) {
	t.Parallel()
	r, err := Parse("src/**/*.{js,ts}=prettier --stdin-filepath {}")
	if err != nil {
		t.Fatal(err)
	}
	if r.Glob != "src/**/*.{js,ts}" || !slices.Equal(r.Args, []string{"prettier", "--stdin-filepath", "{}"}) || r.Name() != "prettier" {
		t.Errorf("%+v, name %q", r, r.Name())
	}
	for rel, want := range map[string]bool{"src/a.js": true, "src/x/y/b.ts": true, "a.js": false, "src/a.go": false} {
		if r.Match(rel) != want {
			t.Errorf("Match(%q) = %v", rel, !want)
		}
	}
	g, _ := Parse("*.go=go vet {}")
	if !g.Match("a/b/c.go") || g.Name() != "go vet" {
		t.Errorf("a name glob: %v, name %q", g.Match("a/b/c.go"), g.Name())
	}
	for _, bad := range []string{"*.go", "=gofmt", "*.go=", "*.go= ", "[=gofmt", "*.go=sh -c 'x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
	nf, _ := Parse("*.go=hashline-no-such-program")
	if err := nf.Resolve(); err == nil {
		t.Error("Resolve found a program that does not exist")
	}
}

func TestParseFindings(t *testing.T) {
	t.Parallel()
	out := strings.Join([]string{
		"a/b.py:3:5: F401 `os` imported but unused",
		"b.py:4: error: bad type  ",
		"<standard input>:7:1: expected declaration",
		"-:9:2: from stdin",
		"./a/b.py:10:1: dot slash",
		"other.py:1:1: another file",
		"Found 2 errors.",
		"a/b.py:0:1: line zero",
	}, "\n")
	got := parseFindings(out, "a/b.py")
	want := []Finding{{3, 5, "F401 `os` imported but unused"}, {4, 0, "error: bad type"}, {7, 1, "expected declaration"}, {9, 2, "from stdin"}, {10, 1, "dot slash"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestIntroduced(t *testing.T) {
	t.Parallel()
	before := []byte("a\nb\nc\nd\n")
	after := []byte("a\nX\nY\nc\nd\n") // b became X, Y
	bf := []Finding{{1, 1, "m1"}, {2, 1, "on b"}, {4, 1, "on d"}, {0, 0, "no line"}}
	af := []Finding{{1, 1, "m1"}, {3, 1, "on b"}, {5, 1, "on d"}, {0, 0, "no line"}, {4, 1, "new on c"}, {1, 1, "m1"}}
	got := introduced(before, after, bf, af)
	want := []Finding{{4, 1, "new on c"}, {1, 1, "m1"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// sharedDir is a directory the commands can write in whichever user
// they run as (nobody, when the tests run as root: the test's own
// temporary directories are private to its user).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "checkers-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func rule(t *testing.T, spec string) Rule {
	t.Helper()
	r, err := Parse(spec)
	if err == nil {
		err = r.Resolve()
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunKillsTheGroup: a command whose child holds its output open is
// not waited for past its time limit, and the child dies with it.
func TestRunKillsTheGroup(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t)
	pidFile := dir + "/pid"
	if err := os.WriteFile(pidFile, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(pidFile, 0o666); err != nil {
		t.Fatal(err)
	}
	// The child writes its pid as the system sees it (the command may be
	// in a PID namespace of its own, where $! is another number).
	r := rule(t, `*=sh -c 'sh -c "read p rest < /proc/self/stat; echo \$p > `+pidFile+`; exec sleep 60" & wait'`)
	start := time.Now()
	out := r.run(context.Background(), "x", nil, Options{Timeout: 200 * time.Millisecond}, true, 0)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the run took %s", took)
	}
	if !strings.Contains(out.failed, "time limit") {
		t.Errorf("failed %q", out.failed)
	}
	b, _ := os.ReadFile(pidFile)
	if pid := strings.TrimSpace(string(b)); pid != "" {
		if _, err := os.Stat("/proc/" + pid); err == nil {
			time.Sleep(100 * time.Millisecond)
			if st, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
				t.Errorf("the child %s outlived the run", pid)
			}
		}
	}
}

// TestCacheSavesTheRunOfTheContentBefore: the content after one change
// is the content before the next, and is not checked again.
func TestCacheSavesTheRunOfTheContentBefore(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t)
	count := dir + "/count"
	if err := os.WriteFile(count, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(count, 0o666); err != nil {
		t.Fatal(err)
	}
	r := rule(t, "*.txt=sh -c 'echo x >> "+count+"; grep -n TODO | sed \"s/^\\([0-9]*\\):.*/-:\\1: todo/\"'")
	c := NewCache()
	o := Options{TempDir: dir}
	rep := r.Check(context.Background(), c, "a.txt", []byte("a\n"), []byte("a\nTODO\n"), o)
	if len(rep.Findings) != 1 || rep.Findings[0].Line != 2 {
		t.Fatalf("%+v", rep)
	}
	rep = r.Check(context.Background(), c, "a.txt", []byte("a\nTODO\n"), []byte("TODO\na\nTODO\n"), o)
	if len(rep.Findings) != 1 || rep.Findings[0].Line != 1 {
		t.Fatalf("%+v", rep)
	}
	b, _ := os.ReadFile(count)
	if n := strings.Count(string(b), "x"); n != 3 {
		t.Errorf("%d runs, want 3 (the second check's content before was the first's after)", n)
	}
}
