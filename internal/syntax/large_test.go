package syntax_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/syntax"
)

// goFile is a gofmt'd Go file of about n lines: functions of ten lines,
// and a raw string whose lines start at column 0 like declarations.
func goFile(n int) string {
	var b strings.Builder
	b.WriteString("package shop\n\nimport \"fmt\"\n\nconst tmpl = `\nfunc inside() {\ntype notAType\n`\n\n")
	for i := 0; i < n/10; i++ {
		fmt.Fprintf(&b, "// F%d computes a value.\nfunc F%d(x int) (int, error) {\n\tif x > %d {\n\t\treturn x * 2, nil\n\t}\n\ts := []string{\"a\", \"b(\"}\n\treturn x + len(s), fmt.Errorf(\"no %%d\", x)\n}\n\n", i, i, i)
	}
	return b.String()
}

// tsFile is the same for TypeScript, with a template literal.
func tsFile(n int) string {
	var b strings.Builder
	b.WriteString("import { fmt } from \"./fmt\";\n\nconst tmpl = `\nfunction inside() {\nconst x = (\n`;\n\n")
	for i := 0; i < n/10; i++ {
		fmt.Fprintf(&b, "// f%d computes a value.\nexport function f%d(x: number): number {\n  if (x > %d) {\n    return x * 2;\n  }\n  const s: string[] = [\"a\", \"b(\"];\n  return x + s.length + fmt(`t${x}`).length;\n}\n\n", i, i, i)
	}
	return b.String()
}

// largeEdits are edits of a large file, each as a replacement of the
// first occurrence of old.
// goBroken and tsBroken say whether the edit breaks the parse.
var largeEdits = []struct {
	name, old, new     string
	goBroken, tsBroken bool
}{
	{"clean body change", "return x * 2, nil\n\t}\n\ts := []string{\"a\", \"b(\"}\n\treturn x + len(s), fmt.Errorf(\"no %d\", x)\n}\n\n// F500 ", "return x * 3, nil\n\t}\n\ts := []string{\"a\", \"b(\"}\n\treturn x + len(s), fmt.Errorf(\"no %d\", x)\n}\n\n// F500 ", false, false},
	{"unclosed paren", "func F500(x int) (int, error) {\n\tif x > 500 {", "func F500(x int) (int, error) {\n\tif (x > 500 {", true, true},
	{"lost closing line", "fmt.Errorf(\"no %d\", x)\n}\n\n// F501 ", "fmt.Errorf(\"no %d\", x)\n\n// F501 ", true, true},
	{"stray quote", "if x > 500 {", "if x > \"500 {", true, true},
	{"raw string opened", "func F500(x int) (int, error) {\n", "func F500(x int) (int, error) {\n\t_ = `\n", true, true},
	{"import after declarations", "// F500 ", "import \"os\"\n\n// F500 ", true, false},
	{"inside the raw string", "func inside() {\n", "func inside() {{\n", false, false},
	{"new function", "// F500 ", "func G() {}\n\n// F500 ", false, false},
}

// TestChunkedSameAsWhole: for each edit of a large file, the check that
// parses a piece first reports what the whole-file check does.
func TestChunkedSameAsWhole(t *testing.T) {
	t.Parallel()
	for _, lang := range []struct {
		name, src string
		ts        bool
	}{{"big.go", goFile(10_000), false}, {"big.ts", tsFile(10_000), true}} {
		for _, e := range largeEdits {
			t.Run(lang.name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				old, new := e.old, e.new
				if lang.ts {
					old, new = toTS(old), toTS(new)
				}
				if !strings.Contains(lang.src, old) {
					t.Skipf("no %q in the file", old)
				}
				before := []byte(lang.src)
				after := []byte(strings.Replace(lang.src, old, new, 1))
				whole := syntax.Check(lang.name, before, after, syntax.Options{ChunkBytes: -1})
				chunked := syntax.Check(lang.name, before, after, syntax.Options{})
				if !reflect.DeepEqual(whole, chunked) {
					t.Errorf("chunked %+v\nwhole %+v", chunked, whole)
				}
				if whole.Status != syntax.Checked {
					t.Errorf("not checked: %s", whole.Reason)
				}
				if broken := e.goBroken && !lang.ts || e.tsBroken && lang.ts; broken != (len(whole.Diagnostics) > 0) {
					t.Errorf("broken %v, diagnostics %v", broken, whole.Diagnostics)
				}
			})
		}
	}
}

// toTS turns the Go edits into the TypeScript file's text.
func toTS(s string) string {
	r := strings.NewReplacer(
		"func F500(x int) (int, error) {\n\tif x > 500 {", "export function f500(x: number): number {\n  if (x > 500) {",
		"func F500(x int) (int, error) {\n", "export function f500(x: number): number {\n",
		"if x > 500 {", "if (x > 500) {",
		"if (x > 500 {", "if ((x > 500) {",
		"if x > \"500 {", "if (x > \"500) {",
		"// F500 ", "// f500 ", "// F501 ", "// f501 ",
		"return x * 2, nil\n\t}\n\ts := []string{\"a\", \"b(\"}\n\treturn x + len(s), fmt.Errorf(\"no %d\", x)\n}", "return x * 2;\n  }\n  const s: string[] = [\"a\", \"b(\"];\n  return x + s.length + fmt(`t${x}`).length;\n}",
		"return x * 3, nil\n\t}\n\ts := []string{\"a\", \"b(\"}\n\treturn x + len(s), fmt.Errorf(\"no %d\", x)\n}", "return x * 3;\n  }\n  const s: string[] = [\"a\", \"b(\"];\n  return x + s.length + fmt(`t${x}`).length;\n}",
		"fmt.Errorf(\"no %d\", x)\n}", "fmt(`t${x}`).length;\n}",
		"fmt.Errorf(\"no %d\", x)\n", "fmt(`t${x}`).length;\n",
		"\t_ = `\n", "  const y = `\n",
		"import \"os\"\n", "import { os } from \"os\";\n",
		"func inside() {\n", "function inside() {\n",
		"func inside() {{\n", "function inside() {{\n",
		"func G() {}\n", "function g() {}\n",
	)
	return r.Replace(s)
}

// TestChunkIsSmall: an edit inside one function of a large file is
// checked by parsing that function alone.
func TestChunkIsSmall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, old, new string }{
		{"big.go", goFile(10_000), "return x * 2, nil\n\t}\n\ts := []string{\"a\", \"b(\"}\n\treturn x + len(s), fmt.Errorf(\"no %d\", x)\n}\n\n// F500 ", "return x * 3, nil\n\t}\n\ts := []string{\"a\", \"b(\"}\n\treturn x + len(s), fmt.Errorf(\"no %d\", x)\n}\n\n// F500 "},
		{"big.ts", tsFile(10_000), "if (x > 500) {", "if (x >= 500) {"},
	} {
		after := strings.Replace(tc.src, tc.old, tc.new, 1)
		piece, ok := syntax.Chunk(tc.name, []byte(tc.src), []byte(after))
		if !ok || strings.Count(piece, "\n") > 20 {
			t.Errorf("%s: chunk of %d lines (ok %v):\n%s", tc.name, strings.Count(piece, "\n"), ok, piece)
		}
	}
}
