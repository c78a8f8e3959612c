package syntax_test

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/syntax"
)

func TestLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path string
		want syntax.Lang
	}{
		{"main.go", syntax.LangGo},
		{"a/b/App.TSX", syntax.LangTSX},
		{"x.ts", syntax.LangTS},
		{"x.mts", syntax.LangTS},
		{"x.jsx", syntax.LangJSX},
		{"x.cjs", syntax.LangJS},
		{"package.json", syntax.LangJSON},
		{"tsconfig.json", syntax.LangJSONC},
		{"web/tsconfig.app.json", syntax.LangJSONC},
		{".vscode/settings.json", syntax.LangJSONC},
		{"x.jsonc", syntax.LangJSONC},
		{"ci.yml", syntax.LangYAML},
		{"ci.YAML", syntax.LangYAML},
		{"README.md", syntax.LangProse},
		{"README", syntax.LangProse},
		{"main.c", syntax.LangOther},
		{"Makefile", syntax.LangOther},
		{"noext", syntax.LangOther},
	} {
		if got := syntax.Language(tc.path); got != tc.want {
			t.Errorf("Language(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestHunk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, before, after string
		first, bLast, aLast int
	}{
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", 2, 2, 2},
		{"line inserted", "a\nc\n", "a\nb\nc\n", 2, 1, 2},
		{"line deleted", "a\nb\nc\n", "a\nc\n", 2, 2, 1},
		{"appended", "a\n", "a\nb\n", 2, 1, 2},
		{"last line without newline changed", "a\nb", "a\nc", 2, 2, 2},
		{"newline added at the end", "a\nb", "a\nb\n", 2, 2, 2},
		{"from empty", "", "a\nb\n", 1, 0, 2},
		{"to empty", "a\n", "", 1, 1, 0},
		{"mid-line insert", "abc\ndef\n", "abXc\ndef\n", 1, 1, 1},
		{"two lines joined", "ab\ncd\nef\n", "abcd\nef\n", 1, 2, 1},
	} {
		first, bLast, aLast := syntax.Hunk([]byte(tc.before), []byte(tc.after))
		if first != tc.first || bLast != tc.bLast || aLast != tc.aLast {
			t.Errorf("%s: Hunk = %d, %d, %d; want %d, %d, %d", tc.name, first, bLast, aLast, tc.first, tc.bLast, tc.aLast)
		}
	}
}

// diagsAt is a parser that reports an error on each line holding "ERR".
func diagsAt(src []byte) []syntax.Diagnostic {
	var ds []syntax.Diagnostic
	for i, l := range strings.Split(string(src), "\n") {
		if j := strings.Index(l, "ERR"); j >= 0 {
			ds = append(ds, syntax.Diagnostic{Line: i + 1, Column: j + 1, Message: l[j:], Checker: "test"})
		}
	}
	return ds
}

// TestIntroduced: an error is new unless one with its message stood on
// the line it maps from in before.
func TestIntroduced(t *testing.T) {
	t.Parallel()
	opts := syntax.WithParser(syntax.Options{}, diagsAt)
	for _, tc := range []struct {
		name, before, after string
		want                []int // lines
	}{
		{"new error", "a\nb\n", "a\nERR x\n", []int{2}},
		{"kept error", "ERR x\nb\n", "ERR x\nB\n", nil},
		{"moved down", "a\nERR x\n", "new\nlines\na\nERR x\n", nil},
		{"moved up", "a\nb\nc\nERR x\n", "c\nERR x\n", nil},
		{"rewritten line keeps its error", "a\nERR x y\n", "a\nERR x y\n\n", nil},
		{"same message elsewhere is new", "ERR x\na\nb\n", "ERR x\na\nERR x\n", []int{3}},
		{"one of two alike is new", "ERR x\n", "ERR x\nERR x\n", []int{2}},
		{"different message on the same line", "ERR x\n", "ERR y\n", []int{1}},
		{"new file: all", "", "ERR x\nok\nERR y\n", []int{1, 3}},
		{"error fixed", "ERR x\n", "x\n", nil},
	} {
		r := syntax.Check("f.go", []byte(tc.before), []byte(tc.after), opts)
		var got []int
		for _, d := range r.Diagnostics {
			got = append(got, d.Line)
		}
		if r.Status != syntax.Checked || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v %q, lines %v; want checked, lines %v", tc.name, r.Status, r.Reason, got, tc.want)
		}
	}
}

// TestParserFails: a parser that panics or runs past the budget leaves the
// content not checked, with the reason, and Check returns in time.
func TestParserFails(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var running atomic.Int32
	for _, tc := range []struct {
		name   string
		parse  func([]byte) []syntax.Diagnostic
		reason string
	}{
		{"panics", func([]byte) []syntax.Diagnostic { panic("boom") }, "the parser failed: boom"},
		{"runtime error", func(src []byte) []syntax.Diagnostic {
			return []syntax.Diagnostic{{Line: int(src[len(src)])}}
		}, "the parser failed: runtime error: index out of range [2] with length 2"},
		{"blocks", func([]byte) []syntax.Diagnostic {
			running.Add(1)
			<-release
			return nil
		}, "the parser ran out of time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := syntax.WithParser(syntax.Options{Timeout: 50 * time.Millisecond}, tc.parse)
			start := time.Now()
			r := syntax.Check("f.go", []byte("a\n"), []byte("b\n"), opts)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Check took %v", took)
			}
			if r.Status != syntax.NotChecked || r.Reason != tc.reason || len(r.Diagnostics) != 0 {
				t.Errorf("Check = %+v; want not checked: %s", r, tc.reason)
			}
		})
	}
}

