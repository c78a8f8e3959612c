package engine_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/checkers"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// commands is the option of the check and format rules given, run with
// o's bounds (a private temporary directory of the test's: see runDir).
func commands(t *testing.T, checks, formats []string, o checkers.Options) engine.Option {
	t.Helper()
	c, err := engine.ParseCommands(checks)
	if err != nil {
		t.Fatal(err)
	}
	f, err := engine.ParseCommands(formats)
	if err != nil {
		t.Fatal(err)
	}
	return engine.WithCommands(c, f, o)
}

// runDir is a directory for the commands' private directories that the
// user they run as (nobody, when the tests run as root) can enter, and
// that the test checks is left empty.
func runDir(t *testing.T) string {
	return tempDirFor(t, "hashline-runs-", 0o755)
}

// tempDirFor is a new directory under the system's temporary directory
// with mode perm, removed after the test: the test's own temporary
// directories are private to its user, and the commands may run as
// another.
func tempDirFor(t *testing.T, pattern string, perm os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return dir
}

// treeFiles is every path under root, relative, sorted.
func treeFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func needGofmt(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gofmt"); err != nil {
		t.Fatalf("gofmt is not on PATH (it comes with Go): %v", err)
	}
}

const fmtGo = "package main\n\ntype T struct {\n\tA int\n\tB string\n}\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

// TestFormatAnEditWithGofmt: the edit's new content goes through gofmt
// before it is written: the file on disk is gofmt's output, the version
// is that of the bytes on disk, the reply's tags are those of the
// formatted lines (gofmt's realignment of lines the edit did not touch
// included), and the agent's next edit by a tag of the reply lands.
func TestFormatAnEditWithGofmt(t *testing.T) {
	t.Parallel()
	needGofmt(t)
	e, root := changeEngine(t, map[string]string{"main.go": fmtGo}, commands(t, nil, []string{"*.go=gofmt"}, checkers.Options{TempDir: runDir(t)}))
	// A longer field name realigns the fields around it, and the new
	// line's own spacing is not gofmt's.
	r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "main.go", Edits: []hashline.Edit{
		{Op: hashline.OpInsertAfter, Start: ref(fmtGo, 5), Text: "\tLonger   float64"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	const want = "package main\n\ntype T struct {\n\tA      int\n\tB      string\n\tLonger float64\n}\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	disk := readFile(t, root, "main.go")
	if disk != want {
		t.Fatalf("on disk:\n%s\nwant gofmt's output:\n%s", disk, want)
	}
	if r.Version != workspace.Version([]byte(disk)) {
		t.Errorf("version %s, want the version of the bytes on disk %s", r.Version, workspace.Version([]byte(disk)))
	}
	for _, n := range []int{4, 5, 6} {
		if !strings.Contains(r.TaggedDiff, "+"+ref(want, n)+"|") {
			t.Errorf("the tagged diff has no added line %s:\n%s", ref(want, n), r.TaggedDiff)
		}
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "formatted with gofmt") }) {
		t.Errorf("warnings %q say nothing of the formatting", r.Warnings)
	}
	if r.TotalLines != 11 || len(r.Shifts) == 0 {
		t.Errorf("total %d, shifts %+v", r.TotalLines, r.Shifts)
	}
	// The next edit, by a tag the reply showed, lands on the formatted
	// line (requireRead is on: the reply is the agent's view).
	e2, err := e.Edit(t.Context(), &engine.EditRequest{Path: "main.go", Edits: []hashline.Edit{
		{Op: hashline.OpReplace, Start: ref(want, 6), Text: "\tLonger float32"},
	}})
	if err != nil {
		t.Fatalf("an edit by the reply's tag %s: %v", ref(want, 6), err)
	}
	if got := readFile(t, root, "main.go"); got != strings.Replace(want, "float64", "float32", 1) || e2.Version != workspace.Version([]byte(got)) {
		t.Errorf("after the second edit:\n%s", got)
	}
	if got := treeFiles(t, root); !slices.Equal(got, []string{"main.go"}) {
		t.Errorf("the workspace holds %q", got)
	}
}

