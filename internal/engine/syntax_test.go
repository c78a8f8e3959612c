package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/syntax"
)

const goodGo = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

// breakGo is the edit of goodGo that drops line 4's closing parenthesis.
func breakGo() []hashline.Edit {
	return []hashline.Edit{{Op: hashline.OpReplace, Start: ref(goodGo, 4), Text: "\tprintln(\"hi\""}}
}

const brokenGo = "package main\n\nfunc main() {\n\tprintln(\"hi\"\n}\n"

// TestSyntaxCheckOfAnEdit: an edit that breaks a Go file's parse is
// written and reported (advisory, the default), with the fresh ref of the
// line in the new file, or refused with the file left byte for byte as it
// was (strict, asked by the request, the engine's mode or a glob).
func TestSyntaxCheckOfAnEdit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   []engine.Option
		req    engine.EditRequest
		strict bool // refused
	}{
		{name: "advisory by default"},
		{name: "dry run", req: engine.EditRequest{DryRun: true}},
		{name: "the request asks for strict", req: engine.EditRequest{StrictSyntax: true}, strict: true},
		{name: "strict mode", opts: []engine.Option{engine.WithSyntax(engine.SyntaxStrict)}, strict: true},
		{name: "a strict glob of the name", opts: []engine.Option{engine.WithSyntax(engine.SyntaxAdvisory, "*.txt", "*.go")}, strict: true},
		{name: "a strict glob of the path", opts: []engine.Option{engine.WithSyntax(engine.SyntaxAdvisory, "cmd/**/*.go")}, strict: true},
		{name: "a glob of another path", opts: []engine.Option{engine.WithSyntax(engine.SyntaxAdvisory, "internal/**")}},
		{name: "off, asked strict by the request", opts: []engine.Option{engine.WithSyntax(engine.SyntaxOff)}, req: engine.EditRequest{StrictSyntax: true}, strict: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := changeEngine(t, map[string]string{"cmd/x/main.go": goodGo}, tt.opts...)
			req := tt.req
			req.Path, req.Edits = "cmd/x/main.go", breakGo()
			r, err := e.Edit(t.Context(), &req)
			if tt.strict {
				var se *engine.SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("err %v, want a *SyntaxError", err)
				}
				if got := readFile(t, root, "cmd/x/main.go"); got != goodGo {
					t.Errorf("the refused edit changed the file:\n%s", got)
				}
				if len(se.Diagnostics) == 0 || se.Diagnostics[0].Line.Tag() != ref(brokenGo, se.Diagnostics[0].Line.Number) {
					t.Errorf("diagnostics %+v, want the lines of the content refused", se.Diagnostics)
				}
				if !strings.Contains(err.Error(), "nothing was written") || !strings.Contains(err.Error(), "line 5: }") {
					t.Errorf("message %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := brokenGo
			if req.DryRun {
				want = goodGo
			}
			if got := readFile(t, root, "cmd/x/main.go"); got != want {
				t.Errorf("file %q, want %q", got, want)
			}
			// go/parser finds the missing ")" at the newline ending line 4,
			// and then the "}" of line 5 where an operand should be.
			if len(r.Diagnostics) != 2 || r.SyntaxNotChecked != "" {
				t.Fatalf("diagnostics %+v (not checked %q), want two", r.Diagnostics, r.SyntaxNotChecked)
			}
			if d := r.Diagnostics[1]; d.Line.Tag() != ref(brokenGo, 5) || d.Line.Content != "}" {
				t.Errorf("second diagnostic %+v, want line 5 as %s", d, ref(brokenGo, 5))
			}
			d := r.Diagnostics[0]
			if d.Line.Number != 4 || d.Line.Tag() != ref(brokenGo, 4) || d.Line.Content != "\tprintln(\"hi\"" || d.Checker != syntax.CheckerGo || d.Column == 0 || d.Message == "" {
				t.Errorf("diagnostic %+v, want line 4 as %s", d, ref(brokenGo, 4))
			}
		})
	}
}

