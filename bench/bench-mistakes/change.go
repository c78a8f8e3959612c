package main

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A change is a real one-hunk change to a source, the edit a model means
// to make: lines start..end (1-based, inclusive) replaced by text, or, if
// insert, text inserted after line start.
type change struct {
	kind       string // what it does, for the details: "rename", "condition", ...
	insert     bool
	start, end int
	text       []string
}

// apply returns lines with the change made.
func (c change) apply(lines []string) []string {
	out := slices.Clone(lines[:c.start-1])
	if c.insert {
		out = append(out, lines[c.start-1])
		out = append(out, c.text...)
		return append(out, lines[c.start:]...)
	}
	out = append(out, c.text...)
	return append(out, lines[c.end:]...)
}

// withText is c with text in place of its own.
func (c change) withText(text []string) change {
	c.text = text
	return c
}

// old is the lines the change replaces (none for an insertion).
func (c change) old(lines []string) []string {
	if c.insert {
		return nil
	}
	return lines[c.start-1 : c.end]
}

// candidates lists the changes of src a model might make, in an order rng
// chooses: replacements (a local renamed in a few lines, a condition
// flipped, a number changed, a log line added after a statement) unless
// insert, insertions (a log line at the start of a block) if insert. The
// kinds take turns, in an order rng chooses, so that a file with many
// candidates of one kind does not make that kind most of the corpus.
func candidates(src *source, rng *rand.Rand, insert bool) []change {
	kinds := []func(*source, int, *rand.Rand) (change, bool){rename, condition, literal, logAfter}
	if insert {
		kinds = kinds[:0]
		if !src.decl {
			kinds = append(kinds, logInsert)
		}
	} else if src.decl {
		kinds = kinds[:3]
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	byKind := make([][]change, len(kinds))
	for i := range src.lines {
		if !src.isCode(i) {
			continue
		}
		for k, f := range kinds {
			if c, ok := f(src, i, rng); ok {
				byKind[k] = append(byKind[k], c)
			}
		}
	}
	var out []change
	for k := range byKind {
		rng.Shuffle(len(byKind[k]), func(i, j int) { byKind[k][i], byKind[k][j] = byKind[k][j], byKind[k][i] })
	}
	for i := 0; ; i++ {
		added := false
		for _, cs := range byKind {
			if i < len(cs) {
				out = append(out, cs[i])
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// logLine is the statement a model adds to trace a run, in src's language.
func logLine(src *source, indent string, n int) string {
	if src.lang == "go" {
		return fmt.Sprintf("%sprintln(\"hashline: checkpoint %d\")", indent, n)
	}
	return fmt.Sprintf("%sconsole.log(\"hashline: checkpoint %d\");", indent, n)
}

// rename: a local renamed. The identifier must be one whose every use in
// the file's code lies on line i and at most five lines after it, on at
// least two lines, and never after a dot (a field or method of the same
// name) nor inside a string or comment: the rename is then complete within
// the hunk.
func rename(src *source, i int, rng *rand.Rand) (change, bool) {
	ls := src.lines
	for _, id := range names(ls[i]) {
		if len(id) < 2 || keywords[id] || id[0] == '.' || src.uses["."+id] != nil || src.uses[id][0] != i || !declares(ls[i], id) {
			continue
		}
		u := src.uses[id]
		last := u[len(u)-1]
		if last == i || last > i+5 {
			continue
		}
		to := id + []string{"Next", "Cur", "Val", "2"}[rng.IntN(4)]
		if src.uses[to] != nil || strings.Contains(src.text, to) {
			continue
		}
		var text []string
		for j := i; j <= last; j++ {
			text = append(text, replaceWord(ls[j], id, to))
		}
		if slices.Equal(text, ls[i:last+1]) {
			continue
		}
		return change{kind: "rename", start: i + 1, end: last + 1, text: text}, true
	}
	return change{}, false
}

// declares reports whether line declares id, as far as one line shows: id
// assigned (":=", "=", or first of several names before ":="), after let,
// const or var, or a parameter of a function declared on the line.
func declares(line, id string) bool {
	c := code(line)
	for _, m := range identRE.FindAllStringIndex(c, -1) {
		if c[m[0]:m[1]] != id {
			continue
		}
		rest := strings.TrimLeft(c[m[1]:], " ")
		before := strings.TrimRight(c[:m[0]], " ")
		switch {
		case strings.HasPrefix(rest, ":="), strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "=="),
			strings.HasPrefix(rest, ",") && strings.Contains(rest, ":="),
			strings.HasSuffix(before, "let"), strings.HasSuffix(before, "const"), strings.HasSuffix(before, "var"),
			strings.Contains(before, "(") && (strings.Contains(c, "func ") || strings.Contains(c, "function ") || strings.Contains(c, "=>")):
			return true
		}
	}
	return false
}

// replaceWord replaces every whole-word id in the code of s (not in its
// strings or comment) by to.
func replaceWord(s, id, to string) string {
	c := code(s)
	var b strings.Builder
	prev := 0
	for _, m := range identRE.FindAllStringIndex(c, -1) {
		if c[m[0]:m[1]] == id && (m[0] == 0 || c[m[0]-1] != '.') {
			b.WriteString(s[prev:m[0]])
			b.WriteString(to)
			prev = m[1]
		}
	}
	b.WriteString(s[prev:])
	return b.String()
}

var flips = [][2]string{{" == ", " != "}, {" != ", " == "}, {" <= ", " < "}, {" >= ", " > "}, {" < ", " <= "}, {" > ", " >= "}, {" && ", " || "}, {" || ", " && "}}

// condition: the first comparison or logical operator of an if, for or
// while condition on line i, turned into another.
func condition(src *source, i int, _ *rand.Rand) (change, bool) {
	t := strings.TrimSpace(src.lines[i])
	if !(strings.HasPrefix(t, "if ") || strings.HasPrefix(t, "} else if ") || strings.HasPrefix(t, "for ") || strings.HasPrefix(t, "while (") || strings.HasPrefix(t, "if (")) {
		return change{}, false
	}
	best, at := -1, len(src.lines[i])
	for k, f := range flips {
		if j := strings.Index(src.lines[i], f[0]); j >= 0 && j < at {
			best, at = k, j
		}
	}
	if best < 0 {
		return change{}, false
	}
	l := src.lines[i]
	n := l[:at] + flips[best][1] + l[at+len(flips[best][0]):]
	return change{kind: "condition", start: i + 1, end: i + 1, text: []string{n}}, true
}

var numberRE = regexp.MustCompile(`(^|[^\w.])([0-9]+)([^\w.]|$)`)

// literal: the first decimal number on code line i, incremented.
func literal(src *source, i int, _ *rand.Rand) (change, bool) {
	l := src.lines[i]
	t := strings.TrimSpace(l)
	if strings.HasPrefix(t, "import") || strings.HasPrefix(t, "package") {
		return change{}, false
	}
	m := numberRE.FindStringSubmatchIndex(l)
	if m == nil {
		return change{}, false
	}
	v, err := strconv.Atoi(l[m[4]:m[5]])
	if err != nil || l[m[4]] == '0' && m[5]-m[4] > 1 {
		return change{}, false
	}
	n := l[:m[4]] + strconv.Itoa(v+1) + l[m[5]:]
	return change{kind: "literal", start: i + 1, end: i + 1, text: []string{n}}, true
}

// logAfter: a log line after the indented statement on line i, the
// statement kept: one line replaced by two.
func logAfter(src *source, i int, _ *rand.Rand) (change, bool) {
	ls := src.lines
	l := ls[i]
	ind := indentOf(l)
	if ind == "" || i+1 >= len(ls) || indentOf(ls[i+1]) != ind || !src.isCode(i+1) || continues(ls[i+1]) ||
		!(strings.HasSuffix(l, ")") || src.lang == "ts" && strings.HasSuffix(l, ");")) {
		return change{}, false
	}
	return change{kind: "log line", start: i + 1, end: i + 1, text: []string{l, logLine(src, ind, i+1)}}, true
}

// continues reports whether line carries on the statement of the line
// before it, so that nothing can go between them: it starts with neither
// a name nor a keyword (".then(f)", "+ x", "? a : b"), or with a keyword
// that cannot start a statement ("else", "catch").
func continues(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	if c := t[0]; !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return true
	}
	return slices.Contains([]string{"else", "catch", "finally", "as", "in", "of", "instanceof", "satisfies"}, identRE.FindString(t))
}

// logInsert: a log line inserted at the start of the block that line i
// opens, indented as the block's first line.
func logInsert(src *source, i int, _ *rand.Rand) (change, bool) {
	ls := src.lines
	if !strings.HasSuffix(ls[i], "{") || i+1 >= len(ls) || !src.isCode(i+1) {
		return change{}, false
	}
	ind := indentOf(ls[i+1])
	if len(ind) <= len(indentOf(ls[i])) {
		return change{}, false
	}
	return change{kind: "insert log line", insert: true, start: i + 1, end: i, text: []string{logLine(src, ind, i+1)}}, true
}