// TestFormatAWriteAndASet: a Write's content and an Apply's contents go
// through the formatter; the writer is told which lines are not as it
// sent them, and its edit of such a line by its own numbering is refused
// with fresh tags, never applied to another line.
func TestFormatAWriteAndASet(t *testing.T) {
	t.Parallel()
	needGofmt(t)
	opt := commands(t, nil, []string{"*.go=gofmt"}, checkers.Options{TempDir: runDir(t)})
	root := t.TempDir()
	ws, err := workspace.Open(root, workspace.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	e := engine.New(ws, opt)
	const sent = "package main\n\n\n\nfunc main() {\nprintln( 1 )\n}\n"
	const formatted = "package main\n\nfunc main() {\n\tprintln(1)\n}\n"
	w, err := e.Write(t.Context(), &engine.WriteRequest{Path: "a.go", Content: sent})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "a.go"); got != formatted || w.Version != workspace.Version([]byte(formatted)) || w.TotalLines != 5 {
		t.Fatalf("wrote %q (version %s, %d lines), want gofmt's %q", got, w.Version, w.TotalLines, formatted)
	}
	if len(w.Warnings) != 1 || !strings.Contains(w.Warnings[0], "line(s) 3-5") {
		t.Errorf("warnings %q, want lines 3-5 named", w.Warnings)
	}
	// Line 1 is as sent: editable. Line 4 of what was sent is not line 4
	// of the file.
	if _, err := e.Edit(t.Context(), &engine.EditRequest{Path: "a.go", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref(formatted, 1), Text: "package other"}}}); err != nil {
		t.Errorf("an edit of a line the formatter left: %v", err)
	}
	_, err = e.Edit(t.Context(), &engine.EditRequest{Path: "a.go", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref(sent, 5), Text: "func run() {"}}})
	var stale *engine.StaleError
	if !errors.As(err, &stale) || stale.Batch.Reason() != hashline.ReasonStaleRef {
		t.Errorf("an edit by the sent numbering of a moved line: %v, want a stale refusal", err)
	}
	// A set: an edit formatted, a write formatted, staged and committed.
	res, err := e.Apply(t.Context(), &engine.ApplyRequest{Changes: []engine.Change{
		&engine.WriteRequest{Path: "b.go", Content: "package b\nvar X=1\n"},
		&engine.WriteRequest{Path: "notes.txt", Content: "var X=1\n"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "b.go"); got != "package b\n\nvar X = 1\n" || res.Results[0].(*engine.WriteResult).Version != workspace.Version([]byte(got)) {
		t.Errorf("b.go %q", got)
	}
	if got := readFile(t, root, "notes.txt"); got != "var X=1\n" {
		t.Errorf("notes.txt, which no glob matches, is %q", got)
	}
}

// todoCheck reports every line holding TODO, as FILE:LINE:COL: MESSAGE
// on the copy of the content the command is given.
const todoCheck = `*.txt=awk '/TODO/ { print FILENAME ":" FNR ":3: a TODO is left" }' {}`

// TestCheckCommandFindings: a check command's findings in the new content
// come back as diagnostics with the fresh tag of their line; a finding
// the file had before the edit is not the edit's; strict, the edit is
// refused and the file is left byte for byte as it was.
func TestCheckCommandFindings(t *testing.T) {
	t.Parallel()
	const text = "one TODO\ntwo\nthree\n"
	edits := []hashline.Edit{{Op: hashline.OpInsertAfter, Start: ref(text, 2), Text: "new TODO"}}
	const after = "one TODO\ntwo\nnew TODO\nthree\n"
	for _, strict := range []bool{false, true} {
		e, root := changeEngine(t, map[string]string{"notes.txt": text}, commands(t, []string{todoCheck}, nil, checkers.Options{TempDir: runDir(t)}))
		r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "notes.txt", Edits: edits, StrictSyntax: strict})
		if strict {
			var se *engine.SyntaxError
			if !errors.As(err, &se) || len(se.Diagnostics) != 1 || se.Diagnostics[0].Line.Tag() != ref(after, 3) {
				t.Fatalf("strict: %v, want a refusal naming line %s", err, ref(after, 3))
			}
			if !strings.Contains(err.Error(), "1 finding of the operator's checks") || !strings.Contains(err.Error(), "nothing was written") {
				t.Errorf("strict: message %q", err)
			}
			if got := readFile(t, root, "notes.txt"); got != text {
				t.Errorf("strict: the refused edit changed the file to %q", got)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if readFile(t, root, "notes.txt") != after {
			t.Fatalf("the advisory check kept the edit from being written")
		}
		if len(r.Diagnostics) != 1 {
			t.Fatalf("diagnostics %+v, want the new TODO only", r.Diagnostics)
		}
		d := r.Diagnostics[0]
		if d.Line.Tag() != ref(after, 3) || d.Line.Content != "new TODO" || d.Column != 3 || d.Message != "a TODO is left" || d.Checker != "awk" || d.Source != engine.SourceCheck {
			t.Errorf("diagnostic %+v", d)
		}
	}
}

// TestCheckCommandOutputWithoutPlaces: a check that exits non-zero with
// output naming no place is one finding holding that output (with the
// copy's path as the workspace's); one that exits non-zero printing
// nothing, or is killed, is not taken: a warning says the change was not
// checked.
func TestCheckCommandOutputWithoutPlaces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, rule string
		diag, warn string
	}{
		{name: "output", rule: `*.txt=sh -c 'echo "$1 is bad: $(cat)"; exit 1' sh {}`, diag: "exited with status 1: notes.txt is bad: b"},
		{name: "the same output before the change", rule: `*.txt=sh -c 'echo "$1 is bad"; exit 1' sh {}`, warn: "not checked by the check command sh: it exited with status 1: notes.txt is bad (as it did on the file before this change)"},
		{name: "silent failure", rule: `*.txt=sh -c 'exit 2'`, warn: "not checked by the check command sh: it exited with status 2 and printed nothing"},
		{name: "killed", rule: `*.txt=sh -c 'kill -9 $$'`, warn: "not checked by the check command sh: it was killed by signal killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := changeEngine(t, map[string]string{"notes.txt": "a\n"}, commands(t, []string{tt.rule}, nil, checkers.Options{TempDir: runDir(t)}))
			r, err := e.Write(t.Context(), &engine.WriteRequest{Path: "notes.txt", Content: "b\n"})
			if err != nil {
				t.Fatal(err)
			}
			if readFile(t, root, "notes.txt") != "b\n" {
				t.Error("not written")
			}
			if tt.diag != "" && (len(r.Diagnostics) != 1 || !strings.HasPrefix(r.Diagnostics[0].Message, tt.diag) || r.Diagnostics[0].Line.Number != 0) {
				t.Errorf("diagnostics %+v, want one %q without a line", r.Diagnostics, tt.diag)
			}
			if tt.warn != "" && (len(r.Diagnostics) != 0 || len(r.Warnings) != 1 || r.Warnings[0] != tt.warn) {
				t.Errorf("diagnostics %+v, warnings %q; want the warning %q", r.Diagnostics, r.Warnings, tt.warn)
			}
		})
	}
}