// TestSyntaxCheckReportsOnlyNewErrors: an error the file had before the
// edit is not the edit's, and does not refuse it even when strict.
func TestSyntaxCheckReportsOnlyNewErrors(t *testing.T) {
	t.Parallel()
	e, root := changeEngine(t, map[string]string{"main.go": brokenGo}, engine.WithSyntax(engine.SyntaxStrict))
	r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "main.go", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref(brokenGo, 3), Text: "func run() {"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diagnostics) != 0 || r.SyntaxNotChecked != "" {
		t.Errorf("diagnostics %+v (not checked %q), want none", r.Diagnostics, r.SyntaxNotChecked)
	}
	if got := readFile(t, root, "main.go"); !strings.Contains(got, "func run() {") {
		t.Errorf("file %q", got)
	}
}

// TestSyntaxCheckOfASet: a set of two edits, one of which breaks its
// file: advisory, both are written and only the broken one reports;
// strict, the set is refused naming that change, and neither file changes.
func TestSyntaxCheckOfASet(t *testing.T) {
	t.Parallel()
	const good2 = "{\"a\": 1}\n"
	set := func(strict bool) *engine.ApplyRequest {
		return &engine.ApplyRequest{StrictSyntax: strict, Changes: []engine.Change{
			&engine.EditRequest{Path: "b.json", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref(good2, 1), Text: "{\"a\": 2}"}}},
			&engine.EditRequest{Path: "a.go", Edits: breakGo()},
			&engine.WriteRequest{Path: "c.json", Content: "{\"c\": [1, 2}\n"},
		}}
	}
	files := map[string]string{"a.go": goodGo, "b.json": good2}
	t.Run("advisory", func(t *testing.T) {
		t.Parallel()
		e, root := changeEngine(t, files)
		res, err := e.Apply(t.Context(), set(false))
		if err != nil {
			t.Fatal(err)
		}
		if d := res.Results[0].(*engine.EditResult).Diagnostics; len(d) != 0 {
			t.Errorf("the good edit reports %+v", d)
		}
		if d := res.Results[1].(*engine.EditResult).Diagnostics; len(d) != 2 || d[0].Line.Tag() != ref(brokenGo, 4) {
			t.Errorf("the broken edit reports %+v, want line 4 as %s", d, ref(brokenGo, 4))
		}
		w := res.Results[2].(*engine.WriteResult)
		if len(w.Diagnostics) != 1 || w.Diagnostics[0].Line.Tag() != ref("{\"c\": [1, 2}\n", 1) || w.Diagnostics[0].Checker != syntax.CheckerJSON {
			t.Errorf("the broken write reports %+v", w.Diagnostics)
		}
		if readFile(t, root, "a.go") != brokenGo {
			t.Error("the advisory set did not write a.go")
		}
	})
	t.Run("strict", func(t *testing.T) {
		t.Parallel()
		e, root := changeEngine(t, files)
		_, err := e.Apply(t.Context(), set(true))
		var se *engine.ChangeSetError
		if !errors.As(err, &se) || len(se.Failures) != 2 || se.Failures[0].Index != 1 || se.Failures[1].Index != 2 {
			t.Fatalf("err %v, want changes 1 and 2 refused", err)
		}
		var syn *engine.SyntaxError
		if !errors.As(se.Failures[0].Err, &syn) || syn.Path != "a.go" {
			t.Errorf("failure %v, want a *SyntaxError of a.go", se.Failures[0].Err)
		}
		for p, want := range files {
			if got := readFile(t, root, p); got != want {
				t.Errorf("%s changed to %q", p, got)
			}
		}
		if got := readFile(t, root, "c.json"); !strings.HasPrefix(got, "<") {
			t.Errorf("c.json was written: %q", got)
		}
	})
}

