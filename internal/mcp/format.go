package mcp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// formatRead renders a Read page the way the published hashline server
// does: a header, a blank line, and the tagged lines in a code block.
//
//	File: main.go (120 lines) [showing lines 1-50] (70 more lines below; continue with offset=51)
func formatRead(path string, r *hashlinev1.ReadResponse, plain bool) string {
	total := int(r.GetTotalLines())
	var b strings.Builder
	if total == 0 {
		// No line to refer to: edit_file's append needs none. (The peer
		// shows an empty file as one empty line, "1:05|", to anchor on.)
		return fmt.Sprintf("File: %s (0 lines; use append)", path)
	}
	fmt.Fprintf(&b, "File: %s (%s)", path, lines(total))
	ls := r.GetLines()
	f, l := client.PageBounds(r)
	first, last := int(f), int(l)
	if first > 1 || last < total {
		fmt.Fprintf(&b, " [showing lines %d-%d]", first, last)
	}
	if last < total {
		fmt.Fprintf(&b, " (%d more lines below; continue with offset=%d)", total-last, r.GetNextOffset())
	}
	b.WriteString("\n\n")
	text := r.GetText()
	if plain {
		var p strings.Builder
		for i, l := range ls {
			if i > 0 {
				p.WriteByte('\n')
			}
			p.WriteString(strconv.Itoa(int(l.GetNumber())))
			p.WriteByte('|')
			p.WriteString(l.GetContent())
		}
		text = p.String()
	}
	b.WriteString(fence("", text))
	return b.String()
}

// formatEdit renders an applied edit: what was done and how the other
// lines' numbers changed, any rebase and warnings, and the tagged diff,
// whose context and added lines carry the fresh refs to chain edits from.
// A response without a tagged diff (an older hashlined behind hashline mcp
// --server) shows its unified diff and windows of fresh lines instead.
//
//	Updated main.go (4 lines). Lines after 2 moved down 1.
//	```diff
//	 2:16|	println("hi")
//	+3:d4|	println("hello")
//	 4:18|}
//	```
func formatEdit(r *hashlinev1.EditResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Updated %s (%s).", r.GetPath(), lines(int(r.GetTotalLines())))
	tagged := r.GetTaggedDiff()
	if tagged != "" {
		b.WriteString(" " + client.FormatShifts(r))
	}
	if r.GetRebasedFrom() != "" {
		b.WriteString("\nThe file had changed since you read it; your refs were rebased onto the current version")
		if mv := r.GetMoved(); len(mv) > 0 {
			b.WriteString(":")
			for _, m := range mv {
				fmt.Fprintf(&b, "\n\t%s is now line %d", m.GetRef(), m.GetTo())
			}
		} else {
			b.WriteString(".")
		}
	}
	if ws := r.GetWarnings(); len(ws) > 0 {
		b.WriteString("\nWarnings:")
		for _, w := range ws {
			b.WriteString("\n- ")
			b.WriteString(w)
		}
	}
	if tagged != "" {
		b.WriteString("\n")
		b.WriteString(fence("diff", tagged))
		return b.String()
	}
	if d := strings.TrimSuffix(r.GetDiff(), "\n"); d != "" {
		b.WriteString("\n")
		b.WriteString(fence("diff", d))
	}
	if wins := r.GetWindows(); len(wins) > 0 {
		b.WriteString("\nFresh refs around the changes:\n")
		texts := make([]string, 0, len(wins))
		for _, w := range wins {
			if w.GetText() != "" {
				texts = append(texts, w.GetText())
			}
		}
		b.WriteString(fence("", strings.Join(texts, "\n...\n")))
	}
	return b.String()
}

// formatGrep renders matches as the published hashline server does:
// PATH:>>LINE:HASH|CONTENT for a match, PATH:  LINE:HASH|CONTENT for
// context, "--" between groups when context was asked for.
func formatGrep(files []*hashlinev1.GrepFile, sum *hashlinev1.GrepSummary, context bool) string {
	if len(files) == 0 {
		return "No matches found."
	}
	var b strings.Builder
	n := 0
	for _, f := range files {
		prev := 0
		for _, l := range f.GetLines() {
			num := int(l.GetNumber())
			if context && n > 0 && (prev == 0 || num != prev+1) {
				b.WriteString("--\n")
			}
			prev = num
			n++
			b.WriteString(f.GetPath())
			if l.GetMatch() {
				b.WriteString(":>>")
			} else {
				b.WriteString(":  ")
			}
			fmt.Fprintf(&b, "%d:%s|%s\n", num, l.GetHash(), l.GetContent())
		}
	}
	out := fence("", strings.TrimSuffix(b.String(), "\n"))
	if sum.GetTruncated() {
		out += fmt.Sprintf("\n\nStopped at %d matching lines (the limit); narrow the pattern or path, or raise limit, to see more.", sum.GetMatches())
	}
	return out
}