// TestHangingAndFloodingCheckers: a check command that hangs (its child
// too) is stopped at its time limit, one that floods its output at the
// output limit; the edit is written either way, the reply says it was not
// checked, and the call does not wait for the command's children.
func TestHangingAndFloodingCheckers(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, rule, warn string }{
		{"hang", `*.txt=sh -c 'sleep 60 & sleep 60'`, "not checked by the check command sh: it ran past its 300ms time limit and was stopped"},
		{"flood", `*.txt=yes`, "not checked by the check command yes: it printed more than 4096 bytes, so it was stopped and its output not used"},
		{"flood on stderr", `*.txt=sh -c 'yes >&2'`, "not checked by the check command sh: it printed more than 4096 bytes, so it was stopped and its output not used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := changeEngine(t, map[string]string{"notes.txt": "a\n"}, commands(t, []string{tt.rule}, nil, checkers.Options{TempDir: runDir(t), Timeout: 300 * time.Millisecond, OutputBytes: 4096}))
			start := time.Now()
			r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "notes.txt", Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "b"}}})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the edit took %s", took)
			}
			if got := readFile(t, root, "notes.txt"); got != "a\nb\n" {
				t.Errorf("file %q, want the edit written", got)
			}
			if len(r.Diagnostics) != 0 || !slices.Contains(r.Warnings, tt.warn) {
				t.Errorf("diagnostics %+v, warnings %q; want %q", r.Diagnostics, r.Warnings, tt.warn)
			}
		})
	}
}