func TestNotChecked(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x := 1\n", 100)
	for _, tc := range []struct {
		name, path, before, after string
		opts                      syntax.Options
		reason                    string
	}{
		{"too large", "f.go", "", big, syntax.Options{MaxBytes: 100}, "the file is larger than 100 bytes"},
		{"binary", "f.go", "", "package p\x00", syntax.Options{}, "the file is not UTF-8 text"},
		{"latin-1", "f.txt.c", "", "caf\xe9 (\n", syntax.Options{}, "the file is not UTF-8 text"},
		{"prose", "notes.md", "", "(\n", syntax.Options{}, "prose: no syntax to check"},
	} {
		r := syntax.Check(tc.path, []byte(tc.before), []byte(tc.after), tc.opts)
		if r.Status != syntax.NotChecked || r.Reason != tc.reason {
			t.Errorf("%s: %+v; want not checked: %s", tc.name, r, tc.reason)
		}
	}
	// A before that is not text is compared as if empty: every error is new.
	r := syntax.Check("f.go", []byte("\xff\xfe"), []byte("package p\nfunc {\n"), syntax.Options{})
	if r.Status != syntax.Checked || len(r.Diagnostics) == 0 {
		t.Errorf("binary before: %+v; want the errors of after", r)
	}
	// Only the changed lines of before are looked at (the rest is after's,
	// which is text): a NUL or a bad byte there makes it not text too.
	for _, bad := range []string{"\xff", "\x00"} {
		before := "package p\n\nvar a = (1\nvar b = " + bad + "\nvar c = 3\n"
		after := "package p\n\nvar a = (1\nvar b = 2\nvar c = 3\n"
		r = syntax.Check("f.go", []byte(before), []byte(after), syntax.Options{})
		if r.Status != syntax.Checked || len(r.Diagnostics) == 0 {
			t.Errorf("before with %q in its changed line: %+v; want the errors of after, the one it kept included", bad, r)
		}
	}
}

// TestBalance: the balance check reports a change from balanced, and
// nothing for brackets in strings and comments of the languages it knows.
func TestBalance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, before, after string
		want                      []string // "line:col"
	}{
		{"unclosed paren", "a.c", "f(x);\n", "f(x;\n", []string{"1:2"}},
		{"extra close", "a.c", "f(x);\n", "f(x));\n", []string{"1:5"}},
		{"lost closing brace line", "a.java", "class A {\n  void f() {\n  }\n}\n", "class A {\n  void f() {\n}\n", []string{"3:1"}},
		{"bracket in string", "a.c", "s = \"x\";\n", "s = \"(\";\n", nil},
		{"bracket in char", "a.c", "c = 'x';\n", "c = '(';\n", nil},
		{"bracket in escaped string", "a.c", "s = \"\\\"\";\n", "s = \"\\\"(\";\n", nil},
		{"bracket in line comment", "a.c", "x; // y\n", "x; // (y\n", nil},
		{"bracket in block comment", "a.c", "/*\n*/\n", "/*\n(\n*/\n", nil},
		{"bracket in python string", "a.py", "s = 'x'\n", "s = '['\n", nil},
		{"bracket in python comment", "a.py", "x = 1  # y\n", "x = 1  # (y\n", nil},
		{"bracket in python triple string", "a.py", "s = \"\"\"\nx\n\"\"\"\n", "s = \"\"\"\n(x\n\"\"\"\n", nil},
		{"python unclosed triple string", "a.py", "s = 1\n", "s = \"\"\"\n", []string{"1:5"}},
		{"shell case pattern", "a.sh", "case $x in\n  a) echo a ;;\nesac\n", "case $x in\n  a) echo a ;;\n  b) echo b ;;\nesac\n", nil},
		{"rust lifetime", "a.rs", "fn f() {}\n", "fn f<'a>() {}\n", nil},
		{"already unbalanced", "a.c", "f(\n", "f((\n", nil},
		{"new file", "a.c", "", "f(\n", nil},
		{"balance restored", "a.c", "f(\n", "f()\n", nil},
		{"unknown: unclosed", "a.zzz", "(a)\n", "(a\n", []string{"1:1"}},
		{"unknown: no special bytes changed", "a.zzz", "(a\nb\n", "(a\nc\n", nil},
		{"stray quote", "a.c", "x = 1;\n", "x = \"1;\n", []string{"1:5"}},
		{"moved bracket", "a.c", "f(a,\n  b);\n", "f(\n  a, b);\n", nil},
	} {
		got := []string{}
		for _, d := range syntax.Balance(tc.path, []byte(tc.before), []byte(tc.after)) {
			got = append(got, fmt.Sprintf("%d:%d", d.Line, d.Column))
		}
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}
}
