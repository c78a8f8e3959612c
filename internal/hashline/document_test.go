package hashline

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestParseDocument(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		lines []string
		eols  []string
		bom   bool
		final bool
		dom   string
		style string
	}{
		{"empty file", "", nil, nil, false, true, "\n", "lf"},
		{"one line", "a\n", []string{"a"}, []string{"\n"}, false, true, "\n", "lf"},
		{"one empty line", "\n", []string{""}, []string{"\n"}, false, true, "\n", "lf"},
		{"no final newline", "a\nb", []string{"a", "b"}, []string{"\n", ""}, false, false, "\n", "lf"},
		{"CRLF", "a\r\nb\r\n", []string{"a", "b"}, []string{"\r\n", "\r\n"}, false, true, "\r\n", "crlf"},
		{"mixed, LF wins ties", "a\r\nb\nc", []string{"a", "b", "c"}, []string{"\r\n", "\n", ""}, false, false, "\n", "mixed"},
		{"mixed, CRLF majority", "a\r\nb\nc\r\n", []string{"a", "b", "c"}, []string{"\r\n", "\n", "\r\n"}, false, true, "\r\n", "mixed"},
		{"BOM", "\ufeffa\n", []string{"a"}, []string{"\n"}, true, true, "\n", "lf"},
		{"BOM only", "\ufeff", nil, nil, true, true, "\n", "lf"},
		{"lone CR is content", "a\rb\n", []string{"a\rb"}, []string{"\n"}, false, true, "\n", "lf"},
		{"trailing CR without LF is content", "a\r", []string{"a\r"}, []string{""}, false, false, "\n", "lf"},
		{"CR CR LF keeps one CR as content", "a\r\r\n", []string{"a\r"}, []string{"\r\n"}, false, true, "\r\n", "crlf"},
		{"BOM not at start is content", "a\n\ufeffb\n", []string{"a", "\ufeffb"}, []string{"\n", "\n"}, false, true, "\n", "lf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ParseDocument([]byte(tt.in))
			if d.Len() != len(tt.lines) {
				t.Fatalf("Len() = %d, want %d", d.Len(), len(tt.lines))
			}
			for i := range tt.lines {
				if got := d.Line(i + 1); got != tt.lines[i] {
					t.Errorf("Line(%d) = %q, want %q", i+1, got, tt.lines[i])
				}
				if got := d.EOL(i + 1); got != tt.eols[i] {
					t.Errorf("EOL(%d) = %q, want %q", i+1, got, tt.eols[i])
				}
			}
			if d.BOM() != tt.bom || d.FinalNewline() != tt.final || d.DominantEOL() != tt.dom || d.EOLStyle() != tt.style {
				t.Errorf("BOM, FinalNewline, DominantEOL, EOLStyle = %v, %v, %q, %q; want %v, %v, %q, %q",
					d.BOM(), d.FinalNewline(), d.DominantEOL(), d.EOLStyle(), tt.bom, tt.final, tt.dom, tt.style)
			}
			if got := d.Bytes(); !bytes.Equal(got, []byte(tt.in)) {
				t.Errorf("Bytes() = %q, want %q", got, tt.in)
			}
		})
	}
}

func TestParseDocumentCopiesInput(t *testing.T) {
	b := []byte("abc\n")
	d := ParseDocument(b)
	b[0] = 'X'
	if d.Line(1) != "abc" {
		t.Errorf("Line(1) = %q after the caller reused its buffer", d.Line(1))
	}
}

