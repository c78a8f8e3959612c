package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// A source is a real file the corpus takes changes from: Go from Go's own
// source tree, TypeScript and JSON from installed npm packages. None is
// this repository's code or fixtures.
type source struct {
	lang  string // "go", "ts" or "json"
	rel   string // where it came from, for the report: "go:net/http/server.go"
	lines []string
	text  string           // the whole file
	notes []bool           // lines that are comments, in a block comment or after //
	decl  bool             // a TypeScript declaration file (.d.ts): no statements to add
	uses  map[string][]int // the lines (0-based, ascending, once each) each identifier is on
}

// An entry is a candidate file: its path and the name it is reported by.
type entry struct{ lang, path, rel string }

// The files a case may use: small enough that one read_file shows all of
// them on both servers, and plain enough (LF endings, no BOM, valid UTF-8,
// no very long line) that the only difference between the two servers is
// how they take the mistake.
const (
	minLines = 40
	// minJSONLines: JSON files are mostly short package manifests; one
	// of 20 lines still has entries of every kind the JSON classes change.
	minJSONLines = 20
	maxLines     = 1500
	maxBytes     = 96 << 10
	maxLineSize  = 400
)

// sourcePaths lists the candidate files of each language, sorted so that
// the same trees give the same corpus: *.go under goSrc (outside testdata),
// *.ts (declarations included) and *.json under each of tsRoots.
func sourcePaths(goSrc string, tsRoots []string) (map[string][]entry, error) {
	out := map[string][]entry{}
	walk := func(root string, langOf func(string) string) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if lang := langOf(d.Name()); d.Type().IsRegular() && lang != "" {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				out[lang] = append(out[lang], entry{lang, p, filepath.ToSlash(rel)})
			}
			return nil
		})
	}
	if err := walk(goSrc, func(n string) string { return suffixLang(n, ".go", "go") }); err != nil {
		return nil, err
	}
	for _, r := range tsRoots {
		if err := walk(r, func(n string) string { return suffixLang(n, ".ts", "ts") + suffixLang(n, ".json", "json") }); err != nil {
			return nil, err
		}
	}
	for _, l := range out {
		slices.SortFunc(l, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	}
	return out, nil
}

// suffixLang is lang if name ends in suffix, else "".
func suffixLang(name, suffix, lang string) string {
	if strings.HasSuffix(name, suffix) {
		return lang
	}
	return ""
}

// loadSource reads e, or returns nil if the file is not one the corpus
// uses (see the constants above).
func loadSource(e entry) *source {
	b, err := os.ReadFile(e.path)
	if err != nil || len(b) > maxBytes || !utf8.Valid(b) || !bytes.HasSuffix(b, []byte("\n")) ||
		bytes.ContainsAny(b, "\r\x00") || bytes.HasPrefix(b, []byte("\ufeff")) {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	least := minLines
	if e.lang == "json" {
		least = minJSONLines
	}
	if len(lines) < least || len(lines) > maxLines {
		return nil
	}
	for _, l := range lines {
		if len(l) > maxLineSize {
			return nil
		}
	}
	notes := make([]bool, len(lines))
	inBlock := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		notes[i] = inBlock || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
		if inBlock {
			inBlock = !strings.Contains(l, "*/")
		} else if j := strings.LastIndex(code(l), "/*"); j >= 0 {
			inBlock = !strings.Contains(l[j:], "*/")
		}
	}
	uses := map[string][]int{}
	for i, l := range lines {
		for _, id := range names(l) {
			if u := uses[id]; len(u) == 0 || u[len(u)-1] != i {
				uses[id] = append(u, i)
			}
		}
	}
	return &source{lang: e.lang, rel: e.lang + ":" + e.rel, lines: lines, text: string(b), notes: notes, decl: strings.HasSuffix(e.path, ".d.ts"), uses: uses}
}

// join is the file of lines, each ending in "\n".
func join(lines []string) []byte {
	return []byte(strings.Join(lines, "\n") + "\n")
}

var identRE = regexp.MustCompile(`[A-Za-z_$][A-Za-z0-9_$]*`)

// code is line with its string literals and its trailing // comment blanked
// out, byte for byte, so that what identRE finds in it is code at the same
// offsets in line. A string that does not close on the line runs to its
// end; that is a guess, and only costs a candidate.
func code(line string) string {
	b := []byte(line)
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == '\\' && i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
				continue
			}
			if c == quote {
				quote = 0
			}
			b[i] = ' '
		case c == '"' || c == '\'' || c == '`':
			quote = c
			b[i] = ' '
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for j := i; j < len(b); j++ {
				b[j] = ' '
			}
			return string(b)
		}
	}
	return string(b)
}

// names are the identifiers of line's code, with a field or method after
// a dot marked by a leading "."; a rename leaves those alone.
func names(line string) []string {
	c := code(line)
	var out []string
	for _, m := range identRE.FindAllStringIndex(c, -1) {
		id := c[m[0]:m[1]]
		if m[0] > 0 && c[m[0]-1] == '.' {
			id = "." + id
		}
		out = append(out, id)
	}
	return out
}

// keywords are never renamed: Go's and TypeScript's keywords and the names
// a rename of a local would not touch.
var keywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`break case chan const continue default defer else fallthrough for func go goto if
		import interface map package range return select struct switch type var nil true false iota string int int8 int16
		int32 int64 uint uint8 uint16 uint32 uint64 uintptr byte rune bool error float32 float64 complex64 complex128 any
		len cap make new append copy delete panic recover print println close min max clear
		let function class extends implements export from as async await this super typeof instanceof void null undefined
		while do catch try finally throw yield in of enum declare readonly public private protected static abstract
		keyof infer is never unknown number boolean object symbol bigint namespace module require get set constructor`) {
		m[w] = true
	}
	return m
}()

// indentOf is the leading spaces and tabs of s.
func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

// isCode reports whether line i (0-based) is code: not blank, not a comment.
func (s *source) isCode(i int) bool { return !s.notes[i] && !blank(s.lines[i]) }

// blank reports whether a line has nothing but whitespace.
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// squeeze is s without any whitespace: two lines that squeeze the same
// differ only in whitespace, which the hash ignores too.
func squeeze(s string) string {
	return strings.Join(strings.Fields(s), "")
}
