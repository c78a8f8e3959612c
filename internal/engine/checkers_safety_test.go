package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/checkers"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// sharedMarks is a directory every user may write in: commands leave
// marks there (they run as nobody when the tests run as root).
func sharedMarks(t *testing.T) string {
	return tempDirFor(t, "hashline-marks-", 0o777)
}

// TestCommandRulesMatchTheResolvedPath: the operator's rules (check and
// format globs, strict syntax globs) are for the file a change writes,
// the target of the links its path goes through: a link named otherwise
// neither dodges the rules of its target nor picks those of its own name,
// and the command is given the copy under the target's name.
func TestCommandRulesMatchTheResolvedPath(t *testing.T) {
	t.Parallel()
	needGofmt(t)
	marks := sharedMarks(t)
	opt := commands(t, []string{`*.txt=sh -c 'touch ` + marks + `/"$(basename "$1")"; cat > /dev/null' sh {}`}, []string{"*.go=gofmt"}, checkers.Options{TempDir: runDir(t)})
	e, root := changeEngine(t, map[string]string{"real.go": "package a\n", "notes.txt": "a\n"}, opt, engine.WithSyntax(engine.SyntaxAdvisory, "*.go"))
	for link, target := range map[string]string{"link.txt": "real.go", "link.go": "notes.txt"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	// Through link.txt, real.go: formatted by gofmt, not checked as a .txt.
	w, err := e.Write(t.Context(), &engine.WriteRequest{Path: "link.txt", Content: "package a\nvar Y=2\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "real.go"); got != "package a\n\nvar Y = 2\n" {
		t.Errorf("real.go, written through link.txt, is %q: want it formatted as a .go file", got)
	}
	if !slices.ContainsFunc(w.Warnings, func(s string) bool { return strings.Contains(s, "formatted with gofmt") }) {
		t.Errorf("warnings %q", w.Warnings)
	}
	// Through link.go, notes.txt: checked as a .txt, not given to gofmt
	// (which would refuse it, with a warning).
	w, err = e.Write(t.Context(), &engine.WriteRequest{Path: "link.go", Content: "not go\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "notes.txt"); got != "not go\n" || len(w.Warnings) != 0 {
		t.Errorf("notes.txt, written through link.go, is %q, warnings %q: want it as sent, not formatted as Go", got, w.Warnings)
	}
	if got := treeFiles(t, marks); !slices.Equal(got, []string{"notes.txt"}) {
		t.Errorf("the .txt check ran on %q, want notes.txt alone (under its own name)", got)
	}
	// Strict by the target's glob: a syntax error in real.go is refused
	// through a link of another name.
	_, err = e.Write(t.Context(), &engine.WriteRequest{Path: "link.txt", Content: "package a\nfunc (\n"})
	var se *engine.SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("a syntax error written to real.go through link.txt: %v, want the strict refusal of *.go", err)
	}
}

// TestFormatterKeepsOneBOM: a file with a byte order mark keeps exactly
// one when its formatter prints one of its own.
func TestFormatterKeepsOneBOM(t *testing.T) {
	t.Parallel()
	const bom = "\uFEFF"
	opt := commands(t, nil, []string{`*.txt=sh -c 'printf "\357\273\277"; tr a-z A-Z'`}, checkers.Options{TempDir: runDir(t)})
	e, root := changeEngine(t, map[string]string{"n.txt": bom + "a\n"}, opt)
	r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "n.txt", Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "n.txt"); got != bom+"A\nB\n" || r.Version != workspace.Version([]byte(got)) {
		t.Errorf("after the edit %q (version %s), want one BOM", got, r.Version)
	}
	// Content the formatter leaves as it is but for its BOM is written
	// as sent.
	w, err := e.Write(t.Context(), &engine.WriteRequest{Path: "n.txt", Content: bom + "C\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "n.txt"); got != bom+"C\n" || len(w.Warnings) != 0 {
		t.Errorf("after the write %q, warnings %q; want it as sent", got, w.Warnings)
	}
}

// TestFormatterMayEmptyBlankContent: a formatter that prints nothing for
// content of blank lines alone (as Python's do) did its job: the empty
// file is written, and no warning says it failed.
func TestFormatterMayEmptyBlankContent(t *testing.T) {
	t.Parallel()
	opt := commands(t, nil, []string{"*.py=tr -d ' \\t\\n'"}, checkers.Options{TempDir: runDir(t)})
	e, root := changeEngine(t, map[string]string{"a.py": "x\n"}, opt)
	for _, blank := range []string{"  \n\n", "\n", "\t \n"} {
		w, err := e.Write(t.Context(), &engine.WriteRequest{Path: "a.py", Content: blank})
		if err != nil {
			t.Fatalf("%q: %v", blank, err)
		}
		if got := readFile(t, root, "a.py"); got != "" {
			t.Errorf("%q: file %q, want the formatter's empty output", blank, got)
		}
		if slices.ContainsFunc(w.Warnings, func(s string) bool { return strings.HasPrefix(s, "not formatted") }) {
			t.Errorf("%q: warnings %q: nothing failed", blank, w.Warnings)
		}
	}
	// Content that is not blank printed as nothing is a failure.
	e, root = changeEngine(t, map[string]string{"a.py": "x\n"}, commands(t, nil, []string{`*.py=true`}, checkers.Options{TempDir: runDir(t)}))
	w, err := e.Write(t.Context(), &engine.WriteRequest{Path: "a.py", Content: "y = 1\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "a.py"); got != "y = 1\n" || !slices.ContainsFunc(w.Warnings, func(s string) bool { return strings.Contains(s, "printed nothing") }) {
		t.Errorf("file %q, warnings %q: want the content as sent and a warning", got, w.Warnings)
	}
}

// TestSlowCheckDoesNotHoldTheLock: an advisory check still running after
// its change was written holds no lock: another change of the same file
// goes through meanwhile, and the first change's reply, when its check
// ends, carries the check's findings on the content it wrote.
func TestSlowCheckDoesNotHoldTheLock(t *testing.T) {
	t.Parallel()
	marks := sharedMarks(t)
	// The first content holding SLOW is checked slowly: the check waits
	// for the test's word. Every other run ends at once.
	check := `*.txt=sh -c 'if grep -q SLOW && mkdir ` + marks + `/once 2>/dev/null; then touch ` + marks + `/started; while [ ! -e ` + marks + `/go ]; do sleep 0.01; done; echo "-:2: slow finding"; fi'`
	e, root := changeEngine(t, map[string]string{"a.txt": "a\n"}, commands(t, []string{check}, nil, checkers.Options{TempDir: runDir(t), Timeout: time.Minute}))
	type reply struct {
		r   *engine.EditResult
		err error
	}
	first := make(chan reply, 1)
	go func() {
		r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "a.txt", Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "SLOW"}}})
		first <- reply{r, err}
	}()
	for {
		if _, err := os.Stat(filepath.Join(marks, "started")); err == nil {
			break
		}
		select {
		case rp := <-first:
			t.Fatalf("the first edit ended before its check started: %+v", rp)
		case <-time.After(10 * time.Millisecond):
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w, err := e.Write(ctx, &engine.WriteRequest{Path: "a.txt", Content: "fast\n"})
	if err != nil {
		t.Errorf("a write while another change's check runs: %v", err)
	}
	if err := os.WriteFile(filepath.Join(marks, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rp := <-first
	if rp.err != nil {
		t.Fatal(rp.err)
	}
	const written = "a\nSLOW\n"
	if rp.r.Version != workspace.Version([]byte(written)) || len(rp.r.Diagnostics) != 1 || rp.r.Diagnostics[0].Line.Tag() != ref(written, 2) {
		t.Errorf("the first edit's reply: version %s, diagnostics %+v; want its own version and the finding on its line 2", rp.r.Version, rp.r.Diagnostics)
	}
	if err == nil && (readFile(t, root, "a.txt") != "fast\n" || w.Version != workspace.Version([]byte("fast\n"))) {
		t.Errorf("file %q, write version %s", readFile(t, root, "a.txt"), w.Version)
	}
}

// TestCommandsFromTheWorkspaceAreRefused: a program that would be taken
// from the workspace, which agents write, is refused at start: a rule's
// program found there, or a PATH directory inside it (where the programs
// a command runs by name would be looked up).
func TestCommandsFromTheWorkspaceAreRefused(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"tool", "bin/tool"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte("#!/bin/sh\ncat\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(root)
	tests := []struct{ name, path, rule, want string }{
		{"a program in the workspace", "/usr/bin:/bin", "*.txt=./tool", "inside the workspace"},
		{"a program found on a PATH directory in the workspace", root + "/bin:/usr/bin:/bin", "*.txt=tool", "inside the workspace"},
		{"a PATH directory in the workspace", root + "/bin:/usr/bin:/bin", "*.txt=cat", "inside the workspace"},
		{"a PATH relative to the workspace", "bin:/usr/bin:/bin", "*.txt=cat", "not an absolute directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", tt.path)
			e, err := engine.Open(engine.Config{Root: root, StateDir: t.TempDir(), NoSweep: true, Checks: []string{tt.rule}})
			if err == nil {
				e.Close()
				t.Fatalf("opened with %s", tt.rule)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
}
