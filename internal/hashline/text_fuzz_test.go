package hashline

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSplitText checks that SplitText loses nothing but the line endings:
// walking the text, every line is followed by "\n" or "\r\n" (or is the
// last), and the line count is what splitlines gives.
func FuzzSplitText(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "\n", "\n\n", "a\r\nb", "a\r", "a\r\r\n", "\r\n", "a\nb\r\nc", "\x00\n", "é\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := SplitText(text)
		want := strings.Count(text, "\n")
		if text != "" && !strings.HasSuffix(text, "\n") {
			want++
		}
		if len(lines) != want {
			t.Fatalf("SplitText(%q) = %d lines, want %d", text, len(lines), want)
		}
		rest := text
		for i, l := range lines {
			if strings.Contains(l, "\n") {
				t.Fatalf("line %d %q holds a newline", i, l)
			}
			var ok bool
			if rest, ok = strings.CutPrefix(rest, l); !ok {
				t.Fatalf("line %d %q is not next in %q", i, l, rest)
			}
			switch {
			case strings.HasPrefix(rest, "\r\n"):
				rest = rest[2:]
			case strings.HasPrefix(rest, "\n"):
				rest = rest[1:]
			case rest == "" && i == len(lines)-1:
			default:
				t.Fatalf("line %d %q is followed by %q, not a line ending", i, l, rest)
			}
		}
		if rest != "" {
			t.Fatalf("%q left over after the lines", rest)
		}
	})
}

// FuzzStripTagPrefixes checks that pasted read output comes back exactly:
// any content behind a tag is returned as it was, even content that itself
// looks like a tag, and text with one untagged line is never touched.
func FuzzStripTagPrefixes(f *testing.F) {
	f.Add(12, "3f", "content", "plain")
	f.Add(1, "00", "1:ab|looks tagged", "")
	f.Add(7, "abcdef12", "", ">>> 2:00|x")
	f.Fuzz(func(t *testing.T, n int, hash, content, other string) {
		if n < 0 || len(hash) < MinHashLen || len(hash) > MaxHashLen || !allHex(hash) || strings.ContainsAny(content, "\r\n") {
			return
		}
		tagged := TaggedLine{Number: n, Hash: hash, Content: content}.String()
		out, ok := StripTagPrefixes([]string{tagged, tagged})
		if !ok || len(out) != 2 || out[0] != content || out[1] != content {
			t.Fatalf("StripTagPrefixes(%q) = %q %v, want %q", tagged, out, ok, content)
		}
		if tagPrefixLen(other) < 0 {
			in := []string{tagged, other}
			out, ok := StripTagPrefixes(in)
			if ok || out[0] != tagged || out[1] != other {
				t.Fatalf("StripTagPrefixes(%q) changed text with an untagged line: %q", in, out)
			}
		}
	})
}

// FuzzCutLine checks that a cut line is a prefix of the line, never splits
// a rune, stays within the limit plus the marker, and says the full size.
func FuzzCutLine(f *testing.F) {
	f.Add("hello", 3)
	f.Add("ééé", 3)
	f.Add("日本語のテキスト", 7)
	f.Add("short", 100)
	f.Fuzz(func(t *testing.T, content string, max int) {
		got := CutLine(content, max)
		if max <= 0 || len(content) <= max {
			if got != content {
				t.Fatalf("CutLine(%q, %d) = %q, want it unchanged", content, max, got)
			}
			return
		}
		i := strings.Index(got, " …[line cut: ")
		if i < 0 || i > max || !strings.HasPrefix(content, got[:i]) {
			t.Fatalf("CutLine(%q, %d) = %q: not a prefix of at most %d bytes and a marker", content, max, got, max)
		}
		if utf8.ValidString(content) && !utf8.ValidString(got) {
			t.Fatalf("CutLine(%q, %d) = %q split a rune", content, max, got)
		}
		if !strings.HasSuffix(got, " …[line cut: "+strconv.Itoa(len(content))+" bytes total]") {
			t.Fatalf("CutLine(%q, %d) = %q: marker does not give the size", content, max, got)
		}
	})
}
