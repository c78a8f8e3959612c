package hashline

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/OneOfOne/xxhash"
)

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"12:3f", " 12:3F ", "12:3f|x", ">>> 1:00|", ">>2:abcdef12", "0:00", "12x", "", ":", "1:", "99999999999999999999:ab", "1:ab|c|d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			if !strings.Contains(err.Error(), "LINE:HASH") {
				t.Errorf("error %q does not show the expected form", err)
			}
			return
		}
		if r.Line < 1 || len(r.Hash) < MinHashLen || len(r.Hash) > MaxHashLen || strings.ToLower(r.Hash) != r.Hash || !allHex(r.Hash) {
			t.Fatalf("ParseRef(%q) = %+v, an invalid ref", s, r)
		}
		if again, err := ParseRef(r.String()); err != nil || again != r {
			t.Fatalf("ParseRef(%q) = %+v, %v; want %+v back", r.String(), again, err, r)
		}
	})
}

func FuzzParseDocument(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "\n", "a\r\nb", "a\r\nb\nc\r", "\ufeff", "\ufeffa\r\n", "\r", "\r\r\n", "a\n\n\n", "\xff\xfe\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := ParseDocument(data)
		if got := d.Bytes(); !bytes.Equal(got, data) {
			t.Fatalf("Bytes() = %q, want %q", got, data)
		}
		if !d.Equal(data) || d.Equal(append(bytes.Clone(data), 'x')) {
			t.Fatalf("Equal disagrees with Bytes for %q", data)
		}
		if len(data) > 0 {
			other := bytes.Clone(data)
			other[len(other)/2] ^= 0x20
			if d.Equal(other) || d.Equal(data[1:]) {
				t.Fatalf("Equal(%q) holds for other bytes", data)
			}
		}
		var b strings.Builder
		if d.BOM() {
			b.WriteString(utf8BOM)
		}
		crlf, lf := 0, 0
		for n := 1; n <= d.Len(); n++ {
			line, eol := d.Line(n), d.EOL(n)
			if strings.Contains(line, "\n") || eol == "" && n != d.Len() || strings.HasSuffix(line, "\r") && eol == "\n" {
				t.Fatalf("line %d = %q ending %q is malformed", n, line, eol)
			}
			switch eol {
			case "\r\n":
				crlf++
			case "\n":
				lf++
			}
			b.WriteString(line + eol)
		}
		if b.String() != string(data) {
			t.Fatalf("lines and endings join to %q, want %q", b.String(), data)
		}
		if d.FinalNewline() != (d.Len() == 0 || d.EOL(d.Len()) != "") {
			t.Fatalf("FinalNewline() = %v with last ending %q", d.FinalNewline(), d.EOL(d.Len()))
		}
		if want := map[bool]string{true: "\r\n", false: "\n"}[crlf > lf]; d.DominantEOL() != want {
			t.Fatalf("DominantEOL() = %q with %d CRLF and %d LF", d.DominantEOL(), crlf, lf)
		}
		for n := d.Len(); n >= 1; n-- { // backwards: chunks fill out of order
			if got, want := d.Hash(Hasher{}, n), (Hasher{}).Sum(d.Line(n)); got != want {
				t.Fatalf("Hash(%d) = %s, Sum of the line = %s", n, got, want)
			}
		}
		text := string(AppendTagged(nil, Hasher{}, d, 1, d.Len(), 7))
		if d.Len() > 0 && strings.Count(text, "\n") != d.Len()-1 {
			t.Fatalf("AppendTagged has %d newlines for %d lines", strings.Count(text, "\n"), d.Len())
		}
	})
}

// refStrip removes JavaScript \s whitespace by decoding runes, an
// independent statement of what Sum32 strips.
func refStrip(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteByte(s[0])
		case r == ' ' || r >= '\t' && r <= '\r' || r == 0xa0 || r == 0x1680 || r >= 0x2000 && r <= 0x200a ||
			r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000 || r == 0xfeff:
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

func FuzzSum32(f *testing.F) {
	for _, s := range []string{"", "a b", "\tx\u00a0y\u3000z", "\xe2\x80", "abcdefgh\u2028", strings.Repeat("ab \u2009", 200), "1234567\u00a0", "\xc2\xc2\xa0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Sum32(s), xxhash.ChecksumString32(refStrip(s)); got != want {
			t.Fatalf("Sum32(%q) = %#08x, want %#08x (stripped %q)", s, got, want, refStrip(s))
		}
	})
}

// modelLine is a line of the reference model.
type modelLine struct{ content, eol string }

