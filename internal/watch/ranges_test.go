package watch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestRanges(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		want     []Range
	}{
		{"identical contents have no ranges", "a\nb\n", "a\nb\n", nil},
		{"one changed line", "a\nb\nc\n", "a\nB\nc\n", []Range{{2, 1, 2, 1}}},
		{"an insertion starts at the line before it", "a\nc\n", "a\nb\nc\n", []Range{{1, 0, 2, 1}}},
		{"an insertion at the top starts at line 0", "b\n", "a\nb\n", []Range{{0, 0, 1, 1}}},
		{"a deletion starts at the line before it on the new side", "a\nb\nc\n", "a\nc\n", []Range{{2, 1, 1, 0}}},
		{"a created file is all new lines", "", "a\nb\n", []Range{{0, 0, 1, 2}}},
		{"a deleted file is all old lines", "a\nb\n", "", []Range{{1, 2, 0, 0}}},
		{"two separate changes are two ranges", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n", []Range{{1, 1, 1, 1}, {5, 1, 5, 1}}},
		{"adjacent changed lines are one range", "a\nb\nc\n", "A\nB\nc\n", []Range{{1, 2, 1, 2}}},
		{"a line ending change is a change", "a\r\nb\r\n", "a\r\nb\n", []Range{{2, 1, 2, 1}}},
		{"adding a final newline changes the last line", "a\nb", "a\nb\n", []Range{{2, 1, 2, 1}}},
		{"appending after a last line without newline", "a", "a\nb", []Range{{1, 1, 1, 2}}},
		{"a repeated line inserted among repeats", "x\nx\nx\n", "x\nx\nx\nx\n", []Range{{3, 0, 4, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Ranges([]byte(tc.old), []byte(tc.new))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Ranges(%q, %q) = %v, want %v", tc.old, tc.new, got, tc.want)
			}
			checkRanges(t, tc.old, tc.new, got)
		})
	}
}

// checkRanges verifies that the ranges explain old -> new exactly: the
// lines outside them are equal and in order, the ranges are sorted and
// disjoint, and the starts follow the hunk-header convention.
func checkRanges(t *testing.T, old, new string, rs []Range) {
	t.Helper()
	a, b := splitLines([]byte(old)), splitLines([]byte(new))
	var out []string
	ai := 0 // 0-based next old line to copy
	for i, r := range rs {
		start := r.OldStart - 1 // 0-based first old line of the range
		if r.OldCount == 0 {
			start = r.OldStart
		}
		nstart := r.NewStart - 1
		if r.NewCount == 0 {
			nstart = r.NewStart
		}
		if start < ai || start+r.OldCount > len(a) || nstart+r.NewCount > len(b) {
			t.Fatalf("range %d %v out of order or bounds (old %d lines, new %d)", i, r, len(a), len(b))
		}
		if r.OldCount == 0 && r.NewCount == 0 {
			t.Fatalf("range %d %v is empty", i, r)
		}
		out = append(out, a[ai:start]...)
		if len(out) != nstart {
			t.Fatalf("range %d %v: new side starts at line %d, but %d lines precede it", i, r, nstart+1, len(out))
		}
		out = append(out, b[nstart:nstart+r.NewCount]...)
		ai = start + r.OldCount
	}
	out = append(out, a[ai:]...)
	if got := strings.Join(out, ""); got != new {
		t.Fatalf("old with the ranges' new lines = %q, want %q", got, new)
	}
}

func TestRangesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "a\r\n", "dd\n", "\n"}
	gen := func() string {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(words[rng.IntN(len(words))])
		}
		if rng.IntN(4) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	for i := range 2000 {
		old, new := gen(), gen()
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkRanges(t, old, new, Ranges([]byte(old), []byte(new)))
		})
	}
}

func FuzzRanges(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "x")
	f.Add("a\r\nb", "a\nb\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		rs := Ranges([]byte(old), []byte(new))
		if old == new && rs != nil {
			t.Fatalf("identical contents have ranges %v", rs)
		}
		checkRanges(t, old, new, rs)
	})
}

// A one-line change in a large file: the common head and tail are cut
// off before the line diff.
func BenchmarkRanges10kLines(b *testing.B) {
	var buf bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&buf, "line %d of a fairly ordinary source file\n", i)
	}
	old := buf.Bytes()
	new := bytes.Replace(old, []byte("line 5000 of"), []byte("LINE 5000 of"), 1)
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		Ranges(old, new)
	}
}

// Ten one-line changes scattered over a large file: the line diff spans
// nearly all of it.
func BenchmarkRanges10kLines10Changes(b *testing.B) {
	var buf bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&buf, "line %d of a fairly ordinary source file\n", i)
	}
	old := buf.Bytes()
	new := old
	for i := range 10 {
		l := fmt.Sprintf("line %d of", 13+i*997)
		new = bytes.Replace(new, []byte(l), bytes.ToUpper([]byte(l)), 1)
	}
	b.SetBytes(int64(len(old)))
	for b.Loop() {
		Ranges(old, new)
	}
}
