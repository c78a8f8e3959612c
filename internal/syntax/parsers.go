package syntax

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/evanw/esbuild/pkg/api"
	yaml "go.yaml.in/yaml/v3"
)

// parserFor is the whole-file parser of a language with one.
func parserFor(l Lang) parseFunc {
	switch l {
	case LangGo:
		return parseGo
	case LangJS, LangJSX:
		return esbuildParser(api.LoaderJSX)
	case LangTS:
		return esbuildParser(api.LoaderTS)
	case LangTSX:
		return esbuildParser(api.LoaderTSX)
	case LangJSON:
		return parseJSON
	case LangJSONC:
		return parseJSONC
	case LangYAML:
		return parseYAML
	}
	return nil
}

func parseGo(src []byte) []Diagnostic {
	// No object resolution and no comments: only the syntax is wanted.
	_, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err == nil {
		return nil
	}
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return []Diagnostic{{Line: 1, Message: err.Error(), Checker: CheckerGo}}
	}
	out := make([]Diagnostic, 0, len(list))
	for _, e := range list {
		out = append(out, Diagnostic{Line: e.Pos.Line, Column: e.Pos.Column, Message: e.Msg, Checker: CheckerGo})
	}
	return out
}

// esbuildParser parses with esbuild's Transform, which has no parse-only
// entry point: a source that parses goes on to be linked and printed,
// which costs more than the parse of a small one. A Transform stops after
// the parse when the source has errors, so the source is first parsed
// with a sentinel after it that is an error only where a source that
// parses leaves off (see sentinel); when that error is all there is, the
// source parses, at the cost of the parse alone. Any other answer, the
// source's own errors among them, comes from a Transform of the source as
// it is.
func esbuildParser(loader api.Loader) parseFunc {
	return func(src []byte) []Diagnostic {
		if esbuildParses(src, loader) {
			return nil
		}
		return esbuildErrors(transform(src, loader))
	}
}

// sentinel follows a JavaScript or TypeScript source in esbuildParses.
// "export {}" is a statement only at the top level of a module (nested in
// a block, a namespace, an unclosed construct or after a dangling
// "label:" or "if (x)" it is a syntax error, which stops the parse), and a
// "break" at the top level is an error esbuild reports after the parse,
// when it visits the statements, past every error of the parse itself. So
// the sentinel's "break" is the one error of a Transform only when the
// source parsed whole and left off at the top level, with no error of its
// own: an unclosed string, template, comment or JSX element swallows the
// sentinel into an error at the end of the file, and an error of the
// source is an error of its own beside the sentinel's.
const sentinel = "\nexport {}\nbreak\n"

// sentinelError is esbuild's text for the sentinel's error.
const sentinelError = `Cannot use "break" here:`

// esbuildParses reports whether src parses, by a Transform of src and the
// sentinel: true when the sentinel's error, on its own line after src, is
// its only error. A source whose last word is a keyword is not tried: some
// are an error at the end of the file and a name before a line break
// ("declare"), which the sentinel would hide.
func esbuildParses(src []byte, loader api.Loader) bool {
	if endsInKeyword(src) {
		return false
	}
	in := make([]byte, 0, len(src)+len(sentinel))
	in = append(append(in, src...), sentinel...)
	r := transform(in, loader)
	if len(r.Errors) != 1 {
		return false
	}
	e := r.Errors[0]
	return e.Text == sentinelError && e.Location != nil && e.Location.Column == 0 &&
		e.Location.LineText == "break" && e.Location.Line == esbuildLines(in[:len(in)-len("break\n")])+1
}

// endsInKeyword reports whether the last word of src, its trailing white
// space aside, is a JavaScript or TypeScript keyword, or a word with other
// than ASCII letters, digits, "_" and "$" (which is not looked into).
func endsInKeyword(src []byte) bool {
	t := bytes.TrimRightFunc(src, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
	end, ascii := len(t), true
	for len(t) > 0 {
		r, n := utf8.DecodeLastRune(t)
		if r < utf8.RuneSelf && !wordByte(byte(r)) || r >= utf8.RuneSelf && !unicode.In(r, unicode.L, unicode.N, unicode.M, unicode.Pc) {
			break
		}
		ascii = ascii && r < utf8.RuneSelf
		t = t[:len(t)-n]
	}
	w := src[len(t):end]
	if len(w) == 0 {
		return false
	}
	if !ascii {
		return true
	}
	_, ok := jsKeywords()[string(w)]
	return ok
}

func wordByte(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// jsKeywords are JavaScript's reserved words and TypeScript's contextual
// keywords: the words a parser may read differently at the end of the
// file than before a line break.
var jsKeywords = sync.OnceValue(func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`abstract accessor any as assert asserts async await bigint boolean break case
		catch class const constructor continue debugger declare default delete do else enum export extends
		false finally for from function get global if implements import in infer instanceof interface is
		keyof let module namespace never new null number object of out override package private protected
		public readonly require return satisfies set static string super switch symbol this throw true try
		type typeof undefined unique unknown using var void while with yield`) {
		m[w] = struct{}{}
	}
	return m
})

