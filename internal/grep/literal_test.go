package grep

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// showLits renders a literal set for comparison: "(?i)" marks folded ones.
func showLits(set []lit) []string {
	var out []string
	for _, l := range set {
		s := l.s
		if l.fold {
			s = "(?i)" + s
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func TestRequiredLits(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
		pure    bool
	}{
		{"func main", []string{"func main"}, true},
		{`(?i)func main`, []string{"(?i)FUNC MAIN"}, true},
		{`(Context|Deadline)\(`, []string{"Context(", "Deadline("}, true},
		{`\w+_test\b`, []string{"_test"}, false},
		{`^func`, []string{"func"}, false},
		{`colou?r`, []string{"color", "colour"}, true},
		{`func\s+main`, []string{"func"}, false},
		{`Context[0-9]`, []string{"Context"}, false},
		{`v[0-9]`, []string{"v"}, false},
		{`[ab]c`, []string{"ac", "bc"}, true},
		{`(?i)x(`, nil, false}, // does not compile; never reached
		{`a+`, []string{"a"}, false},
		{`x*`, nil, false},
		{`.`, nil, false},
		{``, nil, false},
		{`foo|.*`, nil, false},
		{`(?i)[Ss]ize\(`, []string{"(?i)SIZE("}, true},
		{`(?i)[k]ey`, []string{"(?i)KEY"}, true},
		{`[Ss]ize`, []string{"Size", "size"}, true},
		{`Foo(?i)bar`, []string{"Foo"}, false},
		{`(?:ab){2}c`, []string{"ababc"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			re, err := syntax.Parse(tt.pattern, syntax.Perl)
			if err != nil {
				return
			}
			set, pure := requiredLits(re.Simplify())
			if got := showLits(set); !reflect.DeepEqual(got, tt.want) || pure != tt.pure {
				t.Errorf("got %q pure=%v, want %q pure=%v", got, pure, tt.want, tt.pure)
			}
		})
	}
}

// naiveScanLines returns the matching line numbers by running re on every
// line, for comparison with matcher.scan.
func scanNumbers(m *matcher, data []byte) []int {
	var f *finder
	if m.needles != nil {
		f = newFinder(m.needles)
	}
	var out []int
	for _, ms := range m.scan(context.Background(), f, data, 1<<30, nil) {
		out = append(out, ms.num)
	}
	return out
}

// FuzzScan checks that the prefiltered scan finds exactly the lines a naive
// per-line regexp scan finds, whatever the pattern and text.
func FuzzScan(f *testing.F) {
	seeds := []struct{ pattern, text string }{
		{"func main", "package x\nfunc main() {}\n"},
		{`(?i)task`, "ta\u017fk\nTASK\r\nt\n"},
		{`(?i)\x{212A}`, "k\nK\n\u212a\n"},
		{`(Context|Deadline)\(`, "ctx.Deadline()\ncontext.Context\n"},
		{`colou?r$`, "color\r\ncolour\nCOLOR\n"},
		{`(?i)stra\x{DF}e`, "STRASSE\nstra\u1e9ee\n"},
		{`\x{FEFF}a`, "\uFEFFa\n"},
		{`^a`, "\uFEFFa\nb\na"},
		{`a\nb`, "a\nb\n"},
		{`(?i)\x{3C3}\x{3A3}`, "\u03c2\u03c3\n"},
		{`x\r`, "x\r\nx\ry\n"},
		// Go's regexp reads a byte that is not UTF-8 as U+FFFD.
		{`a\x{FFFD}b`, "a\xc0b\na\uFFFDb\n"},
		{`[\x{FFFC}-\x{FFFE}]x`, "\xffx\n"},
		// A surrogate matches nothing; Go encodes it as U+FFFD.
		{`\x{D800}`, "\uFFFD\n"},
		{`[\x{D7FF}-\x{D801}]`, "\uFFFD\n\uD7FF\n"},
	}
	for _, s := range seeds {
		f.Add(s.pattern, s.text)
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		m, err := compile(Options{Pattern: pattern})
		if err != nil {
			return
		}
		data := []byte(text)
		got := scanNumbers(m, data)
		want := naiveMatches(m.re, data)
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %q over %q: lines %v, want %v (needles %q, pure %v)", pattern, text, got, want, needleLits(m), m.pure)
		}
		if !utf8.ValidString(text) || len(want) == 0 {
			return
		}
		lines := m.buildLines(context.Background(), data, m.scan(context.Background(), nil, data, 1<<30, nil), 1, 1, 0)
		if wantLines := naiveContext(m.re, data, want, 1, 1, 0); !reflect.DeepEqual(lines, wantLines) {
			t.Fatalf("context lines %+v, want %+v", lines, wantLines)
		}
	})
}

func needleLits(m *matcher) []string {
	var out []string
	for _, n := range m.needles {
		out = append(out, n.lit)
	}
	return out
}

