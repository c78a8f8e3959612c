package syntax_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/syntax"
)

// FuzzBalance: the balance check never panics and every diagnostic it
// gives names a line and column of after.
func FuzzBalance(f *testing.F) {
	for _, s := range [][3]string{
		{"a.c", "f(x);\n", "f(x;\n"},
		{"a.py", "s = '''\n(\n'''\n", "s = '''\n(\n''\n"},
		{"a.c", "/* ( */\n", "/* ( \n"},
		{"a.zzz", "[x]\n", "[x\n"},
		{"a.sh", "# (\n", "x # (\n"},
		{"a.html", "<!-- { -->", "<!-- { ->"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, name, before, after string) {
		for _, d := range syntax.Balance(name, []byte(before), []byte(after)) {
			inside(t, d, after)
		}
	})
}

// FuzzCheck: Check never panics, and every diagnostic names a line and
// column of after, for every language.
func FuzzCheck(f *testing.F) {
	f.Add(0, "package p\nfunc f() {}\n", "package p\nfunc f() {\n")
	f.Add(1, "const x = 1;\n", "const x = (1;\n")
	f.Add(2, "{\"a\": 1}\n", "{\"a\": 1,}\n")
	f.Add(3, "a:\n  b: 1\n", "a:\n  b: 1\n   c: 2\n")
	f.Add(4, "f(x)\n", "f(x\n")
	f.Add(5, "{\n  // c\n  \"a\": 1,\n}\n", "{\n  /* c\n  \"a\": 1,\n}\n")
	names := []string{"f.go", "f.tsx", "f.json", "f.yaml", "f.c", "tsconfig.json", "f.js", "f.py"}
	f.Fuzz(func(t *testing.T, lang int, before, after string) {
		name := names[uint(lang)%uint(len(names))]
		r := syntax.Check(name, []byte(before), []byte(after), syntax.Options{Timeout: 10 * time.Second, ChunkBytes: 64})
		if r.Status == syntax.NotChecked {
			if r.Reason == "" || len(r.Diagnostics) > 0 {
				t.Fatalf("%+v", r)
			}
			return
		}
		for _, d := range r.Diagnostics {
			inside(t, d, after)
			if d.Message == "" || d.Checker == "" {
				t.Fatalf("diagnostic without message or checker: %+v", d)
			}
		}
	})
}

// inside fails t unless d names a line of after and, when it gives one, a
// column within that line (or just past its end, where an error at the
// end of a line or of the file stands).
func inside(t *testing.T, d syntax.Diagnostic, after string) {
	t.Helper()
	lines := strings.Split(after, "\n")
	if strings.HasSuffix(after, "\n") {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		lines = []string{""}
	}
	if d.Line < 1 || d.Line > len(lines) {
		t.Fatalf("line %d outside after's %d lines: %+v", d.Line, len(lines), d)
	}
	if d.Column < 0 || d.Column > len(lines[d.Line-1])+1 {
		t.Fatalf("column %d outside line %d (%q): %+v", d.Column, d.Line, lines[d.Line-1], d)
	}
}
