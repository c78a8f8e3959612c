package syntax_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/syntax"
)

// sentinelSources are sources that parse, in the forms the sentinel must
// not be fooled by when they are cut short or broken: blocks, namespaces
// and ambient modules, labels, classes, JSX, template literals, block
// comments, regular expressions, decorators, and line breaks other than
// "\n".
var sentinelSources = []struct{ name, src string }{
	{"f.ts", `import { a } from "./a";
export namespace N {
  export const x = 1;
}
declare module "m" {
  export function f(): void;
}
declare global {
  interface Window { y: number }
}
@dec
export class C<T> extends B implements I {
  private p = 1;
  constructor(readonly q: string) { super(); }
  get v(): number { return this.p; }
}
enum E { A = 1, B }
outer: for (let i = 0; i < 3; i++) {
  switch (i) {
    case 1: break outer;
    default: continue;
  }
}
const t = ` + "`a ${a} /* ${`b`} */`" + `;
const re = /[/]}/g;
/* a block
   comment */
let s = "x" + 'y';
if (t) label: { break label; } else { throw new Error("e"); }
do { a(); } while (false)
type U = { [k: string]: (x: number) => void };
export default async function* g() { yield await a; }
`},
	{"f.tsx", `import React from "react";
export function App({ items }: { items: string[] }) {
  return (
    <div className="x">
      {items.map((i) => <span key={i}>{i}</span>)}
      <>text {"}"} more</>
    </div>
  );
}
`},
	{"f.js", "const a = 1\r\nfunction f() {\r\n  return a\r\n}\r\nexport { f }\r\n"},
	{"f.mjs", "const a = 1\rfunction f() {\r  return `x\u2028y`\r}\u2028export { f }\u2029"},
	{"f.ts", "x()"},
	{"g.ts", `export type A = string
export abstract class B {
  abstract m(): void
  declare x: number
  static readonly y = 1
  accessor z = 2
  get g() { return this.x }
}
let async = 1, of = 2, type = 3
const o = { get: 1, set: 2, type, async }
namespace NS { export const n = async }
export default B
`},
}

// TestSentinelNeverTakesBrokenForClean: for every source above, cut at
// every byte and at every line, with every line deleted and with each of
// a set of characters inserted at every line start, the sentinel's
// answer "parses" is never given where a Transform of the source alone
// finds an error; and the whole sources, which parse, take that fast path.
func TestSentinelNeverTakesBrokenForClean(t *testing.T) {
	t.Parallel()
	for _, s := range sentinelSources {
		src := []byte(s.src)
		if errs := syntax.ESBuildErrors(s.name, src); len(errs) > 0 {
			t.Fatalf("%s does not parse: %v", s.name, errs)
		}
		if !syntax.ESBuildParses(s.name, src) {
			t.Errorf("%s: a source that parses is not found to parse with the sentinel", s.name)
		}
		var variants [][]byte
		for i := range len(src) {
			variants = append(variants, src[:i])
		}
		lines := bytes.SplitAfter(src, []byte("\n"))
		for i := range lines {
			variants = append(variants, bytes.Join(append(append([][]byte{}, lines[:i]...), lines[i+1:]...), nil))
			for _, ins := range []string{"{", "}", "(", ")", "`", "/*", "'", "<div>", "label:", "if (x)", "export ", "@d ", "async ", "break\n"} {
				variants = append(variants, bytes.Join(append(append(append([][]byte{}, lines[:i]...), []byte(ins)), lines[i:]...), nil))
			}
		}
		clean, fast := 0, 0
		for _, v := range variants {
			errs := syntax.ESBuildErrors(s.name, v)
			parses := syntax.ESBuildParses(s.name, v)
			if parses && len(errs) > 0 {
				t.Fatalf("%s: taken to parse, but a Transform of it alone finds %v:\n%s", s.name, errs, v)
			}
			if len(errs) == 0 {
				clean++
				if parses {
					fast++
				}
			}
		}
		t.Logf("%s: %d variants, %d parse, %d of those by the sentinel", s.name, len(variants), clean, fast)
	}
}

// TestESBuildLinesCountsAsESBuild: the sentinel's line is where esbuild
// puts it after every kind of line break.
func TestESBuildLinesCountsAsESBuild(t *testing.T) {
	for _, src := range []string{"", "a", "a\n", "a\r\nb", "a\rb\r", "a\u2028b\u2029c\n", "\r\n\r\n\n"} {
		if !syntax.ESBuildParses("f.js", []byte(src)) {
			t.Errorf("%q: the sentinel's error is not where it is looked for", src)
		}
	}
}

// TestCheckOfTypeScriptIsTheSameWithTheSentinel: Check's diagnostics for
// edits of a TypeScript file are those of whole-file Transforms.
func TestCheckOfTypeScriptIsTheSameWithTheSentinel(t *testing.T) {
	t.Parallel()
	before := []byte(sentinelSources[0].src)
	lines := strings.SplitAfter(string(before), "\n")
	for i := range lines {
		for _, ins := range []string{"(", "}", "const = 1;\n", "return\n"} {
			after := []byte(strings.Join(lines[:i], "") + ins + strings.Join(lines[i:], ""))
			got := syntax.Check("f.ts", before, after, syntax.Options{ChunkBytes: -1})
			var want []string
			for _, d := range syntax.ESBuildErrors("f.ts", after) {
				want = append(want, fmt.Sprint(d.Line, d.Message))
			}
			var have []string
			for _, d := range got.Diagnostics {
				have = append(have, fmt.Sprint(d.Line, d.Message))
			}
			if len(want) > 0 && len(have) == 0 || len(want) == 0 && len(have) > 0 {
				t.Errorf("line %d, %q: Check gives %v, a Transform %v", i+1, ins, have, want)
			}
		}
	}
}

// TestAKeywordAtTheEndIsNotTried: a source ending in a keyword, white
// space of any kind after it, is parsed without the sentinel, which would
// take "declare" at the end of a file for a name.
func TestAKeywordAtTheEndIsNotTried(t *testing.T) {
	for _, src := range []string{"declare", "declare\n", "x\ndeclare \u2028", "declare\u2029\ufeff", "a /* */ type", "const x = ŝ", "x.type\n"} {
		if syntax.ESBuildParses("f.ts", []byte(src)) {
			t.Errorf("%q is taken to parse with the sentinel", src)
		}
	}
	for _, src := range []string{"f(declared)", "x.typed\n", "const s = \"é\" // e\n"} {
		if !syntax.ESBuildParses("f.ts", []byte(src)) {
			t.Errorf("%q, which parses, is not taken to parse with the sentinel", src)
		}
	}
}