func TestFoldVerifyIsUnicodeAware(t *testing.T) {
	// Each pattern is case-insensitive and each text has one matching line
	// that an ASCII-only fold would miss.
	tests := []struct{ pattern, text string }{
		{"sk", "xx\nta\u017f\u212a\n"},
		{"kelvin", "\u212aELVIN\n"},
		{"\u00e0b", "\u00c0B\n"},
		{"\u03c3\u03c3", "\u03a3\u03c2\n"},
		{"\u0130", "\u0130\n"},
	}
	for _, tt := range tests {
		m, err := compile(Options{Pattern: tt.pattern, CaseInsensitive: true})
		if err != nil {
			t.Fatal(err)
		}
		want := naiveMatches(regexp.MustCompile("(?i)"+tt.pattern), []byte(tt.text))
		if got := scanNumbers(m, []byte(tt.text)); !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%q over %q: %v, want %v", tt.pattern, strings.TrimSpace(tt.text), got, want)
		}
	}
}

// FuzzRequiredLits checks the literal extraction on its own: every line the
// regexp matches contains one of the required literals (else the prefilter
// would drop a match), and when the set is pure, a line that contains one
// is a match (else the regexp could not be skipped). It also checks that a
// pattern said to match only empty strings has no other match.
func FuzzRequiredLits(f *testing.F) {
	seeds := []struct{ pattern, text string }{
		{"func main", "func main()\nfunc  main\n"},
		{`(?i)func main`, "FUNC MAIN\nfunc\u017fmain\n"},
		{`(Context|Deadline)\(`, "Context(\nDeadline (\n"},
		{`\w+_test\b`, "x_test\n_test\nx_testy\n"},
		{`colou?r`, "color\ncolour\ncolouur\n"},
		{`(?i)[k]ey|x[0-9]z`, "\u212aEY\nx5z\n"},
		{`(?:ab){2,}c`, "ababc\nabababc\nabc\n"},
		{`a+b*c?`, "a\nbc\n"},
		{`^(foo|bar)$`, "foo\nbarr\n"},
		{`(?i)stra\x{DF}e|\x{3A3}`, "STRASSE\nstra\u1e9ee\n\u03c2\n"},
	}
	for _, s := range seeds {
		f.Add(s.pattern, s.text)
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		sre, err := syntax.Parse(pattern, syntax.Perl)
		if err != nil {
			return
		}
		if onlyEmpty(sre.Simplify()) {
			for _, line := range strings.Split(text, "\n") {
				if spans := naiveSpans(re, line); len(spans) > 0 {
					t.Fatalf("%q is said to match only empty strings, but matches %v in %q", pattern, spans, line)
				}
			}
		}
		set, pure := requiredLits(sre.Simplify())
		if len(set) == 0 {
			return
		}
		var finds []*regexp.Regexp
		for _, l := range set {
			expr := regexp.QuoteMeta(l.s)
			if l.fold {
				expr = "(?i)" + expr
			}
			finds = append(finds, regexp.MustCompile(expr))
		}
		for _, line := range strings.Split(text, "\n") {
			has := slices.ContainsFunc(finds, func(f *regexp.Regexp) bool { return f.MatchString(line) })
			if re.MatchString(line) && !has {
				t.Fatalf("%q matches line %q, which contains none of %q", pattern, line, showLits(set))
			}
			if pure && has && !re.MatchString(line) {
				t.Fatalf("%q is pure with %q, but line %q contains one and does not match", pattern, showLits(set), line)
			}
		}
	})
}

func TestTypes(t *testing.T) {
	names := TypeNames()
	if !slices.IsSorted(names) {
		t.Errorf("TypeNames is not sorted: %q", names)
	}
	for _, want := range []string{"go", "ts", "js", "py", "rs", "java", "c", "cpp", "md", "json", "yaml", "proto", "sh"} {
		if !slices.Contains(names, want) {
			t.Errorf("type %q missing from %q", want, names)
		}
	}
	for alias, name := range map[string]string{"rust": "rs", "Python": "py", " yml ": "yaml"} {
		a, ok1 := TypeGlobs(alias)
		b, ok2 := TypeGlobs(name)
		if !ok1 || !ok2 || !reflect.DeepEqual(a, b) {
			t.Errorf("alias %q: %q, want the globs of %q: %q", alias, a, name, b)
		}
	}
	err := CheckTypes([]string{"go", "gopher"})
	if !errors.Is(err, ErrUnknownType) || !strings.Contains(err.Error(), `"gopher"`) || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf("CheckTypes = %v, want ErrUnknownType naming gopher and listing %q", err, names)
	}
	if err := CheckTypes([]string{"go", "typescript"}); err != nil {
		t.Errorf("CheckTypes of known types = %v", err)
	}
	if _, _, err := collect(t, rootFS(t, t.TempDir()), Options{Pattern: "x", Types: []string{"nope"}}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("Search with an unknown type: %v, want ErrUnknownType", err)
	}
}

func TestOnlyEmpty(t *testing.T) {
	for pattern, want := range map[string]bool{
		``: true, `^`: true, `$`: true, `^$`: true, `\b`: true, `(^|$)`: true, `(?:^\b)*`: true,
		`x*`: false, `.`: false, `^a?`: false, `a|^`: false, `[^a]`: false, `x{0}`: true,
	} {
		re, err := syntax.Parse(pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := onlyEmpty(re.Simplify()); got != want {
			t.Errorf("onlyEmpty(%q) = %v, want %v", pattern, got, want)
		}
	}
}
