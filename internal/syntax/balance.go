package syntax

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// profile is what the balance check knows of a language's lexical layout.
// Only what it can find reliably line by line is listed: a string delimiter
// a language uses for anything else too (Rust's lifetimes, a shell's case
// patterns) is left out, and an unknown language gets no strings or
// comments at all, its brackets counted as they stand.
type profile struct {
	lineComments []string
	hashComment  bool        // '#' starts a comment at a line's start or after a blank
	blocks       [][2]string // block comments, never nested
	quotes       string      // single-line string delimiters, backslash escapes
	triple       bool        // """ and ''' open strings that span lines
	brackets     string      // the opening brackets counted, of "([{"

	starts [256]bool // the bytes lex stops at; built by init
}

// setup fills in the profiles' starts, once, when the first file is
// checked rather than when the program starts.
var setup = sync.OnceFunc(func() {
	all := []*profile{&plain, &shell}
	for _, p := range profiles() {
		all = append(all, p)
	}
	for _, p := range profilesByName() {
		all = append(all, p)
	}
	for _, p := range all {
		for _, c := range []byte("()[]{}" + p.quotes) {
			p.starts[c] = true
		}
		p.starts['#'] = p.hashComment
		for _, lc := range p.lineComments {
			p.starts[lc[0]] = true
		}
		for _, b := range p.blocks {
			p.starts[b[0][0]] = true
		}
	}
})

var (
	cLike  = profile{lineComments: []string{"//"}, blocks: [][2]string{{"/*", "*/"}}, quotes: `"'`, brackets: "([{"}
	jvm    = profile{lineComments: []string{"//"}, blocks: [][2]string{{"/*", "*/"}}, quotes: `"'`, triple: true, brackets: "([{"}
	rust   = profile{lineComments: []string{"//"}, blocks: [][2]string{{"/*", "*/"}}, quotes: `"`, brackets: "([{"}
	python = profile{hashComment: true, quotes: `"'`, triple: true, brackets: "([{"}
	ruby   = profile{hashComment: true, quotes: `"'`, brackets: "([{"}
	shell  = profile{hashComment: true, brackets: "[{"}
	makef  = profile{hashComment: true, brackets: "({"}
	sql    = profile{lineComments: []string{"--"}, blocks: [][2]string{{"/*", "*/"}}, quotes: `'"`, brackets: "("}
	lua    = profile{lineComments: []string{"--"}, quotes: `"'`, brackets: "([{"}
	css    = profile{blocks: [][2]string{{"/*", "*/"}}, quotes: `"'`, brackets: "([{"}
	scss   = profile{lineComments: []string{"//"}, blocks: [][2]string{{"/*", "*/"}}, quotes: `"'`, brackets: "([{"}
	markup = profile{blocks: [][2]string{{"<!--", "-->"}}, brackets: "{"}
	toml   = profile{hashComment: true, quotes: `"'`, brackets: "[{"}
	ini    = profile{hashComment: true, brackets: "["}
	plain  = profile{brackets: "([{"}
)

var profiles = sync.OnceValue(func() map[string]*profile {
	return map[string]*profile{
		".c": &cLike, ".h": &cLike, ".cc": &cLike, ".cpp": &cLike, ".cxx": &cLike, ".hpp": &cLike,
		".hh": &cLike, ".m": &cLike, ".mm": &cLike, ".cs": &cLike, ".java": &cLike, ".proto": &cLike,
		".php": &cLike, ".zig": &cLike, ".glsl": &cLike, ".hlsl": &cLike, ".cu": &cLike, ".d": &cLike,
		".kt": &jvm, ".kts": &jvm, ".scala": &jvm, ".swift": &jvm, ".groovy": &jvm, ".gradle": &jvm, ".dart": &jvm,
		".rs": &rust,
		".py": &python, ".pyi": &python,
		".rb": &ruby, ".rake": &ruby, ".pl": &ruby, ".pm": &ruby, ".r": &ruby, ".jl": &ruby, ".ex": &ruby, ".exs": &ruby,
		".sh": &shell, ".bash": &shell, ".zsh": &shell, ".fish": &shell, ".ksh": &shell,
		".mk":   &makef,
		".sql":  &sql,
		".lua":  &lua,
		".css":  &css,
		".scss": &scss, ".less": &scss,
		".html": &markup, ".htm": &markup, ".xml": &markup, ".svg": &markup, ".vue": &markup, ".svelte": &markup,
		".toml": &toml,
		".ini":  &ini, ".cfg": &ini, ".conf": &ini, ".properties": &ini,
	}
})