// esbuildLines is the number of line breaks in src as esbuild counts them
// for a message's line: "\r\n", "\r", "\n", U+2028 and U+2029.
func esbuildLines(src []byte) int {
	n := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\n':
			n++
		case c == '\r':
			n++
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && (src[i+2] == 0xA8 || src[i+2] == 0xA9):
			n++
			i += 2
		}
	}
	return n
}

// transform runs esbuild's Transform on src. Whitespace minified prints
// least, when a source that parses is printed. The input is not kept past
// the call, so it is not copied.
func transform(src []byte, loader api.Loader) api.TransformResult {
	return api.Transform(unsafe.String(unsafe.SliceData(src), len(src)), api.TransformOptions{
		Loader:           loader,
		MinifyWhitespace: true,
		LogLevel:         api.LogLevelSilent,
	})
}

func esbuildErrors(r api.TransformResult) []Diagnostic {
	if len(r.Errors) == 0 {
		return nil
	}
	out := make([]Diagnostic, 0, len(r.Errors))
	for _, m := range r.Errors {
		d := Diagnostic{Line: 1, Message: m.Text, Checker: CheckerESBuild}
		if m.Location != nil {
			d.Line, d.Column = m.Location.Line, m.Location.Column+1
		}
		out = append(out, d)
	}
	return out
}

func parseJSON(src []byte) []Diagnostic {
	return jsonDiag(src, src)
}

// jsonDiag validates text (src itself, or src with its comments blanked)
// and positions its first error in src.
func jsonDiag(src, text []byte) []Diagnostic {
	if len(bytes.TrimSpace(text)) == 0 {
		// An empty file is not JSON, but it is what an agent starts from.
		return nil
	}
	var raw json.RawMessage
	err := json.Unmarshal(text, &raw)
	if err == nil {
		return nil
	}
	off := len(src)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset)
		// Offset is the count of bytes read, the bad byte included.
		if off > 0 && off <= len(src) && se.Error() != "unexpected end of JSON input" {
			off--
		}
	}
	line, col := lineCol(src, off)
	return []Diagnostic{{Line: line, Column: col, Message: err.Error(), Checker: CheckerJSON}}
}

// parseJSONC accepts // and /* */ comments and trailing commas: it blanks
// them (keeping every newline, so offsets stay) and validates the rest.
func parseJSONC(src []byte) []Diagnostic {
	return jsonDiag(src, stripJSONC(src))
}

func stripJSONC(src []byte) []byte {
	out := bytes.Clone(src)
	inStr := false
	lastComma := -1 // a comma with only blanks and comments after it so far
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr, lastComma = true, -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			out[i], out[i+1] = ' ', ' '
			for i += 2; i < len(out) && !(out[i] == '*' && i+1 < len(out) && out[i+1] == '/'); i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			if i < len(out) {
				out[i], out[i+1] = ' ', ' '
				i++
			}
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			lastComma = -1
		}
	}
	return out
}

// yamlPrefix strips the place from go.yaml.in/yaml's error texts ("yaml:
// line 3: did not find expected key"): the line it gives is where the
// enclosing collection starts, not where the parser stopped.
var yamlPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (line \d+: )?`) })

// yamlError is the first error of the YAML stream src, if any.
func yamlError(src []byte) (string, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return "", false
		}
		return yamlPrefix().ReplaceAllString(err.Error(), ""), true
	}
}

// parseYAML finds where the parser stops as the first line at which a
// prefix of the file fails with the same error as the whole of it, by
// bisection (a few more parses, on files with an error only).
func parseYAML(src []byte) []Diagnostic {
	msg, bad := yamlError(src)
	if !bad {
		return nil
	}
	ends := lineEnds(src)
	lo, hi := 1, len(ends)
	for lo < hi {
		mid := (lo + hi) / 2
		if m, bad := yamlError(src[:ends[mid-1]]); bad && m == msg {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return []Diagnostic{{Line: lo, Message: msg, Checker: CheckerYAML}}
}

// lineEnds is the offset just past each line of src.
func lineEnds(src []byte) []int {
	var ends []int
	for i, c := range src {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(src) == 0 || src[len(src)-1] != '\n' {
		ends = append(ends, len(src))
	}
	return ends
}

// lineCol is the 1-based line and byte column of offset off in src.
func lineCol(src []byte, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line = 1 + bytes.Count(src[:off], nl)
	return line, off - (bytes.LastIndexByte(src[:off], '\n') + 1) + 1
}

// lineCount is the number of lines of src: a last line without a newline
// counts; an empty file has one (empty) line.
func lineCount(src []byte) int {
	n := bytes.Count(src, nl)
	if len(src) == 0 || src[len(src)-1] != '\n' {
		n++
	}
	return max(n, 1)
}

var nl = []byte{'\n'}
