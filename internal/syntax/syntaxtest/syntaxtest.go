// Package syntaxtest makes sources that parse, for the benchmarks of the
// syntax check (server's BenchmarkEditSyntax, make bench's syntax step).
package syntaxtest

import (
	"fmt"
	"strings"
)

// Source is a gofmt'd Go file (ts false) or the same in TypeScript, of
// about lines lines: functions of ten lines each. Each function's fourth
// line is "\t\ttotal += i * N" (";" ended in TypeScript), N the function's
// number, which EditedLine changes without breaking the parse.
func Source(ts bool, lines int) string {
	var b strings.Builder
	if !ts {
		b.WriteString("package bench\n\n")
	}
	for i := 0; b.Len() == 0 || strings.Count(b.String(), "\n") < lines-10; i++ {
		if ts {
			fmt.Fprintf(&b, "export function f%d(x: number): number {\n\tlet total = 0;\n\tfor (let i = 0; i < x; i++) {\n\t\ttotal += i * %d;\n\t}\n\tif (total > %d) {\n\t\treturn total - %d;\n\t}\n\treturn total;\n}\n", i, i, i, i)
		} else {
			fmt.Fprintf(&b, "func f%d(x int) int {\n\ttotal := 0\n\tfor i := 0; i < x; i++ {\n\t\ttotal += i * %d\n\t}\n\tif total > %d {\n\t\treturn total - %d\n\t}\n\treturn total\n}\n", i, i, i, i)
		}
	}
	return b.String()
}

// EditedLine is line, a line of Source, with its number's multiplier
// changed ("total += i * 7" becomes "total += i * (7 + 1)"), or line
// unchanged if it has none: an edit that keeps the file parsing.
func EditedLine(line string) string {
	i := strings.LastIndex(line, "* ")
	if i < 0 {
		return line
	}
	num, semi := strings.CutSuffix(line[i+2:], ";")
	out := line[:i+2] + "(" + num + " + 1)"
	if semi {
		out += ";"
	}
	return out
}
