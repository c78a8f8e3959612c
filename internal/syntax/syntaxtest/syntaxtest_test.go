package syntaxtest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/syntax"
	"github.com/hashline/hashline/internal/syntax/syntaxtest"
)

// The benchmarks time the check of an edit that keeps the file parsing:
// a Source that did not parse, or an EditedLine that broke it, would time
// the other path.
func TestSourceParsesAndEditedLinesKeepItParsing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path  string
		ts    bool
		lines int
	}{
		{"s.go", false, 100},
		{"s.go", false, 10_000},
		{"s.ts", true, 100},
		{"s.ts", true, 10_000},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.path, tc.lines), func(t *testing.T) {
			t.Parallel()
			src := syntaxtest.Source(tc.ts, tc.lines)
			if n := strings.Count(src, "\n"); n < tc.lines-10 || n > tc.lines+10 {
				t.Fatalf("Source has %d lines, want about %d", n, tc.lines)
			}
			if r := syntax.Check(tc.path, nil, []byte(src), syntax.Options{}); r.Status != syntax.Checked || len(r.Diagnostics) > 0 {
				t.Fatalf("Source does not parse: %+v", r)
			}
			lines := strings.SplitAfter(src, "\n")
			edited := 0
			for i, l := range lines {
				body := strings.TrimSuffix(l, "\n")
				e := syntaxtest.EditedLine(body)
				if e == body {
					continue
				}
				edited++
				if edited > 20 {
					break
				}
				after := strings.Join(lines[:i], "") + e + "\n" + strings.Join(lines[i+1:], "")
				if r := syntax.Check(tc.path, []byte(src), []byte(after), syntax.Options{}); r.Status != syntax.Checked || len(r.Diagnostics) > 0 {
					t.Fatalf("line %d edited to %q: %+v", i+1, e, r)
				}
			}
			if edited == 0 {
				t.Fatal("no line of Source has a number EditedLine changes")
			}
		})
	}
}

func TestEditedLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"\t\ttotal += i * 7", "\t\ttotal += i * (7 + 1)"},
		{"\t\ttotal += i * 7;", "\t\ttotal += i * (7 + 1);"},
		{"\treturn total", "\treturn total"},
	} {
		if got := syntaxtest.EditedLine(tc.in); got != tc.want {
			t.Errorf("EditedLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func ExampleEditedLine() {
	fmt.Println(syntaxtest.EditedLine("\t\ttotal += i * 7;"))
	// Output:
	// 		total += i * (7 + 1);
}