// modelSplit splits text into lines independently of ParseDocument.
func modelSplit(text string) []modelLine {
	var out []modelLine
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		switch {
		case strings.HasSuffix(l, "\r\n"):
			out = append(out, modelLine{l[:len(l)-2], "\r\n"})
		case strings.HasSuffix(l, "\n"):
			out = append(out, modelLine{l[:len(l)-1], "\n"})
		default:
			out = append(out, modelLine{l, ""})
		}
	}
	return out
}

// modelEdit is a generated edit in model terms: replace old lines
// [start, end) with lines (start == end inserts).
type modelEdit struct {
	start, end int
	lines      []string
}

// applyModel applies non-overlapping edits to the lines of a file the naive
// way, bottom-up on a slice, with the documented ending rules.
func applyModel(text string, edits []modelEdit) string {
	bom := strings.HasPrefix(text, utf8BOM)
	text = strings.TrimPrefix(text, utf8BOM)
	old := modelSplit(text)
	crlf, lf := 0, 0
	for _, l := range old {
		if l.eol == "\r\n" {
			crlf++
		} else if l.eol == "\n" {
			lf++
		}
	}
	dom := "\n"
	if crlf > lf {
		dom = "\r\n"
	}
	es := slices.Clone(edits)
	// Bottom-up; at one start the range goes first so that an insertion
	// there ends up before it.
	slices.SortFunc(es, func(a, b modelEdit) int {
		if a.start != b.start {
			return b.start - a.start
		}
		return (b.end - b.start) - (a.end - a.start)
	})
	lines := slices.Clone(old)
	for _, e := range es {
		k := e.end - e.start
		var repl []modelLine
		for i, c := range e.lines {
			eol := dom
			switch {
			case i == len(e.lines)-1 && k > 0:
				eol = old[e.end-1].eol
			case i < k-1:
				eol = old[e.start+i].eol
			}
			repl = append(repl, modelLine{c, eol})
		}
		lines = slices.Replace(lines, e.start, e.end, repl...)
	}
	for i := range lines {
		if lines[i].eol == "" && i < len(lines)-1 {
			lines[i].eol = dom
		}
	}
	if len(old) > 0 && old[len(old)-1].eol == "" && len(lines) > 0 {
		// No final newline stays so, but an empty last line needs an
		// ending to exist.
		if last := &lines[len(lines)-1]; last.content != "" {
			last.eol = ""
		} else if last.eol == "" {
			last.eol = dom
		}
	}
	var b strings.Builder
	if bom {
		b.WriteString(utf8BOM)
	}
	for i, l := range lines {
		if l.eol == "\n" && strings.HasSuffix(l.content, "\r") {
			// Keep a content "\r" from merging into the ending.
			lines[i].eol, l.eol = "\r\n", "\r\n"
		}
		b.WriteString(l.content + l.eol)
	}
	return b.String()
}

// script hands out fuzz bytes as small numbers, zeros when exhausted.
type script []byte

func (s *script) next(n int) int {
	if len(*s) == 0 || n <= 0 {
		return 0
	}
	b := (*s)[0]
	*s = (*s)[1:]
	return int(b) % n
}

func (s *script) lines(atLeast int) []string {
	words := []string{"a", "b", " ", "\t", "x y", "", "é", "\u00a0", "\r", "{", "}"}
	n := atLeast + s.next(3)
	out := make([]string, n)
	for i := range out {
		for range s.next(3) + 1 {
			out[i] += words[s.next(len(words))]
		}
		out[i] = strings.TrimRight(out[i], "\r") // "\r" before a newline would be an ending
	}
	return out
}

func (s *script) text(lines []string) string {
	sep := "\n"
	if s.next(2) == 1 {
		sep = "\r\n"
	}
	t := strings.Join(lines, sep)
	if len(lines) > 0 && (s.next(2) == 1 || lines[len(lines)-1] == "") {
		t += sep
	}
	return t
}

// ref writes a correct reference in one of the tolerated spellings.
func (s *script) ref(d *Document, h Hasher, n int) string {
	r := fmt.Sprintf("%d:%s", n, h.Sum(d.Line(n)))
	switch s.next(4) {
	case 1:
		r = " " + strings.ToUpper(r) + " "
	case 2:
		r += "|" + d.Line(n)
	case 3:
		r = ">>> " + r
	}
	return r
}

