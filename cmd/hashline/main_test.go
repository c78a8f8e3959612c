package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/binarytest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The real binaries, built once by TestMain. TestCLI drives them as a
// shell agent would and compares each transcript with a golden file under
// testdata/; every transcript runs twice, against a real hashlined and with
// --local, and both must print the same bytes.
var hashlineBin, hashlinedBin string

func TestMain(m *testing.M) {
	// TestInProcess runs the commands in this process, and --local starts
	// the workspace's engine as this executable's "engine" command: be
	// that command when started so.
	if len(os.Args) > 1 && os.Args[1] == "engine" {
		os.Exit(runEngine(context.Background(), stdio{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[2:]))
	}
	flag.Parse()
	// Without -race: a race-enabled binary starts slowly, and the
	// transcripts start it over a hundred times. The same command code
	// runs under -race in TestInProcess.
	var err error
	hashlineBin, err = binarytest.Build(binarytest.Hashline)
	if err == nil {
		hashlinedBin, err = binarytest.Build(binarytest.Hashlined)
	}
	if err != nil {
		binarytest.Cleanup()
		panic(err)
	}
	// The servers these tests start keep their state (internal/state)
	// under $XDG_STATE_HOME: here, not in the user's.
	state, err := os.MkdirTemp("", "hashline-cli-state-")
	if err != nil {
		binarytest.Cleanup()
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	binarytest.StopEngines(state)
	binarytest.Cleanup()
	os.RemoveAll(state)
	os.Exit(code)
}

// startServer runs the real hashlined on root and a free port, and returns
// its address.
func startServer(t testing.TB, root string, args ...string) string {
	t.Helper()
	p, err := binarytest.Start(hashlinedBin, binarytest.Options{Args: append([]string{"--root", root, "--listen", "127.0.0.1:0", "--log-level", "error"}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p.Addr
}

// step is one run of the CLI.
type step struct {
	args  []string
	stdin string
	dump  string
}

func cli(args ...string) step { return step{args: args} }

// dump records a file's exact bytes in the transcript.
func dump(path string) step { return step{dump: path} }

func (s step) in(stdin string) step { s.stdin = stdin; return s }

// mode says how a transcript reaches the engine: a real hashlined, or
// --local in the workspace directory. Both must print the same transcript.
type mode struct {
	name  string
	setup func(t *testing.T, dir string) (env []string, extra []string)
}

var modes = []mode{
	{"against hashlined", func(t *testing.T, dir string) ([]string, []string) {
		return []string{"HASHLINE_SERVER=" + startServer(t, dir)}, nil
	}},
	{"with --local", func(t *testing.T, dir string) ([]string, []string) {
		return []string{"HASHLINE_SERVER=127.0.0.1:1"}, []string{"--local"}
	}},
}

// runner runs the CLI once.
type runner func(args []string, stdin string) (stdout, stderr string, code int)

// binary runs the built hashline in dir with env added, and extra flags
// after the command name.
func binary(t *testing.T, dir string, env, extra []string) runner {
	return func(args []string, stdin string) (string, string, int) {
		t.Helper()
		if len(extra) > 0 && len(args) > 0 && !strings.HasPrefix(args[0], "-") && args[0] != "help" {
			args = append(append([]string{args[0]}, extra...), args[1:]...)
		}
		cmd := exec.Command(hashlineBin, args...)
		cmd.Dir = dir
		cmd.Env = append(cleanEnv(), env...)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return stdout.String(), stderr.String(), exit.ExitCode()
		} else if err != nil {
			t.Fatalf("run %v: %v", args, err)
		}
		return stdout.String(), stderr.String(), 0
	}
}

// transcript runs steps in dir and records each command, its stdout, its
// stderr and its exit code.
func transcript(t *testing.T, dir string, env, extra []string, steps []step) string {
	t.Helper()
	return record(t, dir, binary(t, dir, env, extra), steps)
}

func record(t *testing.T, dir string, run runner, steps []step) string {
	t.Helper()
	var b strings.Builder
	for _, s := range steps {
		if s.dump != "" {
			data, err := os.ReadFile(filepath.Join(dir, s.dump))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "# bytes of %s: %q\n\n", s.dump, data)
			continue
		}
		fmt.Fprintf(&b, "$ hashline %s\n", shellQuote(s.args))
		if s.stdin != "" {
			fmt.Fprintf(&b, "< %q\n", s.stdin)
		}
		stdout, stderr, code := run(s.args, s.stdin)
		b.WriteString(stdout)
		if stderr != "" {
			b.WriteString("[stderr]\n")
			b.WriteString(stderr)
		}
		fmt.Fprintf(&b, "[exit %d]\n\n", code)
	}
	return b.String()
}

// cleanEnv drops the HASHLINE_* settings of whoever runs the tests.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HASHLINE_") {
			env = append(env, kv)
		}
	}
	return env
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,*") == "" {
			q[i] = a
			continue
		}
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, " ")
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// golden compares got with testdata/name.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/hashline -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("transcript differs from %s (go test ./cmd/hashline -update rewrites it after review)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

