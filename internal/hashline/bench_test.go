package hashline

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// genGoFile returns n lines that look like Go source: indented statements,
// braces, comments and blank lines, about 28 bytes a line on average (the
// 100k-line, 2.8 MB file of the performance targets).
func genGoFile(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	idents := []string{"err", "ctx", "buf", "n", "req", "resp", "lines", "i", "path", "data"}
	b := make([]byte, 0, n*30)
	depth := 0
	for i := range n {
		id := idents[rng.IntN(len(idents))]
		id2 := idents[rng.IntN(len(idents))]
		var line string
		switch k := rng.IntN(12); {
		case i%40 == 0:
			depth = 0
			line = fmt.Sprintf("func handle%d(%s int) error {", i, id)
			depth = 1
		case k == 0:
			line = ""
		case k == 1:
			line = fmt.Sprintf("// %s holds the %s state", id, id2)
		case k == 2 && depth < 4:
			line = fmt.Sprintf("if %s != nil {", id)
			depth++
		case k == 3 && depth > 1:
			depth--
			line = "}"
		case k == 4:
			line = fmt.Sprintf("return %s", id)
		case k == 5:
			line = fmt.Sprintf("%s := %s[%d]", id, id2, i%97)
		default:
			line = fmt.Sprintf("%s = f(%s, %d)", id, id2, i%1000)
		}
		for range depth {
			b = append(b, '\t')
		}
		b = append(b, line...)
		b = append(b, '\n')
	}
	return b
}

func BenchmarkAppendTagged(b *testing.B) {
	data := genGoFile(100_000)
	d := ParseDocument(data)
	h := Hasher{}
	buf := AppendTagged(nil, h, d, 1, d.Len(), 4096)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendTagged(buf[:0], h, d, 1, d.Len(), 4096)
	}
}

// BenchmarkRead is what a whole-file read costs in the core: parse, hash and
// format into a fresh buffer.
func BenchmarkRead(b *testing.B) {
	data := genGoFile(100_000)
	h := Hasher{}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		d := ParseDocument(data)
		_ = AppendTagged(nil, h, d, 1, d.Len(), 4096)
	}
}

func BenchmarkParseDocument(b *testing.B) {
	data := genGoFile(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ParseDocument(data)
	}
}

func BenchmarkSum32(b *testing.B) {
	line := "\t\tresp, err := client.Do(ctx, req) // send"
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		Sum32(line)
	}
}

// BenchmarkApplyEdits10 applies a batch of ten edits of every kind spread
// over the 100k-line file, with diff and windows.
func BenchmarkApplyEdits10(b *testing.B) {
	data := genGoFile(100_000)
	d := ParseDocument(data)
	h := Hasher{}
	ref := func(n int) string { return fmt.Sprintf("%d:%s", n, h.Sum(d.Line(n))) }
	edits := []Edit{
		{Op: OpPrepend, Text: "// Code generated for the benchmark.\n"},
		{Op: OpReplace, Start: ref(100), Text: "\tx := 1\n"},
		{Op: OpReplace, Start: ref(5000), End: ref(5004), Text: "\ty := 2\n\tz := 3\n"},
		{Op: OpInsertAfter, Start: ref(20000), Text: "\t// note\n"},
		{Op: OpInsertBefore, Start: ref(30000), Text: "\t// before\n"},
		{Op: OpDelete, Start: ref(40000), End: ref(40002)},
		{Op: OpReplace, Start: ref(50000), Text: ""},
		{Op: OpInsertAfter, Start: ref(60000), Text: "a\nb\nc\n"},
		{Op: OpReplace, Start: ref(99990), End: ref(99999), Text: "}\n"},
		{Op: OpAppend, Text: "// end\n"},
	}
	benchApply(b, d, edits)
}

// BenchmarkApplyEdit1 replaces one line in the middle of the 100k-line
// file, with diff and windows: the common edit, where the cost is all in
// the lines the edit does not touch.
func BenchmarkApplyEdit1(b *testing.B) {
	data := genGoFile(100_000)
	d := ParseDocument(data)
	h := Hasher{}
	edits := []Edit{{Op: OpReplace, Start: fmt.Sprintf("%d:%s", 50_000, h.Sum(d.Line(50_000))), Text: "\tx := 1"}}
	benchApply(b, d, edits)
}

// benchApply applies edits to d over and over, with diff and windows; the
// first run outside the timing fills the line sums the edits' refs need,
// as a server's document has them after a read.
func benchApply(b *testing.B, d *Document, edits []Edit) {
	opts := ApplyOptions{Hasher: Hasher{}, Context: 3, OldLabel: "a/big.go", NewLabel: "b/big.go"}
	if _, err := ApplyEdits(d, edits, opts); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(d.text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyEdits(d, edits, opts); err != nil {
			b.Fatal(err)
		}
	}
}