var profilesByName = sync.OnceValue(func() map[string]*profile {
	return map[string]*profile{
		"Makefile": &makef, "makefile": &makef, "GNUmakefile": &makef,
		"Dockerfile": &shell, "Containerfile": &shell, "Jenkinsfile": &jvm, "Rakefile": &ruby,
		"Gemfile": &ruby, "BUILD": &python, "WORKSPACE": &python, "BUCK": &python,
	}
})

func profileOf(name string) *profile {
	base := path.Base(filepath.ToSlash(name))
	if p, ok := profilesByName()[base]; ok {
		return p
	}
	if strings.HasPrefix(base, "Dockerfile.") {
		return &shell
	}
	if p, ok := profiles()[strings.ToLower(path.Ext(base))]; ok {
		return p
	}
	return &plain
}

// event is a bracket or an unclosed string or comment found by lex.
type event struct {
	pos  int
	c    byte // the bracket; or '"', '\'', '`' for a string, '/' for a block comment
	open bool // for strings and comments: never closed
}

// lex calls visit with each bracket in code (not in a string or a comment)
// of the profile's kinds, and with each string that its line ends before it
// closes and each multi-line string or block comment the file ends inside.
func lex(src []byte, p *profile, visit func(event)) {
	setup()
	n := len(src)
	for i := 0; i < n; i++ {
		c := src[i]
		if !p.starts[c] {
			continue
		}
		switch {
		case c == '(' || c == '[' || c == '{':
			if strings.IndexByte(p.brackets, c) >= 0 {
				visit(event{pos: i, c: c, open: true})
			}
			continue
		case c == ')' || c == ']' || c == '}':
			if strings.IndexByte(p.brackets, opener(c)) >= 0 {
				visit(event{pos: i, c: c})
			}
			continue
		case c == '#' && p.hashComment && (i == 0 || isBlank(src[i-1])):
			i = skipLine(src, i)
			continue
		}
		if p.triple && (c == '"' || c == '\'') && i+2 < n && src[i+1] == c && src[i+2] == c {
			end := bytes.Index(src[i+3:], src[i:i+3])
			if end < 0 {
				visit(event{pos: i, c: c, open: true})
				return
			}
			i += 3 + end + 2
			continue
		}
		if strings.IndexByte(p.quotes, c) >= 0 {
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= n || src[j] != c {
				visit(event{pos: i, c: c, open: true})
			}
			i = j
			continue
		}
		if lineComment(src[i:], p) {
			i = skipLine(src, i)
			continue
		}
		for _, b := range p.blocks {
			if bytes.HasPrefix(src[i:], []byte(b[0])) {
				end := bytes.Index(src[i+len(b[0]):], []byte(b[1]))
				if end < 0 {
					visit(event{pos: i, c: '/', open: true})
					return
				}
				i += len(b[0]) + end + len(b[1]) - 1
				break
			}
		}
	}
}

func lineComment(s []byte, p *profile) bool {
	for _, lc := range p.lineComments {
		if bytes.HasPrefix(s, []byte(lc)) {
			return true
		}
	}
	return false
}

// skipLine is the index of the newline ending the line at i (or the end).
func skipLine(src []byte, i int) int {
	if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(src)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func opener(c byte) byte {
	switch c {
	case ')':
		return '('
	case ']':
		return '['
	case '}':
		return '{'
	}
	return c
}

func closer(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	case '{':
		return '}'
	}
	return c
}

// special: the bytes that can change what lex finds.
func (p *profile) special() string {
	s := "()[]{}\\" + p.quotes
	if p.hashComment {
		s += "#"
	}
	for _, lc := range p.lineComments {
		s += lc
	}
	for _, b := range p.blocks {
		s += b[0] + b[1]
	}
	return s
}

