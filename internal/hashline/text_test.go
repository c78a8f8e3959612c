package hashline

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitText(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"\n", []string{""}},
		{"\n\n", []string{"", ""}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\rb", []string{"a\rb"}},
		{"a\r", []string{"a\r"}},
		{"\r\n", []string{""}},
		{"a\r\r\nb", []string{"a\r", "b"}},
		{"a\n\nb\n", []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(strings.ReplaceAll(tt.in, "\n", `\n`), "\r", `\r`), func(t *testing.T) {
			got := SplitText(tt.in)
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) && len(tt.want) > 0 {
				t.Errorf("SplitText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStripTagPrefixes(t *testing.T) {
	tests := []struct {
		name  string
		in    []string
		want  []string
		strip bool
	}{
		{"no lines", nil, nil, false},
		{"plain content", []string{"a", "b"}, []string{"a", "b"}, false},
		{"all prefixed", []string{"1:ab|a", "2:CD|\tb", "3:0f|"}, []string{"a", "\tb", ""}, true},
		{"long hashes", []string{"10:deadbeef|x"}, []string{"x"}, true},
		{"stale markers and spaces", []string{">>> 4:ab|x", "    5:cd|y", "  6:ef|z", ">> 7:00|w"}, []string{"x", "y", "z", "w"}, true},
		{"one line without prefix keeps all", []string{"1:ab|a", "b"}, []string{"1:ab|a", "b"}, false},
		{"content that merely starts with digits", []string{"12:30 meeting"}, []string{"12:30 meeting"}, false},
		{"one-digit hash is not a prefix", []string{"1:a|x"}, []string{"1:a|x"}, false},
		{"nine-digit hash is not a prefix", []string{"1:123456789|x"}, []string{"1:123456789|x"}, false},
		{"content keeps later pipes", []string{"1:ab|a|b"}, []string{"a|b"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := StripTagPrefixes(tt.in)
			if ok != tt.strip || !slices.Equal(got, tt.want) {
				t.Errorf("StripTagPrefixes(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.strip)
			}
		})
	}
}

func TestCutLine(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"no limit", "abcdef", 0, "abcdef"},
		{"within limit", "abc", 3, "abc"},
		{"cut ASCII", "abcdef", 3, "abc …[line cut: 6 bytes total]"},
		{"cut never splits a rune", "ab世界", 4, "ab …[line cut: 8 bytes total]"},
		{"cut right after a rune", "ab世界", 5, "ab世 …[line cut: 8 bytes total]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CutLine(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("CutLine(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("CutLine(%q, %d) = %q is not valid UTF-8", tt.in, tt.max, got)
			}
		})
	}
}
