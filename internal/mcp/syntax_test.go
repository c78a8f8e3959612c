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
