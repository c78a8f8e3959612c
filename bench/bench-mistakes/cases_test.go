package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/syntax"
)

// writeTree writes nGo Go files (tab-indented) and nTS TypeScript files
// (two spaces) of small functions, each with a local used on a few lines,
// a condition, a number, a call and blocks, a blank line between two
// statements, a constant at column 0 and (TypeScript) doc comments: every
// kind of change fits.
func writeTree(t *testing.T, nGo, nTS int) (goSrc, tsRoot string) {
	t.Helper()
	dir := t.TempDir()
	goSrc, tsRoot = filepath.Join(dir, "go", "src"), filepath.Join(dir, "node_modules")
	put := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for f := range nGo {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\nimport \"fmt\"\n", f)
		for k := range 8 {
			fmt.Fprintf(&b, "\n// F%[1]d doubles a and caps it.\nfunc F%[1]d(a int) int {\n\ttotal%[1]d := a * %[2]d\n\tif total%[1]d > 10 {\n\t\ttotal%[1]d = 10\n\t}\n\tfmt.Println(total%[1]d)\n\treturn total%[1]d\n}\n", k, f+2)
			fmt.Fprintf(&b, "\nconst limit%[1]d = %[2]d\n\n// G%[1]d prints b.\nfunc G%[1]d(b int) {\n\tfmt.Println(b)\n\n\tfmt.Println(b + 1)\n\tif b > limit%[1]d {\n\t\tfmt.Println(b)\n\t}\n}\n", k, f+2)
		}
		put(filepath.Join(goSrc, fmt.Sprintf("p%d", f), "f.go"), b.String())
	}
	// Files the corpus must leave alone: in testdata, too short, CRLF.
	put(filepath.Join(goSrc, "x", "testdata", "t.go"), strings.Repeat("\tx := 1\n", 100))
	put(filepath.Join(goSrc, "short.go"), "package short\n")
	put(filepath.Join(goSrc, "crlf.go"), strings.Repeat("\tx := f(1)\r\n", 100))
	for f := range nTS {
		var b strings.Builder
		b.WriteString("import { info } from \"./log\";\n")
		for k := range 8 {
			fmt.Fprintf(&b, "\n// f%[1]d doubles a and caps it.\nexport function f%[1]d(a: number): number {\n  let total%[1]d = a * %[2]d;\n  if (total%[1]d > 10) {\n    total%[1]d = 10;\n  }\n  info(total%[1]d);\n  return total%[1]d;\n}\n", k, f+2)
			fmt.Fprintf(&b, "export const limit%[1]d = %[2]d;\n/**\n * g%[1]d logs b.\n */\nexport function g%[1]d(b: number): void {\n  info(b);\n\n  info(b + 1);\n  if (b > limit%[1]d) {\n    info(b);\n  }\n}\n", k, f+2)
		}
		put(filepath.Join(tsRoot, fmt.Sprintf("pkg%d", f), "src", "f.ts"), b.String())
		// A package.json with multi-line objects and arrays and arrays on
		// one line: every JSON change fits.
		var j strings.Builder
		fmt.Fprintf(&j, "{\n  \"name\": \"pkg%d\",\n  \"version\": \"1.0.%d\",\n  \"files\": [\"dist\", \"src\"],\n  \"keywords\": [],\n", f, f)
		for k := range 8 {
			fmt.Fprintf(&j, "  \"sub%[1]d\": {\n    \"main\": \"dist/%[1]d.js\",\n    \"engines\": {\"node\": \">=%[1]d\"},\n    \"list\": [\n      \"a%[1]d\",\n      \"b%[1]d\"\n    ]\n  },\n", k)
		}
		j.WriteString("  \"private\": true\n}\n")
		put(filepath.Join(tsRoot, fmt.Sprintf("pkg%d", f), "package.json"), j.String())
	}
	// A JSON file with comments, which is not JSON: the corpus leaves it.
	put(filepath.Join(tsRoot, "tsconfig.json"), "{\n  // options\n"+strings.Repeat("  \"a\": 1,\n", minLines)+"  \"b\": [1]\n}\n")
	return goSrc, tsRoot
}