// TestSyntaxNotChecked: a file the checker gives up on (too large, a
// parser out of time) is edited all the same, even under strict checking,
// and the result says why it was not checked; prose and the check turned
// off say nothing.
func TestSyntaxNotChecked(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	big.WriteString("package main\n\n")
	for i := range 2000 {
		fmt.Fprintf(&big, "func f%d() int {\n\treturn %d\n}\n\n", i, i)
	}
	tests := []struct {
		name, path, text, want string
		opts                   []engine.Option
	}{
		{name: "too large", path: "a.go", text: goodGo, want: "larger than 10 bytes",
			opts: []engine.Option{engine.WithSyntaxOptions(syntax.Options{MaxBytes: 10})}},
		{name: "out of time", path: "a.go", text: big.String(), want: "ran out of time",
			opts: []engine.Option{engine.WithSyntaxOptions(syntax.Options{Timeout: time.Nanosecond})}},
		{name: "prose", path: "a.md", text: "# (\n"},
		{name: "off", path: "a.go", text: goodGo, opts: []engine.Option{engine.WithSyntax(engine.SyntaxOff)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := append([]engine.Option{engine.WithSyntax(engine.SyntaxStrict)}, tt.opts...)
			if tt.name == "off" {
				opts = tt.opts
			}
			e, root := changeEngine(t, map[string]string{tt.path: tt.text}, opts...)
			r, err := e.Edit(t.Context(), &engine.EditRequest{Path: tt.path, Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "func broken() {"}}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.SyntaxNotChecked, tt.want) || (tt.want == "") != (r.SyntaxNotChecked == "") || len(r.Diagnostics) != 0 {
				t.Errorf("not checked %q, diagnostics %+v; want %q", r.SyntaxNotChecked, r.Diagnostics, tt.want)
			}
			if got := readFile(t, root, tt.path); !strings.HasSuffix(got, "func broken() {\n") {
				t.Errorf("the edit was not written: ...%q", got[max(len(got)-40, 0):])
			}
		})
	}
}

// TestSyntaxCheckOfAWrite: a write reports the errors its content has
// that the file it replaces had not; a new file's are all new.
func TestSyntaxCheckOfAWrite(t *testing.T) {
	t.Parallel()
	e, root := changeEngine(t, map[string]string{"old.yaml": "a: [1\n"})
	r, err := e.Write(t.Context(), &engine.WriteRequest{Path: "old.yaml", Content: "b: [1\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diagnostics) != 0 {
		t.Errorf("the replaced file's error is reported as new: %+v", r.Diagnostics)
	}
	r, err = e.Write(t.Context(), &engine.WriteRequest{Path: "new.yaml", Content: "ok: 1\nb: [1\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diagnostics) != 1 || r.Diagnostics[0].Checker != syntax.CheckerYAML || r.Diagnostics[0].Line.Hash == "" {
		t.Errorf("new file: diagnostics %+v, want the YAML error", r.Diagnostics)
	}
	_, err = e.Write(t.Context(), &engine.WriteRequest{Path: "strict.yaml", Content: "b: [1\n", StrictSyntax: true})
	var se *engine.SyntaxError
	if !errors.As(err, &se) || se.Kind != "write" {
		t.Errorf("err %v, want a *SyntaxError of a write", err)
	}
	if got := readFile(t, root, "strict.yaml"); !strings.HasPrefix(got, "<") {
		t.Errorf("the refused write made the file: %q", got)
	}
}

// TestSyntaxDiagnosticsFitTheResponseLimit: diagnostics found beside the
// write, after the response's size was checked, are left out of a reply
// they would take over the limit, which then says so; the edit is written.
func TestSyntaxDiagnosticsFitTheResponseLimit(t *testing.T) {
	t.Parallel()
	size := func(r any) int {
		if e, ok := r.(*engine.EditResult); ok && len(e.Diagnostics) > 0 {
			return 1000
		}
		return 10
	}
	e, root := changeEngine(t, map[string]string{"main.go": goodGo}, engine.WithResponseSize(size), engine.WithMaxResponseBytes(100))
	r, err := e.Edit(t.Context(), &engine.EditRequest{Path: "main.go", Edits: breakGo()})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diagnostics) != 0 || len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "2 syntax errors found were left out of this reply") {
		t.Errorf("diagnostics %+v, warnings %q", r.Diagnostics, r.Warnings)
	}
	if readFile(t, root, "main.go") != brokenGo {
		t.Error("the edit was not written")
	}
}