// TestFailingFormatter: a formatter that fails (exits non-zero, prints
// nothing, prints a NUL byte, hangs) leaves the content unformatted,
// which is written, and the reply says why.
func TestFailingFormatter(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, rule, warn string }{
		{"exit", `*.txt=sh -c 'echo "cannot parse line 1" >&2; exit 3'`, "not formatted: the format command sh exited with status 3: cannot parse line 1; the content is as it was sent"},
		{"nothing", `*.txt=true`, "not formatted: the format command true printed nothing; the content is as it was sent"},
		{"binary", `*.txt=printf 'a\000b'`, "not formatted: the format command printf printed something that is not UTF-8 text; the content is as it was sent"},
		{"hang", `*.txt=sleep 60`, "not formatted: the format command sleep ran past its 300ms time limit and was stopped; the content is as it was sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := changeEngine(t, map[string]string{"notes.txt": "a\n"}, commands(t, nil, []string{tt.rule}, checkers.Options{TempDir: runDir(t), Timeout: 300 * time.Millisecond}))
			r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "notes.txt", Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "b"}}})
			if err != nil {
				t.Fatal(err)
			}
			got := readFile(t, root, "notes.txt")
			if got != "a\nb\n" || r.Version != workspace.Version([]byte(got)) {
				t.Errorf("file %q (version %s), want the unformatted edit", got, r.Version)
			}
			if !slices.Contains(r.Warnings, tt.warn) {
				t.Errorf("warnings %q, want %q", r.Warnings, tt.warn)
			}
			w, err := e.Write(t.Context(), &engine.WriteRequest{Path: "notes.txt", Content: "c\n"})
			if err != nil || readFile(t, root, "notes.txt") != "c\n" || !slices.Contains(w.Warnings, tt.warn) {
				t.Errorf("write: %v, file %q, warnings %q", err, readFile(t, root, "notes.txt"), w.Warnings)
			}
		})
	}
}

// TestFormatterThatUndoesTheEdit: an edit the formatter turns back into
// the file as it was is refused as a no-op, nothing written.
func TestFormatterThatUndoesTheEdit(t *testing.T) {
	t.Parallel()
	needGofmt(t)
	e, root := changeEngine(t, map[string]string{"main.go": fmtGo}, commands(t, nil, []string{"*.go=gofmt"}, checkers.Options{TempDir: runDir(t)}))
	_, err := e.Edit(t.Context(), &engine.EditRequest{Path: "main.go", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref(fmtGo, 9), Text: "  println(\"hi\")"}}})
	var b *hashline.BatchError
	if !errors.As(err, &b) || b.Reason() != hashline.ReasonNoChange || !strings.Contains(err.Error(), "once formatted with gofmt") {
		t.Fatalf("err %v, want NO_CHANGE naming gofmt", err)
	}
	if got := readFile(t, root, "main.go"); got != fmtGo {
		t.Errorf("file %q", got)
	}
}

