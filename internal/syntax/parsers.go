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
	"sync"
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

func esbuildParser(loader api.Loader) parseFunc {
	return func(src []byte) []Diagnostic {
		// Transform parses and prints; whitespace minified prints least.
		// The input is not kept past the call, so it is not copied.
		r := api.Transform(unsafe.String(unsafe.SliceData(src), len(src)), api.TransformOptions{
			Loader:           loader,
			MinifyWhitespace: true,
			LogLevel:         api.LogLevelSilent,
		})
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