const mainGo = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

var cases = []struct {
	name  string
	files map[string]string
	steps []step
}{
	{"read", map[string]string{"main.go": mainGo, "big.txt": strings.Repeat("line\n", 12)}, []step{
		cli("read", "main.go"),
		cli("read", "big.txt", "--offset", "4", "--limit", "3"),
		cli("read", "--limit=2", "big.txt"),
		cli("read", "main.go", "--json", "--offset", "5"),
		cli("read", "missing.go"),
		cli("read", "../outside.txt"),
		cli("read"),
		cli("read", "a", "b"),
		cli("read", "main.go", "--offset", "-1"),
		cli("read", "main.go", "--bogus"),
	}},
	{"ls", map[string]string{
		".gitignore": "*.log\n", ".env": "X=1\n", "main.go": mainGo, "debug.log": "x\n",
		"pkg/a.go": "package pkg\n", "pkg/b.go": "package pkg\n", "pkg/notes.md": "# notes\n", "pkg/sub/c.go": "package sub\n",
	}, []step{
		cli("ls"),
		cli("ls", "-r"),
		cli("ls", "pkg", "-l", "--versions"),
		cli("ls", "--recursive", "--glob", "*.log", "--glob", ".*", "--hidden", "--no-ignore"),
		cli("ls", "-r", "--max", "3"),
		cli("ls", "-r", "--max", "3", "--page", "cGtnL2EuZ28"),
		cli("ls", "-r", "--max", "3", "--all"),
		cli("ls", "pkg/a.go", "--json", "-l"),
		cli("ls", "missing"),
		cli("ls", "../outside"),
		cli("ls", "--page", "bogus!"),
		cli("ls", "a", "b"),
		cli("ls", "--max", "-1"),
	}},
	{"edit_flags", map[string]string{"main.go": mainGo}, []step{
		cli("read", "main.go"),
		cli("edit", "main.go", "--replace", "4:16", "--text", "\tprintln(\"hello\")"),
		cli("edit", "main.go", "--insert-after", "4:d4", "--text", "\tprintln(\"bye\")\n\tos.Exit(0)"),
		cli("edit", "main.go", "--insert-before", "1:c9|package main", "--text", "// Command main greets."),
		cli("edit", "main.go", "--delete", "6:81", "--end", "7:74"),
		cli("edit", "main.go", "--append", "--text", "// end"),
		cli("edit", "main.go", "--prepend", "--text", "//go:build ignore\n"),
		cli("edit", "main.go", "--replace", "8:06", "--text", ""),
		cli("edit", "main.go", "--full", "--replace", "4:05", "--text", "").in(""),
		dump("main.go"),
	}},
	{"edit_text_and_json", map[string]string{"notes.txt": "alpha\nbeta\nalpha\n"}, []step{
		cli("read", "notes.txt"),
		cli("edit", "notes.txt", "--replace-text", "beta", "--with", "BETA"),
		cli("edit", "notes.txt", "--replace-text", "alpha", "--with", "ALPHA"),
		cli("edit", "notes.txt", "--replace-text", "alpha", "--with", "ALPHA", "--all"),
		cli("edit", "notes.txt", "--replace-text", "gamma", "--with", "x"),
		cli("edit", "notes.txt").in(`[{"replace":{"start":"1:f8","text":"one"}},{"insertAfter":{"anchor":"3:f8","text":"four"}}]`),
		cli("edit", "notes.txt", "--dry-run", "--diff").in(`{"edits":[{"delete":{"start":"2:21"}}],"context":1}`),
		cli("edit", "notes.txt", "--replace", "2:21").in("from stdin\n"),
		cli("edit", "notes.txt", "--context", "0", "--append", "--text-file", "-").in("last\n"),
		cli("read", "notes.txt"),
	}},
	{"edit_repairs", map[string]string{"f.go": "package p\n\nfunc f() int {\n\treturn 1\n}\n"}, []step{
		cli("read", "f.go"),
		cli("edit", "f.go", "--replace", "4:c4", "--text", "+\tx := 2\n+\treturn x"),
		cli("edit", "f.go", "--strict", "--insert-after", "3:3c", "--text", "+\t// as sent"),
		cli("edit", "f.go").in(`{"strict":true,"edits":[{"append":{"text":"5:00|// tagged"}}]}`),
		cli("edit", "f.go", "--insert-after", "7:18", "--text", "}\n}"),
		cli("edit", "f.go", "--replace", "6:b3", "--text", "return x + 1"),
		dump("f.go"),
	}},
	{"edit_stale", map[string]string{"greet.txt": "hello\nworld\n"}, []step{
		cli("read", "greet.txt"),
		cli("edit", "greet.txt", "--replace", "2:b3", "--text", "there"),
		cli("edit", "greet.txt", "--replace", "2:b3", "--text", "again"),
		cli("edit", "greet.txt", "--context", "0", "--replace", "2:b3", "--text", "again"),
		cli("edit", "greet.txt", "--replace", "2:50", "--text", "again"),
		cli("edit", "greet.txt", "--delete", "9:aa"),
		cli("edit", "greet.txt", "--replace", "2:zz", "--text", "x"),
	}},
	{"edit_usage", map[string]string{"f.txt": "a\n"}, []step{
		cli("edit", "f.txt", "--replace", "1:aa", "--delete", "1:aa"),
		cli("edit", "f.txt", "--delete", "1:aa", "--text", "x"),
		cli("edit", "f.txt", "--append", "--end", "1:aa", "--text", "x"),
		cli("edit", "f.txt", "--replace-text", "a"),
		cli("edit", "f.txt").in(`[{"replace":{"begin":"1:aa"}}]`),
		cli("edit", "f.txt").in(`not json`),
		cli("edit", "f.txt"),
		cli("edit", "f.txt").in(`{"path":"other.txt","edits":[{"append":{"text":"x"}}]}`),
		// An empty pipe is not a deletion: the line stays.
		cli("read", "f.txt"),
		cli("edit", "f.txt", "--replace", "1:56"),
		cli("edit", "f.txt", "--insert-after", "1:56", "--text-file", "-"),
		dump("f.txt"),
		cli("edit"),
	}},
	// What models get wrong in a batch: refused with the expected shape,
	// or, where the intent is unambiguous, taken with a warning. The file
	// is dumped at the end: only the accepted batches changed it.
	{"edit_json_shapes", map[string]string{"f.txt": "one\ntwo\nthree\n"}, []step{
		cli("read", "f.txt"),
		cli("edit", "f.txt").in(`[{"set_line": {"anchor": "1:60", "new_text": "ONE"}}]`),
		cli("edit", "f.txt").in(`[{"replace": {"begin": "1:60"}}]`),
		cli("edit", "f.txt").in(`[{"replace": {"start": "1:60", "end": "2:a5"}}]`),
		cli("edit", "f.txt").in(`[{"replace": {"old_text": "one", "new_text": "ONE"}}]`),
		cli("edit", "f.txt").in(`[{"insertafter": {"anchor": "1:60", "text": "x"}}, {"replaceText": {"oldText": "two", "newText": 2}}, {"delete": {"start": "1:60"}, "end": "2:a5"}]`),
		cli("edit", "f.txt").in(`[{"insertAfter": {"anchor": "1:60", "end": "2:a5", "text": "x"}}]`),
		cli("edit", "f.txt").in(`{"path": "f.txt", "dryRun": true}`),
		cli("edit", "f.txt").in(`{"replace": {"start": "1:60", "text": "ONE"}}`),
		cli("edit", "f.txt").in(`"[{\"insertAfter\": {\"anchor\": \"3:f8\", \"text\": \"four\"}}]"`),
		cli("edit", "f.txt").in(`{"edits": {"append": {"text": "five"}}, "context": 0}`),
		cli("edit", "f.txt").in(`[{"insertBefore": {"anchor": "1:22", "end": " 1:22|ONE ", "text": "zero"}}]`),
		cli("edit", "f.txt").in(`[{"replace": {"start": "3:f4", "text": "two"}}]`),
		dump("f.txt"),
	}},
	{"write", map[string]string{"old.txt": "old\n"}, []step{
		cli("write", "new.txt", "--create").in("one\ntwo\n"),
		cli("write", "new.txt", "--create").in("again\n"),
		cli("write", "gone.txt", "--replace").in("x\n"),
		cli("write", "old.txt", "--expected-version", "v1-00000000000000000000000000000000").in("x\n"),
		cli("write", "old.txt", "--expected-version", "v2-87b86a9f9e06007dc88bef0b92d8f046", "--content", "new\n"),
		cli("write", "dir/deep/file.txt", "--content", ""),
		cli("write", "x.txt", "--create", "--replace"),
		cli("read", "new.txt"),
	}},
	{"grep", map[string]string{
		"a.go":         "package a\n\n// TODO: name this\nfunc A() {}\n\nfunc B() {} // todo\n",
		"b.txt":        "nothing here\n",
		"sub/c.go":     "package sub\n\nvar x = \"TODO\"\n",
		".hidden/h.go": "// TODO hidden\n",
	}, []step{
		cli("grep", "TODO"),
		cli("grep", "-i", "todo", "-C1"),
		cli("grep", "-i", "todo", "-A", "1", "a.go"),
		cli("grep", "--glob", "sub/**", "TODO"),
		cli("grep", "--hidden", "-F", "TODO h"),
		cli("grep", "--max", "1", "-i", "todo"),
		cli("grep", "-e", "-?TODO", "sub"),
		cli("grep", "--", "-nope"),
		cli("grep", "nomatch"),
		cli("grep", "(unclosed"),
		cli("grep"),
		cli("grep", "TODO", "a", "b"),
	}},
	{"unicode_crlf", map[string]string{"win.txt": "caf\u00e9\r\nna\u00efve \u2603\r\n\u65e5\u672c\u8a9e\r\n", "bom.txt": "\ufeffx = 1\ny = 2\n"}, []step{
		cli("read", "win.txt"),
		cli("edit", "win.txt", "--replace", "2:e7", "--text", "na\u00efve \u2744"),
		cli("edit", "win.txt", "--append", "--text", "\u00e9t\u00e9"),
		cli("grep", "\u00e9"),
		cli("read", "bom.txt"),
		cli("edit", "bom.txt", "--prepend", "--text", "# top"),
		dump("win.txt"),
		dump("bom.txt"),
	}},
}