func mustGenerate(t *testing.T, goSrc, tsRoot string, perClass int, seed uint64) []*mcase {
	t.Helper()
	paths, err := sourcePaths(goSrc, []string{tsRoot})
	if err != nil {
		t.Fatal(err)
	}
	cases, err := generate(paths, perClass, seed)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// dump is everything a case sends and expects, for comparing runs.
func dump(cs []*mcase) string {
	var b strings.Builder
	for _, c := range cs {
		j, _ := json.Marshal([]any{c.name, c.src, string(c.orig), string(c.pre), string(c.want), c.checks, c.setup, c.calls})
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestTheCorpusIsTheSameForTheSameSeed(t *testing.T) {
	goSrc, tsRoot := writeTree(t, 6, 4)
	a, b := mustGenerate(t, goSrc, tsRoot, 4, 1), mustGenerate(t, goSrc, tsRoot, 4, 1)
	if dump(a) != dump(b) {
		t.Error("two runs with one seed gave different corpora")
	}
	if dump(a) == dump(mustGenerate(t, goSrc, tsRoot, 4, 2)) {
		t.Error("another seed gave the same corpus")
	}
	if len(a) != 4*len(classes) {
		t.Errorf("%d cases, want %d", len(a), 4*len(classes))
	}
	for _, c := range a {
		if strings.Contains(c.src, "testdata") || strings.Contains(c.src, "short.go") || strings.Contains(c.src, "crlf.go") {
			t.Errorf("%s: from a file the corpus must skip: %s", c.name, c.src)
		}
	}
}

// op1 is the one operation of a case's call i, its name and fields.
func op1(t *testing.T, c *mcase, i int) (string, map[string]any) {
	t.Helper()
	edits, ok := c.calls[i].([]any)
	if !ok || len(edits) != 1 {
		t.Fatalf("%s: call %d edits %#v", c.name, i, c.calls[i])
	}
	return op(edits[0].(map[string]any))
}

func newText(o map[string]any) []string {
	s, ok := o["new_text"].(string)
	if !ok {
		s = o["text"].(string)
	}
	return strings.Split(s, "\n")
}

var tagPrefixRE = regexp.MustCompile(`^\d+:[0-9a-f]{2}\|`)

func TestEachCaseSendsItsMistakeOfTheIntendedChange(t *testing.T) {
	goSrc, tsRoot := writeTree(t, 6, 4)
	for _, c := range mustGenerate(t, goSrc, tsRoot, 4, 7) {
		t.Run(c.name, func(t *testing.T) {
			lines := strings.Split(strings.TrimSuffix(string(c.orig), "\n"), "\n")
			for n, ref := range c.checks {
				if want := fmt.Sprintf("%d:%s", n, hashOf(lines[n-1])); ref != want {
					t.Errorf("check of line %d is %s, the line's tag is %s", n, ref, want)
				}
			}
			if c.class.expect == expectRefuse {
				if string(c.want) != string(c.pre) {
					t.Error("where refusing is right, the intended file is not the file as it was")
				}
			} else if string(c.want) == string(c.pre) {
				t.Error("the intended change changes nothing")
			}
			if c.class.goOnly && !strings.HasSuffix(c.name, ".go") {
				t.Error("a Go-only class took a TypeScript file")
			}
			if strings.Contains(c.src, "tsconfig.json") {
				t.Error("a case took a JSON file with comments")
			}
			switch c.class.key {
			case "control":
				// The intended file is what the correct edit gives.
				name, o := op1(t, c, 0)
				e := hashline.Edit{Op: hashline.OpReplace, Start: refOf(o, "anchor", "start_anchor"), End: refOf(o, "end_anchor"), Text: strings.Join(newText(o), "\n")}
				if name == "insert_after" {
					t.Fatal("control sent an insertion")
				}
				res, err := hashline.ApplyEdits(hashline.ParseDocument(c.orig), []hashline.Edit{e}, hashline.ApplyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got := string(res.Doc.Bytes()); got != string(c.want) {
					t.Errorf("the control edit gives\n%s\nthe case wants\n%s", got, c.want)
				}
			case "prefix":
				_, o := op1(t, c, 0)
				for _, l := range newText(o) {
					if !tagPrefixRE.MatchString(l) {
						t.Errorf("line without a tag prefix: %q", l)
					}
				}
			case "diff-plus":
				_, o := op1(t, c, 0)
				for _, l := range newText(o) {
					if !strings.HasPrefix(l, "+") {
						t.Errorf("line without +: %q", l)
					}
				}
			case "indent-flat":
				_, o := op1(t, c, 0)
				for _, l := range newText(o) {
					if indentOf(l) != "" {
						t.Errorf("indented line: %q", l)
					}
				}
			case "tab-literal":
				_, o := op1(t, c, 0)
				joined := strings.Join(newText(o), "\n")
				if !strings.Contains(joined, `\t`) || strings.Contains(joined, "\t") {
					t.Errorf("want literal \\t and no tab: %q", joined)
				}
			case "echo-insert":
				name, o := op1(t, c, 0)
				a := refOf(o, "anchor")
				var n int
				fmt.Sscanf(a, "%d:", &n)
				if name != "insert_after" || newText(o)[0] != lines[n-1] {
					t.Errorf("%s does not repeat its anchor line %q: %q", name, lines[n-1], newText(o))
				}
			case "diff-plus-one":
				_, o := op1(t, c, 0)
				if text := newText(o); len(text) != 1 || !strings.HasPrefix(text[0], "+") || indentOf(text[0][1:]) != "" {
					t.Errorf("not one + line at column 0: %q", text)
				}
			case "echo-comment":
				name, o := op1(t, c, 0)
				text := newText(o)
				first, last := strings.TrimSpace(text[0]), strings.TrimSpace(text[len(text)-1])
				if name == "insert_after" || first != "*/" && last != "/**" && last != "/*" {
					t.Errorf("%s does not echo a comment's */ or /**: %q", name, text)
				}
			case "indent-blank":
				name, o := op1(t, c, 0)
				var n int
				fmt.Sscanf(refOf(o, "anchor"), "%d:", &n)
				if name != "set_line" || lines[n-1] != "" || indentOf(newText(o)[0]) != "" || indentOf(lines[n-2]) == "" {
					t.Errorf("%s of line %d (%q) is not a blank line in a block replaced flush left: %q", name, n, lines[n-1], newText(o))
				}
			case "break-json-comma", "break-json-closing", "break-json-bracket":
				if !strings.HasSuffix(c.name, ".json") {
					t.Fatalf("a JSON class took %s", c.name)
				}
				if !json.Valid(c.want) || json.Valid(c.sent) || string(c.sent) == string(c.pre) {
					t.Fatalf("the intended file must be JSON and the file as sent not:\nwant %s\nsent %s", c.want, c.sent)
				}
				name, o := op1(t, c, 0)
				switch c.class.key {
				case "break-json-comma":
					// The intended change gives the last entry its comma;
					// the call inserts the new entry after it, comma-less.
					if name != "insert_after" || strings.HasSuffix(newText(o)[0], ",") || !strings.Contains(string(c.want), strings.TrimSpace(newText(o)[0])) {
						t.Errorf("%s %q is not the new entry inserted alone", name, newText(o))
					}
				case "break-json-closing":
					text := newText(o)
					if name != "replace_lines" || strings.ContainsAny(strings.TrimSpace(text[len(text)-1])[:1], "}]") {
						t.Errorf("%s %q still ends with the closing line", name, text)
					}
				case "break-json-bracket":
					if name != "set_line" || len(newText(o)) != 1 {
						t.Errorf("%s %q is not one line", name, newText(o))
					}
				}
				closing := func(b []byte) int { return len(regexp.MustCompile(`[\]}]`).FindAll(b, -1)) }
				if cw, cs := closing(c.want), closing(c.sent); c.class.key != "break-json-comma" && cs != cw-1 {
					t.Errorf("the text as sent has %d closing brackets, the intended %d: one must be lost", cs, cw)
				}
			case "break-bracket", "break-closing":
				if c.sent == nil || string(c.sent) == string(c.want) || string(c.sent) == string(c.pre) {
					t.Fatal("the broken file is missing, or is the intended or the first one")
				}
				closing := func(b []byte) int { return len(regexp.MustCompile(`[)\]}]`).FindAll(b, -1)) }
				if cw, cs := closing(c.want), closing(c.sent); cs != cw-1 {
					t.Errorf("the text as sent has %d closing brackets, the intended %d: one must be lost", cs, cw)
				}
			case "stale-numbers":
				if len(c.setup) != 1 || string(c.pre) == string(c.orig) {
					t.Error("no insertion before the edit")
				}
			case "wrong-hash", "wrong-hash-neighbour":
				_, o := op1(t, c, 0)
				for _, k := range []string{"anchor", "start_anchor", "end_anchor"} {
					if r, ok := o[k].(string); ok && !slices.Contains(mapValues(c.checks), r) {
						return
					}
				}
				t.Errorf("every ref is right: %v", o)
			case "noop-twice":
				if len(c.calls) != 2 || jsonOf(c.calls[0]) != jsonOf(c.calls[1]) {
					t.Errorf("not the same call twice: %v", c.calls)
				}
			case "malformed-object":
				if _, ok := c.calls[0].(map[string]any); !ok {
					t.Errorf("edits is %T", c.calls[0])
				}
			case "malformed-string":
				var v []any
				if s, ok := c.calls[0].(string); !ok || json.Unmarshal([]byte(s), &v) != nil || len(v) != 1 {
					t.Errorf("edits is %#v", c.calls[0])
				}
			case "malformed-op":
				name, _ := op1(t, c, 0)
				if slices.Contains([]string{"set_line", "replace_lines", "insert_after", "replace"}, name) {
					t.Errorf("%s is spelt right", name)
				}
			case "malformed-no-end":
				name, o := op1(t, c, 0)
				if _, ok := o["end_anchor"]; ok || name != "replace_lines" {
					t.Errorf("%s %v", name, o)
				}
			}
		})
	}
}

func refOf(o map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := o[k].(string); ok {
			return s
		}
	}
	return ""
}

func mapValues(m map[int]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestChangesAreTheOnesAModelMakes(t *testing.T) {
	src := func(lang string, lines ...string) *source {
		return loadSourceLines(lang, lines)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	t.Run("a local used only within a few lines is renamed on all of them", func(t *testing.T) {
		s := src("go", "func f() {", "\tcount := 1", "\tm := count + 1", "\treturn count", "}")
		c, ok := rename(s, 1, rng)
		if !ok || c.start != 2 || c.end != 4 || !strings.HasPrefix(c.text[2], "\treturn count") || strings.Contains(strings.Join(c.text, "\n"), "count ") {
			t.Errorf("%v %+v", ok, c)
		}
	})
	t.Run("a name used further down is not renamed", func(t *testing.T) {
		s := src("go", "\tcount := 1", "\tm := count", "", "", "", "", "", "\treturn count")
		if c, ok := rename(s, 0, rng); ok {
			t.Errorf("renamed: %+v", c)
		}
	})
	t.Run("a rename leaves strings and comments alone", func(t *testing.T) {
		s := src("go", "\tval := \"val\" // val", "\tuse(val, `val`)")
		c, ok := rename(s, 0, rng)
		if !ok || !strings.HasSuffix(c.text[0], " := \"val\" // val") || !strings.HasSuffix(c.text[1], ", `val`)") || strings.HasPrefix(c.text[1], "\tuse(val,") {
			t.Errorf("%v %q", ok, c.text)
		}
	})
	t.Run("a name that is also a field, or is not declared on its first line, is not renamed", func(t *testing.T) {
		for _, ls := range [][]string{
			{"	val := 1", "	x.val = val"},
			{"	use(val)", "	use(val)"},
		} {
			if c, ok := rename(src("go", ls...), 0, rng); ok {
				t.Errorf("%q renamed: %q", ls, c.text)
			}
		}
	})
	t.Run("a condition's first operator is flipped", func(t *testing.T) {
		c, ok := condition(src("go", "\tif a == b && c {"), 0, rng)
		if !ok || c.text[0] != "\tif a != b && c {" {
			t.Errorf("%v %+v", ok, c)
		}
	})
	t.Run("a number is incremented, not a part of a name or a float", func(t *testing.T) {
		c, ok := literal(src("go", "\tx1 := 2.5 + f(9)"), 0, rng)
		if !ok || c.text[0] != "\tx1 := 2.5 + f(10)" {
			t.Errorf("%v %+v", ok, c)
		}
	})
	t.Run("a log line is not added inside a statement that goes on", func(t *testing.T) {
		for _, next := range []string{"  .then(g);", "  + x;", "  ? a : b;", "  else g();", "  (h)"} {
			if c, ok := logAfter(src("ts", "  f(x)", next), 0, rng); ok {
				t.Errorf("before %q: %+v", next, c)
			}
		}
		if _, ok := logAfter(src("ts", "  f(x)", "  g(y);"), 0, rng); !ok {
			t.Error("not added between two statements")
		}
	})
	t.Run("a log line is added before a block's end only, after a statement", func(t *testing.T) {
		for _, ls := range [][]string{
			{"var (", "	x = f(y)", ")"},
			{"foo(", "  bar(x)", ");"},
			{"const o = {", "  a: f(x)", "};"},
		} {
			lang := "ts"
			if strings.HasPrefix(ls[0], "var") {
				lang = "go"
			}
			if cs := closingLines(src(lang, ls...), rng); len(cs) > 0 {
				t.Errorf("%q: %+v", ls, cs)
			}
		}
		if cs := closingLines(src("go", "func f() {", "	g(x)", "}"), rng); len(cs) != 1 {
			t.Errorf("Go block: %+v", cs)
		}
	})
	t.Run("a log line is added at the block's indentation", func(t *testing.T) {
		c, ok := logInsert(src("ts", "  if (a) {", "    b();", "  }"), 0, rng)
		if !ok || !c.insert || c.start != 1 || c.text[0] != `    console.log("hashline: checkpoint 1");` {
			t.Errorf("%v %+v", ok, c)
		}
		got := strings.Join(c.apply([]string{"  if (a) {", "    b();", "  }"}), "\n")
		if got != "  if (a) {\n    console.log(\"hashline: checkpoint 1\");\n    b();\n  }" {
			t.Errorf("applied:\n%s", got)
		}
	})
}

// loadSourceLines is loadSource of a file of lines, without the size
// limits.
func loadSourceLines(lang string, lines []string) *source {
	dir, err := os.MkdirTemp("", "src")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "f")
	padded := append(slices.Clone(lines), slices.Repeat([]string{"// pad"}, minLines)...)
	if err := os.WriteFile(p, join(padded), 0o644); err != nil {
		panic(err)
	}
	s := loadSource(entry{lang, p, "f"})
	s.lines = lines
	return s
}

func TestLoadSourceSkipsFilesTheServersWouldShowDifferently(t *testing.T) {
	dir := t.TempDir()
	ok := strings.Repeat("x := 1\n", minLines)
	for _, tc := range []struct {
		name, content string
		keep          bool
	}{
		{"a plain file", ok, true},
		{"CRLF endings", strings.ReplaceAll(ok, "\n", "\r\n"), false},
		{"a BOM", "\ufeff" + ok, false},
		{"no final newline", strings.TrimSuffix(ok, "\n"), false},
		{"too few lines", "x\n", false},
		{"a very long line", ok + strings.Repeat("y", maxLineSize+1) + "\n", false},
		{"not UTF-8", ok + "\xff\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := loadSource(entry{"go", p, "f.go"}) != nil; got != tc.keep {
				t.Errorf("kept %v, want %v", got, tc.keep)
			}
		})
	}
}

func TestEveryIntendedChangeParses(t *testing.T) {
	goSrc, tsRoot := writeTree(t, 6, 4)
	for _, c := range mustGenerate(t, goSrc, tsRoot, 4, 3) {
		name := strings.TrimPrefix(c.src[:strings.LastIndex(c.src, ":")], "go:")
		name = strings.TrimPrefix(strings.TrimPrefix(name, "ts:"), "json:")
		if c.class.expect == expectRefuse {
			continue
		}
		if rep := syntax.Check(name, c.pre, c.want, syntax.Options{}); len(rep.Diagnostics) > 0 {
			t.Errorf("%s: the intended change breaks the syntax: %v", c.name, rep.Diagnostics)
		}
	}
	t.Run("a log line is not taken inside a Go var group or a TypeScript class body", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 1))
		src := func(lang string, lines ...string) *source {
			s := loadSourceLines(lang, lines)
			s.text = string(join(lines))
			return s
		}
		for _, tc := range []struct {
			e    entry
			src  *source
			want bool
		}{
			{entry{"go", "v.go", "v.go"}, src("go", "package p", "", "var (", "\ta = f(1)", "\tb = f(2)", ")"), false},
			{entry{"go", "i.go", "i.go"}, src("go", "package p", "", "type I interface {", "\tRead(p []byte) (int, error)", "\tClose() error", "}"), false},
			{entry{"go", "f.go", "f.go"}, src("go", "package p", "", "func f() {", "\ta(1)", "\tb(2)", "}"), true},
			{entry{"ts", "c.ts", "c.ts"}, src("ts", "class C {", "  a = f(1);", "  b = f(2);", "}"), false},
			{entry{"ts", "g.ts", "g.ts"}, src("ts", "function g() {", "  f(1);", "  f(2);", "}"), true},
		} {
			var got bool
			for i := range tc.src.lines {
				if c, ok := logAfter(tc.src, i, rng); ok && intendedParses(tc.e, tc.src, c) {
					got = true
				}
			}
			if got != tc.want {
				t.Errorf("%s: a log line taken %v, want %v", tc.e.rel, got, tc.want)
			}
		}
	})
}