func FuzzApplyEdits(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte(""), []byte{4, 0, 0, 5, 1, 1})
	f.Add([]byte("a\r\nb\r\nc"), []byte{3, 2, 0, 1, 1, 0, 0, 2, 2})
	f.Add([]byte("\ufeffone\ntwo\r\nthree"), []byte{0, 0, 2, 1, 6, 5, 5, 5, 1, 2, 3})
	f.Add([]byte("x\n\n\ny\n"), []byte{7, 1, 0, 0, 9, 9, 9, 2, 3, 3})
	f.Add([]byte("func f() {\n\treturn 1\n}\n"), []byte{6, 1, 0, 2, 2, 1, 7, 0, 0, 0})
	f.Fuzz(func(t *testing.T, doc, sc []byte) {
		if len(doc) > 4096 || len(sc) > 256 {
			return
		}
		d := ParseDocument(doc)
		h := Hasher{}
		s := script(sc)
		n := d.Len()
		usedLine := make([]bool, n)
		usedPoint := make([]bool, n+1)
		inside := func(p int) bool { return p > 0 && p < n && usedLine[p-1] && usedLine[p] }
		var edits []Edit
		var model []modelEdit
		for k := s.next(6) + 1; k > 0; k-- {
			op := s.next(8)
			switch {
			case op == 7 && len(edits) > 0: // an identical duplicate
				i := s.next(len(edits))
				edits = append(edits, edits[i])
				continue
			case op <= 1 && n > 0: // replace or delete a range
				a := s.next(n)
				b := min(a+s.next(3), n-1)
				ok := true
				for i := a; i <= b; i++ {
					ok = ok && !usedLine[i]
				}
				for p := a + 1; p <= b; p++ {
					ok = ok && !usedPoint[p]
				}
				if !ok {
					continue
				}
				var lines []string
				if op == 0 && s.next(3) > 0 {
					lines = s.lines(1)
				}
				e := Edit{Op: OpReplace, Start: s.ref(d, h, a+1), Text: s.text(lines)}
				if op == 1 {
					e = Edit{Op: OpDelete, Start: s.ref(d, h, a+1)}
					lines = nil
				}
				if b != a || s.next(2) == 1 {
					e.End = s.ref(d, h, b+1)
				}
				for i := a; i <= b; i++ {
					usedLine[i] = true
				}
				edits = append(edits, e)
				model = append(model, modelEdit{a, b + 1, lines})
			case op >= 2 && op <= 5: // insertAfter, insertBefore, append, prepend
				var p int
				var e Edit
				lines := s.lines(1)
				switch {
				case op == 2 && n > 0:
					a := s.next(n)
					p, e = a+1, Edit{Op: OpInsertAfter, Start: s.ref(d, h, a+1)}
				case op == 3 && n > 0:
					a := s.next(n)
					p, e = a, Edit{Op: OpInsertBefore, Start: s.ref(d, h, a+1)}
				case op == 4:
					p, e = n, Edit{Op: OpAppend}
				default:
					p, e = 0, Edit{Op: OpPrepend}
				}
				if usedPoint[p] || inside(p) {
					continue
				}
				usedPoint[p] = true
				e.Text = s.text(lines)
				edits = append(edits, e)
				model = append(model, modelEdit{p, p, lines})
			case op == 6 && n > 0: // replaceText of a line that occurs once
				a := s.next(n)
				c := d.Line(a + 1)
				joined := strings.ReplaceAll(d.Text(), "\r\n", "\n")
				at := strings.Index(joined, c)
				if usedLine[a] || c == "" || strings.Contains(c, "\r") || strings.Contains(joined[at+1:], c) || (a > 0 && at > 0 && joined[at-1] != '\n') || a == 0 && at != 0 {
					continue
				}
				repl := s.lines(1)[:1]
				if repl[0] == "" && d.EOL(a+1) == "" {
					// Replacing all of a last line without ending by
					// nothing leaves no line, as exact text replacement.
					repl = nil
				}
				usedLine[a] = true
				edits = append(edits, Edit{Op: OpReplaceText, OldText: c, NewText: strings.Join(repl, "")})
				model = append(model, modelEdit{a, a + 1, repl})
			}
		}
		if len(edits) == 0 {
			return
		}
		want := applyModel(string(doc), model)
		// Every other chunk of line sums is known before the edit, so the
		// new document carries some and computes the rest.
		for n := 1; n <= d.Len(); n += 2 * sumChunkLen {
			d.sum(n)
		}
		// The model applies texts as sent; repairs have their own target
		// (FuzzRepairs).
		opts := ApplyOptions{Hasher: h, Context: s.next(4)}
		res, err := ApplyEdits(d, edits, opts, Strict(true))
		if !d.BOM() && want != string(doc) && strings.HasPrefix(want, "\ufeff") {
			var be *BatchError
			if !errors.As(err, &be) || be.Reason() != ReasonInvalidEdit {
				t.Fatalf("edits %+v make U+FEFF the first character, want INVALID_EDIT; got %v", edits, err)
			}
			return
		}
		if want == string(doc) {
			var be *BatchError
			if !errors.As(err, &be) || be.Reason() != ReasonNoChange {
				t.Fatalf("edits %+v change nothing, want NO_CHANGE; got %v", edits, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("ApplyEdits(%q, %+v): %v", doc, edits, err)
		}
		if got := string(res.Doc.Bytes()); got != want {
			t.Fatalf("ApplyEdits(%q, %+v)\n got %q\nwant %q", doc, edits, got, want)
		}
		checkHunks(t, d, res)
		// The new document's lines were placed by the emitter, not split
		// from its text: they must be exactly what a split finds.
		if p := ParseDocument(res.Doc.Bytes()); !slices.Equal(p.starts, res.Doc.starts) || p.crlf != res.Doc.crlf || p.lf != res.Doc.lf || p.bom != res.Doc.bom || p.text != res.Doc.text {
			t.Fatalf("ApplyEdits(%q, %+v): document starts %v crlf %d lf %d bom %v, a split of its bytes gives %v %d %d %v",
				doc, edits, res.Doc.starts, res.Doc.crlf, res.Doc.lf, res.Doc.bom, p.starts, p.crlf, p.lf, p.bom)
		}
		for n := 1; n <= res.Doc.Len(); n++ {
			if got, want := res.Doc.sum(n), Sum32(res.Doc.Line(n)); got != want {
				t.Fatalf("ApplyEdits(%q, %+v): line %d's sum is %08x, its content's is %08x", doc, edits, n, got, want)
			}
		}
		checkDiff(t, d.Text(), res.Doc.Text(), res.Diff)
		checkTagged(t, d, res, opts)
		checkUntouched(t, d, res.Doc, model)
		for _, w := range res.Windows {
			for _, l := range w.Lines {
				if l.Content != res.Doc.Line(l.Number) || l.Hash != h.Sum(l.Content) {
					t.Fatalf("window line %+v is not the new file's", l)
				}
			}
		}
		for _, l := range res.Replaced {
			if l.Content != d.Line(l.Number) || l.Hash != h.Sum(l.Content) {
				t.Fatalf("replaced line %+v is not the old file's", l)
			}
		}
	})
}

// checkUntouched verifies that every line outside the edits is in the new
// document, at its shifted position, byte for byte; only the old last line
// may gain an ending and the new last line may lose one, to keep the
// file's final-newline state.
func checkUntouched(t *testing.T, old, nd *Document, edits []modelEdit) {
	t.Helper()
	for i := range old.Len() {
		shift, touched := 0, false
		for _, e := range edits {
			switch {
			case i >= e.start && i < e.end:
				touched = true
			case e.end <= i && (e.start < e.end || e.start <= i):
				shift += len(e.lines) - (e.end - e.start)
			}
		}
		if touched {
			continue
		}
		j := i + shift + 1
		if j > nd.Len() || nd.Line(j) != old.Line(i+1) {
			t.Fatalf("untouched old line %d %q is not new line %d", i+1, old.Line(i+1), j)
		}
		if nd.EOL(j) != old.EOL(i+1) && !(i == old.Len()-1 && old.EOL(i+1) == "") && !(j == nd.Len() && !old.FinalNewline() && nd.Line(j) != "") {
			t.Fatalf("untouched old line %d ends %q, new line %d ends %q", i+1, old.EOL(i+1), j, nd.EOL(j))
		}
	}
}

// checkHunks checks Result.Hunks: in order, and every old line outside
// them is, with its content, at its shifted number in the new document.
func checkHunks(t *testing.T, d *Document, res *Result) {
	t.Helper()
	old, shift := 0, 0
	check := func(from, to int) {
		for i := from; i < to; i++ {
			if d.Line(i+1) != res.Doc.Line(i+1+shift) {
				t.Fatalf("old line %d %q is outside every hunk %+v, but new line %d is %q", i+1, d.Line(i+1), res.Hunks, i+1+shift, res.Doc.Line(i+1+shift))
			}
		}
	}
	for _, h := range res.Hunks {
		if h.OldStart < old || h.OldEnd < h.OldStart || h.NewEnd < h.NewStart || h.NewStart != h.OldStart+shift {
			t.Fatalf("hunks %+v out of order or misplaced (after old line %d, shift %d)", res.Hunks, old, shift)
		}
		check(old, h.OldStart)
		old, shift = h.OldEnd, h.NewEnd-h.OldEnd
	}
	if d.Len()+shift != res.Doc.Len() {
		t.Fatalf("hunks %+v: %d old lines shifted by %d are not the new %d", res.Hunks, d.Len(), shift, res.Doc.Len())
	}
	check(old, d.Len())
}