func TestTaggedClamps(t *testing.T) {
	d := ParseDocument([]byte("a\nb\nc\n"))
	h := Hasher{}
	tests := []struct {
		from, to int
		want     []int
	}{
		{1, 3, []int{1, 2, 3}},
		{-5, 2, []int{1, 2}},
		{2, 99, []int{2, 3}},
		{3, 2, nil},
		{4, 9, nil},
	}
	for _, tt := range tests {
		var got []int
		for _, l := range d.Tagged(h, tt.from, tt.to) {
			got = append(got, l.Number)
			if l.Hash != h.Sum(l.Content) || l.Content != d.Line(l.Number) {
				t.Errorf("Tagged line %d = %+v is inconsistent", l.Number, l)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Tagged(%d, %d) numbers = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestAppendTagged(t *testing.T) {
	d := ParseDocument([]byte("\ufefffunc f() {\r\n\treturn 1\r\n}"))
	h := Hasher{}
	want := "1:" + h.Sum("func f() {") + "|func f() {\n2:" + h.Sum("\treturn 1") + "|\treturn 1\n3:" + h.Sum("}") + "|}"
	if got := string(AppendTagged(nil, h, d, 1, 3, 0)); got != want {
		t.Errorf("AppendTagged = %q, want %q", got, want)
	}
	if got := string(AppendTagged([]byte("prefix:"), h, d, 3, 10, 0)); got != "prefix:3:"+h.Sum("}")+"|}" {
		t.Errorf("AppendTagged with dst and clamped range = %q", got)
	}
	if got := AppendTagged(nil, h, d, 5, 9, 0); len(got) != 0 {
		t.Errorf("AppendTagged past the end = %q, want nothing", got)
	}
	// Each line of the read text is the same as the structured TaggedLine.
	var lines []string
	for _, tl := range d.Tagged(h, 1, 3) {
		lines = append(lines, tl.String())
	}
	if got := string(AppendTagged(nil, h, d, 1, 3, 0)); got != strings.Join(lines, "\n") {
		t.Errorf("AppendTagged = %q, Tagged gives %q", got, strings.Join(lines, "\n"))
	}
}

func TestAppendTaggedPage(t *testing.T) {
	// Ten lines "line N": lines 1-9 tag as "N:hh|line N" (11 bytes with
	// two-digit hashes), line 10 as 13 bytes.
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	d := ParseDocument([]byte(b.String()))
	h8, err := NewHasher(8)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		h         Hasher
		from, to  int
		budget    int
		wantFirst int
		wantLast  int
	}{
		{name: "no budget", from: 1, to: 10, wantFirst: 1, wantLast: 10},
		{name: "budget stops before the line that would cross it", from: 1, to: 10, budget: 100, wantFirst: 1, wantLast: 8},
		{name: "budget met exactly", from: 1, to: 10, budget: 95, wantFirst: 1, wantLast: 8},
		{name: "one byte short of a line", from: 1, to: 10, budget: 94, wantFirst: 1, wantLast: 7},
		{name: "first line always appended", from: 3, to: 10, budget: 1, wantFirst: 3, wantLast: 3},
		{name: "range clamped", from: 9, to: 50, wantFirst: 9, wantLast: 10},
		{name: "past the end", from: 11, to: 20, wantFirst: 11, wantLast: 10},
		{name: "long hashes", h: h8, from: 2, to: 5, wantFirst: 2, wantLast: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []TaggedLine
			text, last := AppendTaggedPage(nil, tt.h, d, tt.from, tt.to, 0, tt.budget, func(n int, hash, content string) {
				got = append(got, TaggedLine{Number: n, Hash: hash, Content: content})
			})
			if last != tt.wantLast {
				t.Errorf("last = %d, want %d", last, tt.wantLast)
			}
			if tt.budget > 0 && len(text) > tt.budget && last > tt.wantFirst {
				t.Errorf("text is %d bytes, over the budget of %d", len(text), tt.budget)
			}
			// The callback sees exactly the lines of the text, with the
			// hashes Tagged computes, and the text is AppendTagged's.
			want := d.Tagged(tt.h, tt.wantFirst, tt.wantLast)
			if !slices.Equal(got, want) {
				t.Errorf("callback saw %v, want %v", got, want)
			}
			if w := string(AppendTagged(nil, tt.h, d, tt.wantFirst, tt.wantLast, 0)); string(text) != w {
				t.Errorf("text = %q, want %q", text, w)
			}
			// Without a callback the text is the same.
			if again, l := AppendTaggedPage(nil, tt.h, d, tt.from, tt.to, 0, tt.budget, nil); string(again) != string(text) || l != last {
				t.Errorf("without a callback: %q (last %d), with one: %q (last %d)", again, l, text, last)
			}
		})
	}
}

func TestAppendTaggedCutsLongLinesButHashesThemWhole(t *testing.T) {
	long := strings.Repeat("é", 10) // 20 bytes
	d := ParseDocument([]byte("short\n" + long + "\n"))
	h := Hasher{}
	got := string(AppendTagged(nil, h, d, 1, 2, 5))
	want := "1:" + h.Sum("short") + "|short\n2:" + h.Sum(long) + "|éé …[line cut: 20 bytes total]"
	if got != want {
		t.Errorf("AppendTagged = %q, want %q", got, want)
	}
	if CutLine(long, 5) != "éé …[line cut: 20 bytes total]" {
		t.Errorf("CutLine disagrees with AppendTagged: %q", CutLine(long, 5))
	}
}

func TestAppendTaggedLongHashes(t *testing.T) {
	h, _ := NewHasher(6)
	d := ParseDocument([]byte("x\n"))
	if got, want := string(AppendTagged(nil, h, d, 1, 1, 0)), "1:"+h.Sum("x")+"|x"; got != want || len(h.Sum("x")) != 6 {
		t.Errorf("AppendTagged = %q, want %q", got, want)
	}
}

func TestAppendTaggedDoesNotAllocatePerLine(t *testing.T) {
	d := ParseDocument(genGoFile(2000))
	buf := make([]byte, 0, 1<<20)
	n := testing.AllocsPerRun(20, func() { buf = AppendTagged(buf[:0], Hasher{}, d, 1, d.Len(), 4096) })
	if n != 0 {
		t.Errorf("AppendTagged into a large enough buffer allocates %v times", n)
	}
}

func TestDocumentEqual(t *testing.T) {
	tests := []struct {
		doc, other string
		want       bool
	}{
		{"", "", true},
		{"a\n", "a\n", true},
		{"a\n", "a", false},
		{"a\r\n", "a\n", false},
		{"\ufeffa\n", "\ufeffa\n", true},
		{"\ufeffa\n", "a\n", false}, // the BOM is part of the file
		{"a\n", "\ufeffa\n", false},
		{"\ufeff", "", false},
	}
	for _, tt := range tests {
		if got := ParseDocument([]byte(tt.doc)).Equal([]byte(tt.other)); got != tt.want {
			t.Errorf("ParseDocument(%q).Equal(%q) = %v, want %v", tt.doc, tt.other, got, tt.want)
		}
	}
}

// A document's line hashes are computed once, on first use, and the
// document is shared between requests: concurrent taggers must all see
// exactly what hashing each line gives (and -race must stay quiet).
func TestSharedDocumentTagsConcurrently(t *testing.T) {
	var b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&b, "line %d\t= %d\n", i, i*i)
	}
	d := ParseDocument([]byte(b.String()))
	h, _ := NewHasher(4)
	var want []byte
	for n := 1; n <= d.Len(); n++ {
		if n > 1 {
			want = append(want, '\n')
		}
		want = append(want, fmt.Sprintf("%d:%s|%s", n, h.Sum(d.Line(n)), d.Line(n))...)
	}
	got := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			// Start at different lines so that chunks fill in every order.
			from := 1 + i*97%d.Len()
			tail := AppendTagged(nil, h, d, from, d.Len(), 0)
			head := AppendTagged(nil, h, d, 1, from-1, 0)
			if len(head) > 0 {
				head = append(head, '\n')
			}
			got[i] = append(head, tail...)
		})
	}
	wg.Wait()
	for i, g := range got {
		if !bytes.Equal(g, want) {
			t.Fatalf("tagger %d differs from hashing every line", i)
		}
	}
}