// tally is what lex found in one file.
type tally struct {
	net      [3]int  // opens less closes per kind: ( [ {
	unclosed int     // strings and comments never closed
	hunk     []event // the events within the hunk
}

func kind(c byte) int { return strings.IndexByte("([{", opener(c)) }

// tallyOf counts what lex finds in src, and with keep holds the events
// within from..to (the hunk) for the positions of diagnostics: a file has
// as many events as brackets, and only a check that reports needs them.
func tallyOf(src []byte, p *profile, from, to int, keep bool) tally {
	var t tally
	lex(src, p, func(e event) {
		if keep && e.pos >= from && e.pos < to {
			t.hunk = append(t.hunk, e)
		}
		if k := kind(e.c); k >= 0 {
			if e.open {
				t.net[k]++
			} else {
				t.net[k]--
			}
			return
		}
		t.unclosed++
	})
	return t
}

// balance reports what the edit did to a file that was balanced: brackets
// that no longer pair up, a string or a comment that no longer closes.
// Nothing is reported for a file that was not balanced before, nor for a
// new file (there is no before to compare with; a new file in an unknown
// language is as likely prose as code).
func balance(name string, before, after []byte) []Diagnostic {
	if len(before) == 0 {
		return nil
	}
	p := profileOf(name)
	h := hunkOf(before, after)
	if !bytes.ContainsAny(before[h.start:h.bEnd], p.special()) && !bytes.ContainsAny(after[h.start:h.aEnd], p.special()) {
		return nil // the edit added and removed no bracket, quote or comment
	}
	tb := tallyOf(before, p, 0, 0, false)
	ta := tallyOf(after, p, 0, 0, false)
	broke := tb.unclosed == 0 && ta.unclosed > 0
	for k := range 3 {
		broke = broke || tb.net[k] == 0 && ta.net[k] != 0
	}
	if !broke {
		return nil
	}
	ta = tallyOf(after, p, h.start, h.aEnd, true)
	var out []Diagnostic
	diag := func(pos int, msg string) {
		line, col := lineCol(after, pos)
		out = append(out, Diagnostic{Line: line, Column: col, Message: msg, Checker: CheckerBalance})
	}
	for k := range 3 {
		if tb.net[k] != 0 || ta.net[k] == 0 {
			continue
		}
		o, c := "([{"[k], closer("([{"[k])
		pos, found := unpaired(ta.hunk, o, ta.net[k] > 0)
		if !found {
			pos = h.start
		}
		if d := ta.net[k]; d > 0 {
			diag(pos, fmt.Sprintf("%q is not closed: the edit left the file with %d more %q than %q", o, d, o, c))
		} else {
			diag(pos, fmt.Sprintf("%q closes nothing: the edit left the file with %d more %q than %q", c, -d, c, o))
		}
	}
	if tb.unclosed == 0 && ta.unclosed > 0 {
		// The first in the hunk; none there means the edit changed what a
		// string or comment before or after it reaches.
		pos, what := h.start, "a string or comment is not closed since the edit"
		for _, e := range ta.hunk {
			if kind(e.c) < 0 {
				pos, what = e.pos, fmt.Sprintf("string opened with %q is not closed", e.c)
				if e.c == '/' {
					what = "comment is not closed"
				}
				break
			}
		}
		diag(pos, what)
	}
	return finish(out, after)
}

// unpaired finds, among the hunk's events of the bracket o, the last
// opening bracket left open (opens) or the first closing one that closes
// nothing within the hunk.
func unpaired(es []event, o byte, opens bool) (int, bool) {
	var stack []int
	for _, e := range es {
		if opener(e.c) != o || kind(e.c) < 0 {
			continue
		}
		if e.open {
			stack = append(stack, e.pos)
			continue
		}
		if len(stack) == 0 {
			if !opens {
				return e.pos, true
			}
			continue
		}
		stack = stack[:len(stack)-1]
	}
	if opens && len(stack) > 0 {
		return stack[len(stack)-1], true
	}
	return 0, false
}
