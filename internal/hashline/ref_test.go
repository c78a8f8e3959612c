package hashline

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in   string
		want Ref
	}{
		{"12:3f", Ref{12, "3f"}},
		{"  12:3f\t", Ref{12, "3f"}},
		{"12:3F", Ref{12, "3f"}},
		{"12:3f|\treturn nil", Ref{12, "3f"}},
		{"12:3f|", Ref{12, "3f"}},
		{">>> 12:3f|x", Ref{12, "3f"}},
		{">>12:3f", Ref{12, "3f"}},
		{"1:00", Ref{1, "00"}},
		{"7:deadBEEF", Ref{7, "deadbeef"}},
		{"99999:abcd", Ref{99999, "abcd"}},
		{"007:ab", Ref{7, "ab"}},
	}
	for _, tt := range tests {
		t.Run("accepts "+tt.in, func(t *testing.T) {
			got, err := ParseRef(tt.in)
			if err != nil {
				t.Fatalf("ParseRef(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseRef(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseRefErrors(t *testing.T) {
	tests := []struct {
		in      string
		mention string
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"12x", `"12x" is not a line reference`},
		{"12", "missing ':'"},
		{":3f", "not a line number"},
		{"x:3f", "not a line number"},
		{"-1:3f", "not a line number"},
		{"0:3f", "start at 1"},
		{"12:3", "2 to 8 hex digits"},
		{"12:3fg", "2 to 8 hex digits"},
		{"12:123456789", "2 to 8 hex digits"},
		{"12:", "2 to 8 hex digits"},
		{"12:3f:4", "2 to 8 hex digits"},
		{"99999999999999999999:3f", "too large"},
		{"|12:3f", "empty"},
	}
	for _, tt := range tests {
		t.Run("rejects "+tt.in, func(t *testing.T) {
			_, err := ParseRef(tt.in)
			if err == nil {
				t.Fatalf("ParseRef(%q) succeeded, want error", tt.in)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("ParseRef(%q) error %q does not mention %q", tt.in, err, tt.mention)
			}
			if !strings.Contains(err.Error(), `LINE:HASH like "12:3f"`) {
				t.Errorf("ParseRef(%q) error %q does not show the expected form", tt.in, err)
			}
		})
	}
}

func TestTagAndRefStrings(t *testing.T) {
	tl := TaggedLine{Number: 12, Hash: "3f", Content: "\treturn nil"}
	if got := tl.String(); got != "12:3f|\treturn nil" {
		t.Errorf("String() = %q", got)
	}
	if got := tl.Tag(); got != "12:3f" {
		t.Errorf("Tag() = %q", got)
	}
	if got := (Ref{Line: 3, Hash: "0a"}).String(); got != "3:0a" {
		t.Errorf("Ref.String() = %q", got)
	}
	r, err := ParseRef(tl.String())
	if err != nil || r.String() != tl.Tag() {
		t.Errorf("ParseRef(%q) = %v, %v; want the tag back", tl.String(), r, err)
	}
}