func TestCLI(t *testing.T) {
	for _, tc := range cases {
		var first string
		for _, m := range modes {
			t.Run(tc.name+" "+m.name, func(t *testing.T) {
				dir := t.TempDir()
				writeFiles(t, dir, tc.files)
				env, extra := m.setup(t, dir)
				got := transcript(t, dir, env, extra, tc.steps)
				if first == "" {
					first = got
					golden(t, tc.name, got)
					return
				}
				if got != first {
					t.Errorf("%s prints a different transcript than %s:\n%s", m.name, modes[0].name, lineDiff(first, got))
				}
			})
		}
	}
}

// lineDiff lists the lines that differ, for a readable failure.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := 0; i < max(len(al), len(bl)); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "line %d:\n  - %s\n  + %s\n", i+1, x, y)
		}
	}
	return out.String()
}

func TestHelp(t *testing.T) {
	dir := t.TempDir()
	// The command list includes commands other files own, so the top-level
	// help is checked for what it must say rather than byte for byte.
	for _, args := range [][]string{{"--help"}, {"help"}, {}, {"bogus"}} {
		out, errOut, code := binary(t, dir, nil, nil)(args, "")
		text := out + errOut
		wantCode := exitUsage
		if len(args) == 1 && args[0] != "bogus" {
			wantCode = exitOK
		}
		if code != wantCode {
			t.Errorf("hashline %v: exit %d, want %d", args, code, wantCode)
		}
		for _, want := range []string{"read ", "edit ", "write ", "grep ", "exit codes:", "  0  success", "  1  any other error", "  2  usage error", "  5  stale", "HASHLINE_SERVER", "--local"} {
			if !strings.Contains(text, want) {
				t.Errorf("hashline %v does not say %q:\n%s", args, want, text)
			}
		}
	}
	got := transcript(t, dir, nil, nil, []step{
		cli("read", "--help"),
		cli("edit", "-h"),
		cli("write", "--help"),
		cli("grep", "--help"),
		cli("ls", "--help"),
	})
	golden(t, "help", got)
}