// TestCommandsOfOtherGlobsDoNotRun: a file no glob matches is given to
// no command (one that would have left a mark outside the workspace did
// not run), and a glob with "/" matches the path from the root.
func TestCommandsOfOtherGlobsDoNotRun(t *testing.T) {
	t.Parallel()
	marks, err := os.MkdirTemp("", "hashline-marks-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(marks) })
	if err := os.Chmod(marks, 0o777); err != nil {
		t.Fatal(err)
	}
	mark := func(name string) string {
		return `sh -c 'touch ` + filepath.Join(marks, name) + `; cat'`
	}
	opt := commands(t, []string{"*.py=" + mark("check-py"), "docs/*.md=" + mark("check-docs")},
		[]string{"*.py=" + mark("format-py"), "src/**/*.md=" + mark("format-src")}, checkers.Options{TempDir: runDir(t)})
	e, root := changeEngine(t, map[string]string{"a.go": "package a\n", "src/x/readme.md": "# x\n"}, opt)
	if _, err := e.Write(t.Context(), &engine.WriteRequest{Path: "a.go", Content: "package b\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Write(t.Context(), &engine.WriteRequest{Path: "src/x/readme.md", Content: "# y\n"}); err != nil {
		t.Fatal(err)
	}
	got := treeFiles(t, marks)
	if !slices.Equal(got, []string{"format-src"}) {
		t.Errorf("commands run: %q, want the format command of src/**/*.md only", got)
	}
	if readFile(t, root, "a.go") != "package b\n" {
		t.Error("a.go not written as sent")
	}
}

// TestCommandsWriteNothingIntoTheWorkspace: commands that write files in
// their working directory, change the copy they are given and create
// directories leave the workspace holding the edited file alone, with
// the content the edit and the formatter's stdout made; their private
// directories are removed.
func TestCommandsWriteNothingIntoTheWorkspace(t *testing.T) {
	t.Parallel()
	runs := runDir(t)
	opt := commands(t,
		[]string{`*.txt=sh -c 'echo junk > side.txt; mkdir -p sub/dir; echo junk >> "$1"; echo "$1:1:1: seen $(wc -l < "$1")"' sh {}`},
		[]string{`*.txt=sh -c 'echo junk > "$1"; touch .hidden; tr a-z A-Z' sh {}`},
		checkers.Options{TempDir: runs})
	e, root := changeEngine(t, map[string]string{"d/notes.txt": "one\n"}, opt)
	r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "d/notes.txt", Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "two"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, root, "d/notes.txt"); got != "ONE\nTWO\n" {
		t.Errorf("file %q, want the formatter's stdout", got)
	}
	if got := treeFiles(t, root); !slices.Equal(got, []string{"d", "d/notes.txt"}) {
		t.Errorf("the workspace holds %q", got)
	}
	if got := treeFiles(t, runs); len(got) != 0 {
		t.Errorf("the commands' directories are left: %q", got)
	}
	if len(r.Diagnostics) != 1 || r.Diagnostics[0].Message != "seen 3" {
		t.Errorf("diagnostics %+v", r.Diagnostics)
	}
}

// TestCommandsRunWithoutTheServersPrivilegesOrEnvironment: a server
// running as root runs its commands as nobody; none sees the server's
// environment, and each runs in its own directory outside the workspace.
func TestCommandsRunWithoutTheServersPrivilegesOrEnvironment(t *testing.T) {
	t.Setenv("HASHLINE_TEST_SECRET", "s3cret")
	runs := runDir(t)
	e, root := changeEngine(t, map[string]string{"a.txt": "x\n"}, commands(t,
		[]string{`*.txt=sh -c 'echo "-:1: uid=$(id -u) secret=$HASHLINE_TEST_SECRET pwd=$(pwd) home=$HOME $(cat)"'`}, nil, checkers.Options{TempDir: runs}))
	r, err := e.Write(t.Context(), &engine.WriteRequest{Path: "a.txt", Content: "y\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diagnostics) != 1 {
		t.Fatalf("diagnostics %+v, warnings %q", r.Diagnostics, r.Warnings)
	}
	msg := r.Diagnostics[0].Message
	wantUID := "uid=" + map[bool]string{true: "65534", false: strconv.Itoa(os.Geteuid())}[os.Geteuid() == 0]
	if !strings.Contains(msg, wantUID+" ") || !strings.Contains(msg, "secret= ") {
		t.Errorf("message %q, want %s and no secret", msg, wantUID)
	}
	if !strings.Contains(msg, "pwd=$TMPDIR home=$TMPDIR") || strings.Contains(msg, root) {
		t.Errorf("message %q, want the private directory (shown as $TMPDIR) as working directory and home", msg)
	}
}

// TestCheckDryRunAndSet: a dry run reports what the check finds and
// writes nothing; in a set, only the change a check finds problems in
// carries them, and strict refuses the whole set.
func TestCheckDryRunAndSet(t *testing.T) {
	t.Parallel()
	e, root := changeEngine(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, commands(t, []string{todoCheck}, nil, checkers.Options{TempDir: runDir(t)}))
	set := func(dry, strict bool) *engine.ApplyRequest {
		return &engine.ApplyRequest{DryRun: dry, StrictSyntax: strict, Changes: []engine.Change{
			&engine.EditRequest{Path: "a.txt", Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "TODO"}}},
			&engine.WriteRequest{Path: "b.txt", Content: "c\n"},
		}}
	}
	res, err := e.Apply(t.Context(), set(true, false))
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Results[0].(*engine.EditResult).Diagnostics; len(d) != 1 || d[0].Line.Number != 2 || readFile(t, root, "a.txt") != "a\n" {
		t.Errorf("dry run: %+v, file %q", d, readFile(t, root, "a.txt"))
	}
	if _, err := e.Apply(t.Context(), set(false, true)); err == nil || readFile(t, root, "a.txt") != "a\n" || readFile(t, root, "b.txt") != "b\n" {
		t.Errorf("strict set: %v, files %q %q", err, readFile(t, root, "a.txt"), readFile(t, root, "b.txt"))
	}
	res, err = e.Apply(t.Context(), set(false, false))
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Results[0].(*engine.EditResult).Diagnostics; len(d) != 1 {
		t.Errorf("edit diagnostics %+v", d)
	}
	if d := res.Results[1].(*engine.WriteResult).Diagnostics; len(d) != 0 {
		t.Errorf("write diagnostics %+v", d)
	}
}

