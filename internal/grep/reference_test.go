package grep

import (
	"fmt"
	"io/fs"
	"reflect"
	"testing"
)

// TestSearchMatchesNaiveScan runs many patterns over a random tree and
// compares every emitted file, line and count with a per-line regexp scan.
func TestSearchMatchesNaiveScan(t *testing.T) {
	dir := t.TempDir()
	files := randomTree(t, dir, 1, 300)
	patterns := []struct {
		pattern         string
		literal, ignore bool
		// everywhere marks patterns that match nearly every line: one
		// context setting is enough for them, and they are the slow ones.
		everywhere bool
	}{
		{pattern: "func main"},
		{pattern: "func main", literal: true},
		{pattern: "func main", ignore: true},
		{pattern: "func main()", literal: true, ignore: true},
		{pattern: `(Context|Deadline)\(`},
		{pattern: `(?i)(context|deadline)\(`},
		{pattern: `\w+_test\b`},
		{pattern: `_test\.go$`},
		{pattern: `^func`},
		{pattern: `main$`},
		{pattern: `^$`},
		{pattern: `^\s*$`},
		{pattern: `colou?r`},
		{pattern: `colou?r`, ignore: true},
		{pattern: `[0-9]+`},
		{pattern: `4[0-9]`},
		{pattern: `task`, ignore: true},
		{pattern: `sk`, ignore: true},
		{pattern: `kelvin`, ignore: true},
		{pattern: `\x{212A}`, ignore: true},
		{pattern: `stra\x{DF}e`, ignore: true},
		{pattern: `\x{E0}b`, ignore: true},
		{pattern: `\x{3C3}`, ignore: true},
		{pattern: `\p{Greek}+`},
		{pattern: `\x{E9}t\x{E9}`},
		{pattern: "\u00a0"},
		{pattern: `x*`, everywhere: true},
		{pattern: `.`, everywhere: true},
		{pattern: ``, everywhere: true},
		{pattern: `a\nb`},
		{pattern: `\r`},
		{pattern: `nil|return|package`},
		{pattern: `(a|b)(x|y)`},
		{pattern: `\bx\b`},
		{pattern: `{`, literal: true},
		{pattern: `.*`, literal: true},
		{pattern: `(?i)FUNC|(?-i)main`},
		{pattern: "\uFEFF"},
	}
	contexts := []struct{ before, after int }{{0, 0}, {2, 1}, {3, 3}}
	for _, p := range patterns {
		for i, c := range contexts {
			if p.everywhere && i != 1 {
				continue
			}
			for _, limit := range []int{1 << 30, 5} {
				opts := Options{
					Pattern: p.pattern, Literal: p.literal, CaseInsensitive: p.ignore,
					Before: c.before, After: c.after, MaxMatches: limit, Hidden: true, NoIgnore: true,
				}
				name := fmt.Sprintf("%q literal=%v i=%v context=%d,%d limit=%d", p.pattern, p.literal, p.ignore, c.before, c.after, limit)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					compareWithNaive(t, dir, files, opts)
				})
			}
		}
	}
}

// TestFiltersMatchNaiveScan compares searches with every filter (hidden
// files, .gitignore files, globs, types) and their combinations with the
// reference, whose filters are written out by hand.
func TestFiltersMatchNaiveScan(t *testing.T) {
	dir := t.TempDir()
	files := randomTree(t, dir, 2, 400)
	filters := []struct {
		name string
		opts Options
	}{
		{"defaults: hidden files, .git and ignored files skipped", Options{}},
		{"hidden files searched", Options{Hidden: true}},
		{"ignore files disregarded", Options{NoIgnore: true}},
		{"hidden and ignored files searched", Options{Hidden: true, NoIgnore: true}},
		{"a base-name glob", Options{Globs: []string{"*.go"}}},
		{"a ** glob", Options{Globs: []string{"a/**"}, Hidden: true}},
		{"two globs", Options{Globs: []string{"*.go", "*.md"}, NoIgnore: true}},
		{"an exclude glob with **", Options{ExcludeGlobs: []string{"**/c/**"}}},
		{"include and exclude globs", Options{Globs: []string{"a/**"}, ExcludeGlobs: []string{"*.go"}}},
		{"a type", Options{Types: []string{"go"}}},
		{"two types", Options{Types: []string{"md", "sh"}, NoIgnore: true}},
		{"an alias of a type", Options{Types: []string{"typescript"}, Hidden: true}},
		{"a type and a glob both apply", Options{Types: []string{"go"}, Globs: []string{"a/**"}}},
	}
	patterns := []Options{
		{Pattern: "func main"},
		{Pattern: "task", CaseInsensitive: true},
		{Pattern: `\w+_test\b`},
		{Pattern: `^`},
	}
	for _, f := range filters {
		for _, p := range patterns {
			for _, limit := range []int{1 << 30, 7} {
				opts := f.opts
				opts.Pattern, opts.CaseInsensitive = p.Pattern, p.CaseInsensitive
				opts.Before, opts.After, opts.MaxMatches = 1, 1, limit
				t.Run(fmt.Sprintf("%s, %q i=%v limit=%d", f.name, p.Pattern, p.CaseInsensitive, limit), func(t *testing.T) {
					t.Parallel()
					compareWithNaive(t, dir, files, opts)
				})
			}
		}
	}
}

// compareWithNaive runs opts over dir, through the fast path and the
// generic one, and compares files, lines and summary with naiveSearch.
func compareWithNaive(t *testing.T, dir string, files map[string][]byte, opts Options) {
	t.Helper()
	want, wantSum := naiveSearch(t, files, opts)
	for _, fsys := range []fs.FS{rootFS(t, dir), plainFS{rootFS(t, dir)}} {
		got, sum, err := collect(t, fsys, opts)
		if err != nil {
			t.Fatal(err)
		}
		compareFiles(t, got, want)
		if !sum.Truncated {
			// Past the limit, how far the search read is its own business.
			if sum.FilesScanned != wantSum.FilesScanned || sum.BytesScanned != wantSum.BytesScanned {
				t.Errorf("scanned %d files, %d bytes; want %d, %d", sum.FilesScanned, sum.BytesScanned, wantSum.FilesScanned, wantSum.BytesScanned)
			}
		}
		if sum.Elapsed <= 0 {
			t.Errorf("Elapsed = %v, want the time the search took", sum.Elapsed)
		}
		sum.FilesScanned, sum.BytesScanned, sum.Elapsed = wantSum.FilesScanned, wantSum.BytesScanned, 0
		if sum != wantSum {
			t.Errorf("summary %+v, want %+v", sum, wantSum)
		}
	}
}

func compareFiles(t *testing.T, got, want []File) {
	t.Helper()
	if !reflect.DeepEqual(paths(got), paths(want)) {
		t.Fatalf("files:\n got %q\nwant %q", paths(got), paths(want))
	}
	for i := range got {
		if string(got[i].Raw) != string(want[i].Raw) {
			t.Errorf("%s: Raw differs from the file", got[i].Path)
		}
		if !reflect.DeepEqual(got[i].Lines, want[i].Lines) {
			t.Errorf("%s: lines\n got %+v\nwant %+v", got[i].Path, got[i].Lines, want[i].Lines)
		}
	}
}
