package main

import (
	"fmt"
	"strings"

	"github.com/hashline/hashline/internal/hashline"
)

// sizes are the file lengths every table covers.
var sizes = []int{100, 10_000, 100_000}

// sourceFile is n lines of Go-like code, about 28 bytes each (100k lines
// are 2.8 MB, the size docs/DESIGN.md §11 measures). Lines end in a word, not in
// an operator, so the peer's line-merge heuristics leave edits alone.
func sourceFile(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "\tv%06d := f(%d) // note\n", i, i%997)
	}
	return b.String()
}

// editCase is an edit that toggles a file between two states, so that it
// can be applied over and over: from state 0 the refs of refs[0] turn it
// into state 1, and refs[1] turn it back.
type editCase struct {
	name   string
	lines  []int     // 1-based lines the edit replaces
	states [2]string // whole file in state 0 / state 1
	refs   [2][]string
}

// newEditCase edits k lines spread through an n-line file.
func newEditCase(name string, n, k int) editCase {
	base := sourceFile(n)
	lines := strings.SplitAfter(base, "\n")
	lines = lines[:len(lines)-1] // SplitAfter leaves an empty tail
	c := editCase{name: name}
	edited := make([]string, len(lines))
	copy(edited, lines)
	for j := range k {
		ln := (j + 1) * n / (k + 1)
		if k == 1 {
			ln = n / 2
		}
		c.lines = append(c.lines, ln)
		old := strings.TrimSuffix(lines[ln-1], "\n")
		neu := fmt.Sprintf("\tv%06d := 42 // edited", ln-1)
		edited[ln-1] = neu + "\n"
		c.refs[0] = append(c.refs[0], hashline.Ref{Line: ln, Hash: hashline.Hasher{}.Sum(old)}.String())
		c.refs[1] = append(c.refs[1], hashline.Ref{Line: ln, Hash: hashline.Hasher{}.Sum(neu)}.String())
	}
	c.states[0] = base
	c.states[1] = strings.Join(edited, "")
	return c
}

// newLine is the content line ln gets when leaving state from.
func (c editCase) newLine(from, ln int) string {
	if from == 0 {
		return fmt.Sprintf("\tv%06d := 42 // edited", ln-1)
	}
	return fmt.Sprintf("\tv%06d := f(%d) // note", ln-1, (ln-1)%997)
}
