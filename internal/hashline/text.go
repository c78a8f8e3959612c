package hashline

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// SplitText splits client text into lines the way Python's str.splitlines
// does for "\n" and "\r\n": "" is zero lines, "a\n" is one line and "\n" is
// one empty line. A lone "\r" is content, because classic-Mac line endings
// are far rarer than a literal carriage return a model means to keep.
func SplitText(text string) []string {
	if text == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(text, "\n")+1)
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, strings.TrimSuffix(text[:i], "\r"))
		text = text[i+1:]
	}
	return lines
}

// tagPrefixLen returns the length of the hashline prefix "LINE:HASH|" at the
// start of line, optionally preceded by a ">>>"/">>" marker or by spaces (as
// in grep and stale-reference output), or -1 if line has none.
func tagPrefixLen(line string) int {
	i := 0
	switch {
	case strings.HasPrefix(line, ">>>"):
		i = 3
	case strings.HasPrefix(line, ">>"):
		i = 2
	}
	for i < len(line) && line[i] == ' ' {
		i++
	}
	d := i
	for i < len(line) && '0' <= line[i] && line[i] <= '9' {
		i++
	}
	if i == d || i >= len(line) || line[i] != ':' {
		return -1
	}
	i++
	h := i
	for i < len(line) && i-h <= MaxHashLen && isHex(line[i]) {
		i++
	}
	if n := i - h; n < MinHashLen || n > MaxHashLen || i >= len(line) || line[i] != '|' {
		return -1
	}
	return i + 1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// StripTagPrefixes removes hashline prefixes from lines a model pasted back
// from read output. It strips only when every line (and at least one) carries
// a prefix: a single unprefixed line means the text is real content that
// merely looks like a tag, and it must not be altered. It returns the
// stripped lines and true, or the input unchanged and false.
func StripTagPrefixes(lines []string) ([]string, bool) {
	if len(lines) == 0 {
		return lines, false
	}
	for _, l := range lines {
		if tagPrefixLen(l) < 0 {
			return lines, false
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[tagPrefixLen(l):]
	}
	return out, true
}

// cutMarker is what follows a cut line; the total length tells a model that
// the line is longer than shown and that it can still be replaced by tag.
func appendCutMarker(dst []byte, total int) []byte {
	dst = append(dst, " …[line cut: "...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	return append(dst, " bytes total]"...)
}

// cutPoint returns the length to keep of a line longer than max bytes: at
// most max, backed off to a UTF-8 rune boundary so a cut never splits a rune.
func cutPoint(content string, max int) int {
	i := max
	for i > 0 && !utf8.RuneStart(content[i]) {
		i--
	}
	return i
}

// CutLine shortens content to at most maxLineBytes bytes (at a UTF-8
// boundary) followed by a marker such as " …[line cut: 12345 bytes total]".
// Content within the limit, or any content when maxLineBytes <= 0, is
// returned unchanged. The hash of a cut line must still be computed over the
// whole content.
func CutLine(content string, maxLineBytes int) string {
	if maxLineBytes <= 0 || len(content) <= maxLineBytes {
		return content
	}
	i := cutPoint(content, maxLineBytes)
	b := make([]byte, 0, i+40)
	b = append(b, content[:i]...)
	return string(appendCutMarker(b, len(content)))
}
