package hashline

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzRepairs sends one edit whose text carries the slips repairs look
// for (echoes of the neighbouring lines, diff markers, lost indentation,
// escaped tabs, pasted tags) and checks that a repaired edit changes
// exactly the lines it names, that a refusal says why and shows both
// readings, and that Strict applies the text exactly as sent.
func FuzzRepairs(f *testing.F) {
	f.Add([]byte(goSrc), []byte{0, 4, 1, 1, 1, 0, 0, 0, 0, 0})
	f.Add([]byte(goSrc), []byte{0, 6, 0, 0, 1, 1, 0, 0, 0, 0})
	f.Add([]byte(goSrc), []byte{1, 4, 0, 1, 0, 0, 0, 0, 0, 0})
	f.Add([]byte(goSrc), []byte{0, 3, 2, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte(goSrc), []byte{0, 4, 0, 0, 0, 1, 0, 1, 0, 0})
	f.Add([]byte("def f():\n    x = 1\n    return x\n"), []byte{0, 1, 1, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte("+ a\n+ b\n\nc\n"), []byte{2, 1, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Add([]byte("a\n}\n}\n"), []byte{0, 1, 0, 1, 1, 0, 0, 0, 0, 1})
	// A lone "+" line at column 0, an echoed "*/" or "/>", a blank line
	// replaced at column 0, a block shifted left.
	f.Add([]byte(goConst), []byte{0, 2, 0, 0, 0, 11, 0, 0, 0, 1})
	f.Add([]byte(tsDoc), []byte{0, 4, 0, 1, 0, 10, 0, 0, 1, 0, 0, 0})
	f.Add([]byte(tsDoc), []byte{0, 1, 1, 0, 0, 0, 0, 1, 0, 0})
	f.Add([]byte(jsx), []byte{0, 5, 0, 0, 1, 12, 0, 1, 0, 0, 0})
	f.Add([]byte(goBlank), []byte{0, 2, 0, 0, 0, 0, 0, 0, 0, 2})
	f.Add([]byte(pyBlank), []byte{0, 3, 0, 1, 0, 1, 0, 0, 0, 2})
	f.Add([]byte(goSrc), []byte{0, 4, 2, 2, 0, 3, 0, 2, 0, 0, 0, 0, 5})
	// A "+" line before a context line of a long hunk, far from its "+".
	f.Add([]byte(longHunk), []byte{2, 26, 0, 0, 1, 4, 0, 0, 0, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, doc, sc []byte) {
		if len(doc) > 2048 || len(sc) > 64 {
			return
		}
		d := ParseDocument(doc)
		h := Hasher{}
		s := script(sc)
		n := d.Len()
		op := []Op{OpReplace, OpInsertAfter, OpInsertBefore, OpAppend, OpPrepend}[s.next(5)]
		if n == 0 {
			op = OpAppend
		}
		// The edit goes to [at, end), 0-based; it is reported on line.
		var at, end int
		e := Edit{Op: op}
		switch op {
		case OpReplace:
			at = s.next(n)
			end = min(at+1+s.next(3), n)
			e.Start, e.End = s.ref(d, h, at+1), s.ref(d, h, end)
		case OpInsertAfter:
			at = s.next(n) + 1
			end, e.Start = at, s.ref(d, h, at)
		case OpInsertBefore:
			at = s.next(n)
			end, e.Start = at, s.ref(d, h, at+1)
		case OpAppend:
			at, end = n, n
		}
		lines := s.sloppyLines(d, at, end)
		e.Text = s.text(lines)
		p, err := PlanEdits(d, []Edit{e}, h)
		if err != nil {
			var be *BatchError
			if !errors.As(err, &be) {
				t.Fatalf("PlanEdits(%q): %v", e.Text, err)
			}
			for _, pr := range be.Problems {
				if pr.Reason != ReasonInvalidEdit || pr.Field != "text" || !pr.ShowsTags || !strings.Contains(pr.Message, "strict") || strings.Count(pr.Message, "\n  ") < 2 {
					t.Fatalf("PlanEdits(%q) refused with %+v; want INVALID_EDIT of the text with both readings", e.Text, pr)
				}
			}
		} else {
			if len(p.Changes) != 1 || p.Changes[0].Start != at || p.Changes[0].End != end {
				t.Fatalf("PlanEdits(%q) planned %+v, want one change of [%d, %d)", e.Text, p.Changes, at, end)
			}
			for _, r := range p.Repairs {
				if r.EditIndex != 0 || !slices.Contains(RepairKinds, r.Kind) || !slices.Contains(p.Warnings, r.Warning()) || r.Line < 0 || r.Line > n {
					t.Fatalf("repair %+v is malformed (warnings %q)", r, p.Warnings)
				}
			}
			if len(p.Changes[0].Lines) > len(SplitText(e.Text)) {
				t.Fatalf("repairs of %q added lines: %q", e.Text, p.Changes[0].Lines)
			}
			if res, err := p.Apply(d, ApplyOptions{Hasher: h}); err == nil {
				checkUntouched(t, d, res.Doc, []modelEdit{{at, end, p.Changes[0].Lines}})
			}
		}
		ps, err := PlanEdits(d, []Edit{e}, h, Strict(true))
		if err != nil {
			t.Fatalf("PlanEdits(%q) with Strict: %v", e.Text, err)
		}
		if got := ps.Changes[0].Lines; !slices.Equal(got, SplitText(e.Text)) || len(ps.Repairs) > 0 {
			t.Fatalf("PlanEdits(%q) with Strict planned %q and repairs %v, want the text as sent", e.Text, got, ps.Repairs)
		}
	})
}

// sloppyLines writes at least one line for an edit of [at, end) the way a
// careless model might.
func (s *script) sloppyLines(d *Document, at, end int) []string {
	words := []string{"a", "if x {", "}", "\t", "  ", "+", "-", `\t`, "1:ab|", "", "*/", "const", "/>", "<a"}
	var out []string
	for range s.next(3) + 1 {
		l := ""
		for range s.next(3) + 1 {
			l += words[s.next(len(words))]
		}
		out = append(out, l)
	}
	if s.next(2) == 1 && at >= 1 {
		out = append([]string{d.Line(at)}, out...) // echo the line before
	}
	if s.next(2) == 1 && end < d.Len() {
		out = append(out, d.Line(end+1)) // echo the line after
	}
	if s.next(2) == 1 && end > at {
		out = append([]string{"-" + d.Line(at+1)}, out...) // a diff's old line
	}
	mark := s.next(6)
	for i, l := range out {
		l = strings.TrimRight(l, "\r")
		switch mark {
		case 1:
			l = "+" + l
		case 2:
			l = strings.TrimLeft(l, " \t")
		case 3:
			l = strings.ReplaceAll(l, "\t", `\t`)
		case 4:
			l = "9:ab|" + l
		case 5:
			if lead(l) != "" {
				l = l[1:] // one level of the indentation lost
			}
		}
		out[i] = l
	}
	return out
}
