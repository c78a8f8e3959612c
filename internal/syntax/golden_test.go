package syntax_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/syntax"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/edits")

// render is a report as the golden files hold it: the status, then each
// diagnostic with the line of after it names.
func render(r syntax.Report, after []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s", r.Status)
	if r.Reason != "" {
		fmt.Fprintf(&b, " (%s)", r.Reason)
	}
	fmt.Fprintf(&b, "\nchecker: %s\n", r.Checker)
	lines := strings.Split(string(after), "\n")
	for _, d := range r.Diagnostics {
		fmt.Fprintf(&b, "%s\n\t| %s\n", d, lines[d.Line-1])
	}
	return b.String()
}

// TestGolden checks each edit of testdata/edits (CASE/before/FILE.in to
// CASE/after/FILE.in, checked as FILE) against CASE/want.txt. The files end
// in .in so that no tool (gofmt above all) takes the broken ones for
// source.
func TestGolden(t *testing.T) {
	t.Parallel()
	cases, err := filepath.Glob("testdata/edits/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			files, _ := filepath.Glob(filepath.Join(dir, "after", "*"))
			if len(files) != 1 {
				t.Fatalf("want one file in %s/after, have %v", dir, files)
			}
			stored := filepath.Base(files[0])
			name := strings.TrimSuffix(stored, ".in")
			after := read(t, files[0])
			before := read(t, filepath.Join(dir, "before", stored))
			got := render(syntax.Check(name, before, after, syntax.Options{}), after)
			golden := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := string(read(t, golden))
			if got != want {
				t.Errorf("Check(%s) =\n%s\nwant (%s)\n%s", name, got, golden, want)
			}
		})
	}
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(b)
}
