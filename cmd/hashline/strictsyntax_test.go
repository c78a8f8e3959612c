package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStrictSyntax: --strict-syntax on edit, write and apply (and
// strictSyntax in edit's JSON) refuses a change that would break the
// file's parse, leaves the file byte for byte as it was, exits 1 and
// prints the lines that would have been wrong; without it the same edit
// is written and its errors printed.
func TestStrictSyntax(t *testing.T) {
	const src = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": src})
	run := inProcess(dir)
	ref := readTag(t, run, 4)
	unchanged := func(what string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != src {
			t.Fatalf("%s wrote main.go: %q", what, b)
		}
	}
	refused := func(what string, args []string, stdin string) {
		t.Helper()
		out, errOut, code := run(args, stdin)
		unchanged(what)
		if code != exitError {
			t.Errorf("%s: exit %d, want %d\n%s%s", what, code, exitError, out, errOut)
		}
		for _, want := range []string{"nothing was written", "line 4: \tprintln(\"hi\" — missing ',' before newline in argument list (go/parser)"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: stderr\n%s\nlacks %q", what, errOut, want)
			}
		}
	}
	broken := "\tprintln(\"hi\""
	refused("edit --strict-syntax", []string{"edit", "main.go", "--strict-syntax", "--replace", ref, "--text", broken}, "")
	refused("edit with strictSyntax in its JSON", []string{"edit", "main.go"}, `{"strictSyntax": true, "edits": [{"replace": {"start": "`+ref+`", "text": "\tprintln(\"hi\""}}]}`)
	refused("write --strict-syntax", []string{"write", "main.go", "--strict-syntax", "--content", strings.Replace(src, "\"hi\")", "\"hi\"", 1)}, "")
	refused("apply --strict-syntax", []string{"apply", "--strict-syntax"}, `{"changes": [{"write": {"path": "other.go", "content": "package main\n"}}, {"edit": {"path": "main.go", "edits": [{"replace": {"start": "`+ref+`", "text": "\tprintln(\"hi\""}}]}}]}`)
	if _, err := os.Stat(filepath.Join(dir, "other.go")); err == nil {
		t.Error("the refused set wrote other.go")
	}

	// Without the flag the edit is written, and its errors printed.
	out, errOut, code := run([]string{"edit", "main.go", "--replace", ref, "--text", broken}, "")
	if code != exitOK || !strings.Contains(out, "Syntax: this edit introduced") {
		t.Errorf("without --strict-syntax: exit %d\n%s%s", code, out, errOut)
	}
}

// readTag is the LINE:HASH of line n as hashline read prints it.
func readTag(t *testing.T, run func([]string, string) (string, string, int), n int) string {
	t.Helper()
	out, errOut, code := run([]string{"read", "main.go"}, "")
	if code != 0 {
		t.Fatalf("read: exit %d: %s", code, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		tag, _, ok := strings.Cut(strings.TrimSpace(l), "|")
		if ok && strings.HasPrefix(tag, strconv.Itoa(n)+":") {
			return tag
		}
	}
	t.Fatalf("no line %d in\n%s", n, out)
	return ""
}
