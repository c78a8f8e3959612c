package syntax

import "bytes"

// goHeader is put before a piece of a Go file that does not start it: the
// parser wants a package clause first.
const goHeader = "package p\n"

// chunk is the piece of after that holds the top-level declarations the
// hunk touched, ready for the language's parser, from the nearest line
// that starts one at or before the hunk to the next one after it; ok is
// false when there is no such piece worth parsing alone.
func chunk(lang Lang, after []byte, h hunk) (piece []byte, ok bool) {
	var top func(line []byte) bool
	switch lang {
	case LangGo:
		top = goTop
	case LangJS, LangJSX, LangTS, LangTSX:
		top = jsTop
	default:
		return nil, false
	}
	start := h.start
	for start > 0 && !top(after[start:]) {
		start = bytes.LastIndexByte(after[:start-1], '\n') + 1
	}
	end := h.aEnd
	for end < len(after) && !top(after[end:]) {
		i := bytes.IndexByte(after[end:], '\n')
		if i < 0 {
			end = len(after)
			break
		}
		end += i + 1
	}
	piece = after[start:end]
	if 2*len(piece) > len(after) {
		return nil, false // the whole file costs little more
	}
	if lang != LangGo {
		return piece, true
	}
	if start == 0 {
		return piece, true
	}
	// A package clause or an import placed after other declarations is an
	// error only in the whole file.
	if hasLinePrefix(piece, "package") || hasLinePrefix(piece, "import") {
		return nil, false
	}
	return append([]byte(goHeader), piece...), true
}

// goTop: a line that starts a top-level declaration in gofmt's layout.
func goTop(line []byte) bool {
	return hasWord(line, "func") || hasWord(line, "type") || hasWord(line, "var") ||
		hasWord(line, "const") || hasWord(line, "import") || hasWord(line, "package")
}

// jsTop: a line that starts a top-level statement in the usual layout of
// JavaScript and TypeScript.
func jsTop(line []byte) bool {
	if len(line) == 0 || line[0] < 'a' || line[0] > 'z' {
		return false
	}
	for _, w := range jsTopWords {
		if hasWord(line, w) {
			return true
		}
	}
	return false
}

var jsTopWords = []string{
	"export", "import", "function", "async", "class", "abstract", "const", "let", "var",
	"interface", "type", "enum", "declare", "namespace",
}

// hasWord: line starts with w followed by a space, a tab, '(' or '*'.
func hasWord(line []byte, w string) bool {
	if len(line) <= len(w) || string(line[:len(w)]) != w {
		return false
	}
	switch line[len(w)] {
	case ' ', '\t', '(', '*':
		return true
	}
	return false
}

// hasLinePrefix: some line of src starts with the word w.
func hasLinePrefix(src []byte, w string) bool {
	for len(src) > 0 {
		if hasWord(src, w) {
			return true
		}
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			return false
		}
		src = src[i+1:]
	}
	return false
}
