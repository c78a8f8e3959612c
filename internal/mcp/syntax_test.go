package mcp_test

import (
	"strings"
	"testing"
)

const goMain = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

// TestEditFileReportsSyntaxErrors: an edit that breaks a Go file's parse is
// written, and the reply says so in one line with the broken line's fresh
// ref, which edits it next.
func TestEditFileReportsSyntaxErrors(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("main.go", goMain)
			r := s.refs("main.go")
			got := s.ok("edit_file", map[string]any{"path": "main.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": r[4], "new_text": "\tprintln(\"hi\""}},
			}})
			broken := strings.Replace(goMain, "\"hi\")", "\"hi\"", 1)
			if s.read("main.go") != broken {
				t.Fatalf("file = %q, want %q", s.read("main.go"), broken)
			}
			fresh := s.refs("main.go")
			want := "Syntax: this edit introduced 2 errors (go/parser): " + fresh[4] + "|\tprintln(\"hi\" — missing ',' before newline in argument list; " + fresh[5] + "|} — expected operand, found '}'"
			if !strings.HasSuffix(got, "```\n"+want) {
				t.Errorf("reply\n%s\nwant it to end with\n%s", got, want)
			}
			// The ref fixes the line.
			s.ok("edit_file", map[string]any{"path": "main.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": fresh[4], "new_text": "\tprintln(\"hi\")"}},
			}})
			if s.read("main.go") != goMain {
				t.Errorf("file = %q after the fix", s.read("main.go"))
			}
		})
	}
}

// TestEditFileDryRun: dry_run replies with the tagged diff and the syntax
// errors the edit would introduce, and writes nothing; for one file and
// for several.
func TestEditFileDryRun(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("main.go", goMain)
			s.write("b.txt", "x\n")
			r := s.refs("main.go")
			rb := s.refs("b.txt")
			edit := []map[string]any{{"delete": map[string]any{"start_anchor": r[5]}}}
			got := s.ok("edit_file", map[string]any{"path": "main.go", "dry_run": true, "edits": edit})
			if s.read("main.go") != goMain {
				t.Errorf("the dry run wrote main.go: %q", s.read("main.go"))
			}
			for _, want := range []string{"Dry run, nothing written: main.go (4 lines).", "-}", "Syntax: this edit would introduce 1 error (go/parser): " + r[4] + "|\tprintln(\"hi\") — expected '}', found 'EOF'"} {
				if !strings.Contains(got, want) {
					t.Errorf("dry run reply\n%s\nlacks %q", got, want)
				}
			}
			got = s.ok("edit_file", map[string]any{"dry_run": true, "files": []map[string]any{
				{"path": "main.go", "edits": edit},
				{"path": "b.txt", "edits": []map[string]any{{"set_line": map[string]any{"anchor": rb[1], "new_text": "y"}}}},
			}})
			if s.read("main.go") != goMain || s.read("b.txt") != "x\n" {
				t.Errorf("the dry run of files wrote: %q, %q", s.read("main.go"), s.read("b.txt"))
			}
			for _, want := range []string{"Dry run, nothing written: main.go", "Syntax: this edit would introduce 1 error", "Dry run, nothing written: b.txt"} {
				if !strings.Contains(got, want) {
					t.Errorf("dry run of files reply\n%s\nlacks %q", got, want)
				}
			}
		})
	}
}

// TestStrictSyntaxRefusesAndWritesNothing: strict_syntax on edit_file
// (one file and several) and on write_file refuses a change that would
// break the file's parse, leaves every file byte for byte as it was, and
// says which lines would have been wrong; without it the same edit is
// written (the server's mode, advisory, decides).
func TestStrictSyntaxRefusesAndWritesNothing(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("main.go", goMain)
			s.write("b.txt", "x\n")
			r := s.refs("main.go")
			rb := s.refs("b.txt")
			broken := []map[string]any{{"set_line": map[string]any{"anchor": r[4], "new_text": "\tprintln(\"hi\""}}}
			unchanged := func(what string) {
				t.Helper()
				if s.read("main.go") != goMain || s.read("b.txt") != "x\n" {
					t.Fatalf("%s wrote: %q, %q", what, s.read("main.go"), s.read("b.txt"))
				}
			}
			wantLines := []string{"nothing was written", "line 4: \tprintln(\"hi\" — missing ',' before newline in argument list (go/parser)"}
			check := func(what, got string) {
				t.Helper()
				for _, w := range wantLines {
					if !strings.Contains(got, w) {
						t.Errorf("%s: reply\n%s\nlacks %q", what, got, w)
					}
				}
			}
			got := s.fail("edit_file", map[string]any{"path": "main.go", "strict_syntax": true, "edits": broken})
			unchanged("edit_file with strict_syntax")
			check("edit_file", got)

			got = s.fail("edit_file", map[string]any{"strict_syntax": true, "files": []map[string]any{
				{"path": "b.txt", "edits": []map[string]any{{"set_line": map[string]any{"anchor": rb[1], "new_text": "y"}}}},
				{"path": "main.go", "edits": broken},
			}})
			unchanged("edit_file files with strict_syntax")
			check("edit_file files", got)

			got = s.fail("write_file", map[string]any{"path": "main.go", "strict_syntax": true, "content": strings.Replace(goMain, "\"hi\")", "\"hi\"", 1)})
			unchanged("write_file with strict_syntax")
			check("write_file", got)

			// A change that keeps the parse is written under strict_syntax.
			s.ok("write_file", map[string]any{"path": "main.go", "strict_syntax": true, "content": strings.Replace(goMain, "hi", "ho", 1)})
			if s.read("main.go") != strings.Replace(goMain, "hi", "ho", 1) {
				t.Errorf("a clean write under strict_syntax gave %q", s.read("main.go"))
			}
			// Without it the broken edit is written, with its diagnostics.
			r = s.refs("main.go")
			got = s.ok("edit_file", map[string]any{"path": "main.go", "edits": []map[string]any{{"set_line": map[string]any{"anchor": r[4], "new_text": "\tprintln(\"ho\""}}}})
			if !strings.Contains(got, "Syntax: this edit introduced") || s.read("main.go") == strings.Replace(goMain, "hi", "ho", 1) {
				t.Errorf("without strict_syntax: reply\n%s\nfile %q", got, s.read("main.go"))
			}
		})
	}
}
