package hashline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/OneOfOne/xxhash"
)

func TestNewHasher(t *testing.T) {
	tests := []struct {
		n       int
		wantErr bool
	}{
		{0, true}, {1, true}, {2, false}, {5, false}, {8, false}, {9, true}, {-2, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("length %d", tt.n), func(t *testing.T) {
			h, err := NewHasher(tt.n)
			if (err != nil) != tt.wantErr {
				t.Fatalf("NewHasher(%d) error = %v, want error %v", tt.n, err, tt.wantErr)
			}
			if err == nil && h.Len() != tt.n {
				t.Errorf("Len() = %d, want %d", h.Len(), tt.n)
			}
		})
	}
}

func TestZeroHasherUsesDefaultLength(t *testing.T) {
	var h Hasher
	if h.Len() != DefaultHashLen {
		t.Fatalf("zero Hasher Len() = %d, want %d", h.Len(), DefaultHashLen)
	}
	if got := h.Sum(""); got != "05" {
		t.Errorf(`zero Hasher Sum("") = %q, want "05"`, got)
	}
}

func TestSum32KnownVectors(t *testing.T) {
	// 0x02cc5d05 is the published xxHash32 of the empty input with seed 0.
	if got := Sum32(""); got != 0x02cc5d05 {
		t.Fatalf(`Sum32("") = %#08x, want 0x02cc5d05`, got)
	}
	// Values from an independent implementation of the xxHash32 reference
	// algorithm; the long input exercises the 16-byte stripe loop.
	for in, want := range map[string]uint32{
		"return nil":                            0xec6175a7,
		"func f() {":                            0x0fcbb60a,
		"abcdefghijklmnopqrstuvwxyz 0123456789": 0x42ae804d,
	} {
		if got := Sum32(in); got != want {
			t.Errorf("Sum32(%q) = %#08x, want %#08x", in, got, want)
		}
	}
	// Inputs without whitespace hash exactly like the library does.
	for _, s := range []string{"a", "abc", "return nil", "}", "func(){return}", strings.Repeat("x", 600), "héllo→世界"} {
		stripped := strings.Join(strings.Fields(s), "")
		if got, want := Sum32(s), xxhash.ChecksumString32(stripped); got != want {
			t.Errorf("Sum32(%q) = %#08x, want xxhash of %q = %#08x", s, got, stripped, want)
		}
	}
}

func TestHasherSum(t *testing.T) {
	h4, _ := NewHasher(4)
	h8, _ := NewHasher(8)
	v := xxhash.ChecksumString32("returnnil")
	tests := []struct {
		name string
		h    Hasher
		in   string
		want string
	}{
		{"empty line is 05", Hasher{}, "", "05"},
		{"two digits are the value mod 256", Hasher{}, "\treturn nil", fmt.Sprintf("%02x", v%256)},
		{"four digits are the low 16 bits", h4, "return nil", fmt.Sprintf("%04x", v&0xffff)},
		{"eight digits are the whole value", h8, "return nil", fmt.Sprintf("%08x", v)},
		{"eight digits of the empty line", h8, "", "02cc5d05"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.h.Sum(tt.in); got != tt.want {
				t.Errorf("Sum(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSumIgnoresWhitespace(t *testing.T) {
	base := "if x == nil { return err }"
	tests := []struct {
		name string
		in   string
	}{
		{"tab indentation", "\tif x == nil { return err }"},
		{"space indentation", "        if x == nil { return err }"},
		{"trailing CR", base + "\r"},
		{"no spaces at all", "ifx==nil{returnerr}"},
		{"vertical tab and form feed", "\vif x == nil {\f return err }"},
		{"NBSP", "if\u00a0x == nil { return err }"},
		{"ideographic space", "\u3000if x == nil { return err }"},
		{"ogham space mark", "if\u1680x == nil { return err }"},
		{"en quad to hair space", "if\u2000x\u2005==\u200anil { return err }"},
		{"line and paragraph separators", "if\u2028x\u2029== nil { return err }"},
		{"narrow NBSP, math space", "if\u202fx\u205f== nil { return err }"},
		{"BOM character", "\ufeffif x == nil { return err }"},
		{"long line beyond the stack buffer", strings.Repeat(" ", 1000) + base},
	}
	want := Hasher{}.Sum(base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sum32(tt.in); got != Sum32(base) {
				t.Errorf("Sum32(%q) = %#08x, want %#08x as for %q", tt.in, got, Sum32(base), base)
			}
			if got := (Hasher{}).Sum(tt.in); got != want {
				t.Errorf("Sum(%q) = %q, want %q", tt.in, got, want)
			}
		})
	}
}

func TestSumKeepsNonSpaceRunes(t *testing.T) {
	// Runes that share a UTF-8 lead byte with JavaScript whitespace, or that
	// Go but not JavaScript calls space (U+0085, U+180E), are content.
	for _, r := range []string{"\u0085", "\u00a1", "\u200b", "\u2030", "\u3001", "\ufefe", "\u180e", "\xc2", "\xe2\x80"} {
		s := "a" + r + "b"
		if Sum32(s) == Sum32("ab") {
			t.Errorf("Sum32(%q) equals Sum32(\"ab\"): %q was stripped", s, r)
		}
		if got, want := Sum32(s), xxhash.ChecksumString32(s); got != want {
			t.Errorf("Sum32(%q) = %#08x, want %#08x", s, got, want)
		}
	}
}

func TestSum32DoesNotAllocate(t *testing.T) {
	for _, s := range []string{"plain", "\tindented line with spaces", strings.Repeat("long line ", 200)} {
		Sum32(s) // warm the pool
		if n := testing.AllocsPerRun(100, func() { Sum32(s) }); n != 0 {
			t.Errorf("Sum32(%.20q...) allocates %v times per call", s, n)
		}
	}
}