// TestPrettierAndRuff run the README's examples when the tools are
// installed.
func TestPrettierAndRuff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, rule, path, before, sent, want string
		check                                bool
	}{
		{tool: "prettier", rule: "*.{js,ts,css,md}=prettier --stdin-filepath {}", path: "a.js", before: "let a = 1;\n", sent: "let a=1 ;let b = {x:1}\n", want: "let a = 1;\nlet b = { x: 1 };\n"},
		{tool: "ruff", rule: "*.py=ruff format --stdin-filename {} -", path: "a.py", before: "x = 1\n", sent: "x=[1,2 ,3]\n", want: "x = [1, 2, 3]\n"},
		{tool: "ruff", rule: "*.py=ruff check --output-format=concise --stdin-filename {} -", path: "a.py", before: "x = 1\n", sent: "import os\nx = 1\n", check: true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(tt.tool); err != nil {
				t.Skipf("%s is not installed", tt.tool)
			}
			var opt engine.Option
			if tt.check {
				opt = commands(t, []string{tt.rule}, nil, checkers.Options{TempDir: runDir(t)})
			} else {
				opt = commands(t, nil, []string{tt.rule}, checkers.Options{TempDir: runDir(t)})
			}
			e, root := changeEngine(t, map[string]string{tt.path: tt.before}, opt)
			r, err := e.Write(t.Context(), &engine.WriteRequest{Path: tt.path, Content: tt.sent})
			if err != nil {
				t.Fatal(err)
			}
			if tt.check {
				if len(r.Diagnostics) != 1 || r.Diagnostics[0].Line.Tag() != ref(tt.sent, 1) || !strings.Contains(r.Diagnostics[0].Message, "F401") {
					t.Errorf("diagnostics %+v, warnings %q; want F401 on line 1", r.Diagnostics, r.Warnings)
				}
				return
			}
			if got := readFile(t, root, tt.path); got != tt.want {
				t.Errorf("file %q, want %q (warnings %q)", got, tt.want, r.Warnings)
			}
		})
	}
}

// TestFormattedChangesAreRecordedAsWritten: the history holds the
// formatted bytes as what the edit wrote (its lines, its version, the
// lines blamed on it), and the engine knows them as the file's: a read
// afterwards finds no change made outside the server.
func TestFormattedChangesAreRecordedAsWritten(t *testing.T) {
	t.Parallel()
	needGofmt(t)
	e, ctx, root := withHistory(t, map[string]string{"main.go": fmtGo}, commands(t, nil, []string{"*.go=gofmt"}, checkers.Options{TempDir: runDir(t)}))
	lines := read(t, e, ctx, "main.go").Lines
	r, err := e.Edit(ctx, &engine.EditRequest{Path: "main.go", Edits: []hashline.Edit{
		{Op: hashline.OpInsertAfter, Start: lines[4].Tag(), Text: "\tLonger   float64"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	read(t, e, ctx, "main.go")
	got := entries(t, e, engine.HistoryRequest{Path: "main.go"})
	if len(got) != 1 {
		t.Fatalf("history %+v, want the edit alone (no external change)", got)
	}
	disk := readFile(t, root, "main.go")
	// gofmt realigned lines 4 and 5, and the edit added line 6.
	if f := got[0].Files[0]; f.After != r.Version || f.After != workspace.Version([]byte(disk)) || f.Removed != 2 || f.Added != 3 {
		t.Errorf("entry %+v, want the formatted file's version %s, 2 lines removed and 3 added", f, r.Version)
	}
	blame, err := e.Blame(ctx, engine.BlameRequest{Path: "main.go"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range blame.Lines {
		if on := l.ChangeID == got[0].ID; on != (l.Number >= 4 && l.Number <= 6) {
			t.Errorf("line %d (%s) blamed on %q", l.Number, l.Content, l.ChangeID)
		}
	}
}

// TestCheckCacheIsPerFile: two files of the same content checked by one
// command are checked each as itself: what the command says of one (here
// its name, in output that names no line) is never the other's.
func TestCheckCacheIsPerFile(t *testing.T) {
	t.Parallel()
	e, _ := changeEngine(t, map[string]string{"a.txt": "x\n", "b.txt": "x\n"},
		commands(t, []string{`*.txt=sh -c 'echo "$1 is bad"; exit 1' sh {}`}, nil, checkers.Options{TempDir: runDir(t)}))
	for _, name := range []string{"a.txt", "b.txt"} {
		r, err := e.Write(t.Context(), &engine.WriteRequest{Path: name, Content: "y\n"})
		if err != nil {
			t.Fatal(err)
		}
		want := "not checked by the check command sh: it exited with status 1: " + name + " is bad (as it did on the file before this change)"
		if len(r.Warnings) != 1 || r.Warnings[0] != want {
			t.Errorf("%s: warnings %q, want %q", name, r.Warnings, want)
		}
	}
}