// TestHelpIsPrintedOnce: asked for, the help goes to stdout only and the
// exit is 0; after a usage error it goes to stderr only and the exit is 2.
// A harness that captures both streams must not read it twice.
func TestHelpIsPrintedOnce(t *testing.T) {
	dir := t.TempDir()
	run := binary(t, dir, nil, nil)
	for _, tc := range []struct {
		name string
		args []string
		code int
		head string // the usage line, on the stream the case expects
	}{
		{"hashline --help prints the help on stdout", []string{"--help"}, exitOK, "usage: hashline COMMAND"},
		{"hashline read --help prints its usage on stdout", []string{"read", "--help"}, exitOK, "usage: hashline read FILE"},
		{"hashline edit -h prints its usage on stdout", []string{"edit", "-h"}, exitOK, "usage: hashline edit FILE"},
		{"hashline write --help prints its usage on stdout", []string{"write", "--help"}, exitOK, "usage: hashline write FILE"},
		{"hashline grep --help prints its usage on stdout", []string{"grep", "--help"}, exitOK, "usage: hashline grep PATTERN"},
		{"hashline mcp --help prints its usage on stdout", []string{"mcp", "--help"}, exitOK, "usage: hashline mcp"},
		{"hashline with no command prints the help on stderr", nil, exitUsage, "usage: hashline COMMAND"},
		{"hashline read with a bad flag points to its usage on stderr", []string{"read", "--bogus", "f"}, exitUsage, `Run "hashline read --help" for usage.`},
		{"hashline mcp with a bad flag points to its usage on stderr", []string{"mcp", "--bogus"}, exitUsage, `Run "hashline mcp --help" for usage.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(tc.args, "")
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			want, other := out, errOut
			if tc.code != exitOK {
				want, other = errOut, out
			}
			if n := strings.Count(want, tc.head); n != 1 {
				t.Errorf("the usage line %q is there %d times, want once:\n%s", tc.head, n, want)
			}
			if strings.Contains(other, "usage:") {
				t.Errorf("the usage is on the other stream too:\n%s", other)
			}
		})
	}
}

func TestServerUnreachable(t *testing.T) {
	dir := t.TempDir()
	got := transcript(t, dir, []string{"HASHLINE_SERVER=127.0.0.1:1"}, nil, []step{cli("read", "x.txt")})
	if !strings.Contains(got, "[exit 1]") || !strings.Contains(got, "Is hashlined running there?") {
		t.Fatalf("want exit 1 and a hint to start the server, got:\n%s", got)
	}
}

// TestFlagMistakes: a mistyped flag gets its error, the flag meant and a
// pointer to --help, not pages of usage above it; the connection flags
// work before the command; a refused token names the flag and variable.
func TestFlagMistakes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "a\n"})
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("tokens:\n  - token: 0123456789abcdef0123\n    agent: a\n    permission: read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	authed := startServer(t, dir, "--tokens", tokens)
	run := binary(t, dir, nil, nil)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr []string // every line of stderr, in order
	}{
		{"a typo names the flag meant", []string{"read", "--ofset", "2", "f.txt"}, exitUsage, "",
			[]string{"hashline read: unknown flag --ofset; did you mean --offset?", `Run "hashline read --help" for usage.`}},
		{"a typo of mcp names the flag meant", []string{"mcp", "--sever", "x"}, exitUsage, "",
			[]string{"hashline mcp: unknown flag --sever; did you mean --server?", `Run "hashline mcp --help" for usage.`}},
		{"a flag nothing is near", []string{"edit", "f.txt", "--zzzzzz"}, exitUsage, "",
			[]string{"hashline edit: unknown flag --zzzzzz", `Run "hashline edit --help" for usage.`}},
		{"a bad value", []string{"read", "--offset", "x", "f.txt"}, exitUsage, "",
			[]string{`hashline read: invalid value "x" for flag --offset: parse error`, `Run "hashline read --help" for usage.`}},
		// --local reaches the root's one engine: the hashlined with tokens
		// started above, so the token goes first too.
		{"connection flags before the command", []string{"--local", "--root", dir, "--token", "0123456789abcdef0123", "read", "f.txt"}, exitOK, "1:56|a\n", nil},
		{"a command flag before the command", []string{"--offset", "2", "read", "f.txt"}, exitUsage, "",
			[]string{"hashline: --offset before the command: only the connection flags (--server, --local, --root, --agent, --token, --timeout, --json, --tls...) may come first; put it after the command (hashline COMMAND --offset)", `Run "hashline --help" for usage.`}},
		{"a missing token", []string{"read", "--server", authed, "f.txt"}, exitError, "",
			[]string{"", "The server wants a token: pass --token TOKEN or set HASHLINE_TOKEN."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(tc.args, "")
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
			}
			if !strings.HasSuffix(out, tc.stdout) {
				t.Errorf("stdout %q, want it to end with %q", out, tc.stdout)
			}
			got := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if errOut == "" {
				got = nil
			}
			if len(got) != len(tc.stderr) {
				t.Fatalf("stderr has %d lines, want %d:\n%s", len(got), len(tc.stderr), errOut)
			}
			for i, want := range tc.stderr {
				if want != "" && got[i] != want {
					t.Errorf("stderr line %d:\n got %s\nwant %s", i+1, got[i], want)
				}
			}
		})
	}
	help, _, _ := run([]string{"--help"}, "")
	if !strings.Contains(help, "--version") {
		t.Errorf("hashline --help does not list --version:\n%s", help)
	}
}

// TestStdinTerminal: a command that wanted its input on stdin, given a
// character device, says what to pass instead of waiting on it.
func TestStdinTerminal(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "a\n"})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"edit", "--root", dir, "f.txt", "--replace", "1:56"}, "--replace needs its TEXT: give --text TEXT or --text-file PATH, or pipe the text in (stdin is a terminal)"},
		{[]string{"edit", "--root", dir, "f.txt"}, "with no operation flag the edits are read as JSON from stdin, but stdin is a terminal: give an operation such as --replace REF --text TEXT, or pipe the edits in"},
		{[]string{"write", "--root", dir, "g.txt"}, "the content is read from stdin, but stdin is a terminal: pipe it in, or give --content TEXT"},
	} {
		tty, err := os.Open(os.DevNull) // a character device, as a terminal is
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr strings.Builder
		code := run(context.Background(), tc.args, stdio{stdin: tty, stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }})
		tty.Close()
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("hashline %v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, &stderr, exitUsage, tc.want)
		}
	}
}

// TestRefusedEditSentNothing: with nothing listening, an edit never left
// the client, so it must not be reported as perhaps applied.
func TestRefusedEditSentNothing(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "a\n"})
	got := transcript(t, dir, []string{"HASHLINE_SERVER=127.0.0.1:1"}, nil, []step{
		cli("edit", "f.txt", "--append", "--text", "x"),
		cli("write", "g.txt", "--content", "x"),
	})
	if strings.Contains(got, "may have been applied") || strings.Contains(got, "--request-id") {
		t.Errorf("a refused call is reported as perhaps applied:\n%s", got)
	}
	if strings.Count(got, "Nothing was sent") != 2 || strings.Count(got, "[exit 1]") != 2 {
		t.Errorf("want exit 1 and \"Nothing was sent\" for both calls, got:\n%s", got)
	}
}

// TestMistypedHashAfterRead: a wrong hash right after a read, the file
// unchanged, is a wrong reference, not a change to the file: the server
// remembers what the agent read and says which tag the line has.
func TestMistypedHashAfterRead(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"greet.txt": "hello\nworld\n"})
	env := []string{"HASHLINE_SERVER=" + startServer(t, dir), "HASHLINE_AGENT=typo"}
	run := binary(t, dir, env, nil)
	if _, errOut, code := run([]string{"read", "greet.txt"}, ""); code != 0 {
		t.Fatalf("read: exit %d: %s", code, errOut)
	}
	_, errOut, code := run([]string{"edit", "greet.txt", "--replace", "2:b4", "--text", "there"}, "")
	if code != exitStale {
		t.Errorf("exit %d, want %d", code, exitStale)
	}
	if strings.Contains(errOut, "changed since last read") {
		t.Errorf("a mistyped hash is reported as a change to the file:\n%s", errOut)
	}
	if !strings.Contains(errOut, "line 2 is 2:b3, not 2:b4") || !strings.Contains(errOut, ">>> 2:b3|world") {
		t.Errorf("want the line's true tag and the fresh view, got:\n%s", errOut)
	}
}

func TestUnixSocketAndAgentEnv(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	sock := filepath.Join(t.TempDir(), "h.sock")
	addr := startServer(t, dir, "--listen", "unix://"+sock)
	got := transcript(t, dir, []string{"HASHLINE_SERVER=" + addr, "HASHLINE_AGENT=tester"}, nil, []step{
		cli("read", "f.txt"),
		cli("edit", "f.txt", "--append", "--text", "two"),
	})
	if strings.Count(got, "[exit 0]") != 2 || !strings.Contains(got, "2:") {
		t.Fatalf("over %s:\n%s", addr, got)
	}
}

// TestInProcess runs transcripts through run itself, under -race, with
// --root: the same golden files must come out.
func TestInProcess(t *testing.T) {
	for _, tc := range cases {
		if tc.name != "edit_stale" && tc.name != "edit_text_and_json" && tc.name != "edit_json_shapes" && tc.name != "unicode_crlf" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			got := record(t, dir, inProcess(dir), tc.steps)
			want, err := os.ReadFile(filepath.Join("testdata", tc.name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("in-process transcript differs from the golden file:\n%s", lineDiff(string(want), got))
			}
		})
	}
}

// inProcess runs the CLI's run in this process, as `hashline ARGS[0]
// --root dir ARGS[1:]` with stdin and no environment, so that the
// commands' own code runs under -race too.
func inProcess(dir string) func(args []string, stdin string) (string, string, int) {
	return func(args []string, stdin string) (string, string, int) {
		args = append([]string{args[0], "--root", dir}, args[1:]...)
		var stdout, stderr strings.Builder
		code := run(context.Background(), args, stdio{
			stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr,
			getenv: func(string) string { return "" },
		})
		return stdout.String(), stderr.String(), code
	}
}
