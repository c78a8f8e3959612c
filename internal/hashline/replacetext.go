package hashline

import (
	"fmt"
	"sort"
	"strings"
)

// joinedText is the document as one string with every line ending written
// as "\n", so replaceText matches the same text whether the file uses LF or
// CRLF, and offsets map back to lines through starts.
type joinedText struct {
	s      string
	starts []int // starts[i] is the offset of line i; starts[n] == len(s)
}

func (r *resolver) joinedDoc() *joinedText {
	if r.joined != nil {
		return r.joined
	}
	d := r.d
	if d.crlf == 0 {
		// Already LF-only: share the document's text and offsets.
		r.joined = &joinedText{s: d.text, starts: d.starts}
		return r.joined
	}
	n := d.Len()
	b := make([]byte, 0, len(d.text))
	starts := make([]int, n+1)
	for i := 1; i <= n; i++ {
		starts[i-1] = len(b)
		b = append(b, d.Line(i)...)
		if d.EOL(i) != "" {
			b = append(b, '\n')
		}
	}
	starts[n] = len(b)
	r.joined = &joinedText{s: string(b), starts: starts}
	return r.joined
}

// lineOf returns the 0-based line that contains byte offset off.
func (j *joinedText) lineOf(off int) int {
	n := len(j.starts) - 1
	return sort.Search(n, func(i int) bool { return j.starts[i+1] > off })
}

// normalizeText makes client text comparable with joinedText: CRLF becomes
// LF and, unless strict, pasted hashline prefixes are stripped (a repair).
func (r *resolver) normalizeText(i int, field, text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if r.strict {
		return text
	}
	lines, stripped := StripTagPrefixes(SplitText(text))
	if !stripped {
		return text
	}
	r.repair(i, RepairPrefixStripped, 0, "%s", prefixDetail(field))
	s := strings.Join(lines, "\n")
	if strings.HasSuffix(text, "\n") {
		s += "\n"
	}
	return s
}

type match struct{ start, end int }

// replaceText resolves a replaceText edit into whole-line changes: the lines
// each match touches are replaced by themselves with the match substituted,
// keeping the unmatched start of the first line and end of the last.
func (r *resolver) replaceText(i int, e Edit) {
	if e.OldText == "" {
		r.problem(Problem{
			EditIndex: i, Field: "oldText", Reason: ReasonInvalidEdit,
			Message: fmt.Sprintf("edit %d (oldText): oldText is empty; give the exact text to replace, with enough surrounding lines to make it unique", i),
		})
		return
	}
	j := r.joinedDoc()
	// Text that occurs as given is taken as given, even if it looks like
	// pasted read output: the file may really contain "12:3f|".
	old := strings.ReplaceAll(e.OldText, "\r\n", "\n")
	if !strings.Contains(j.s, old) {
		old = r.normalizeText(i, "oldText", e.OldText)
	}
	repl := r.normalizeText(i, "newText", e.NewText)
	if old == "" {
		// Only hashline prefixes: "12:3f|" names an empty line by tag, which
		// is what replace is for.
		r.problem(Problem{
			EditIndex: i, Field: "oldText", Reason: ReasonInvalidEdit,
			Message: fmt.Sprintf("edit %d (oldText): oldText is only hashline prefixes with no text after them; to change lines by their tags use replace with start/end refs, or give the exact text to replace", i),
		})
		return
	}
	first := strings.Index(j.s, old)
	if first < 0 {
		similar, tags := r.closeLines(old)
		r.problem(Problem{
			EditIndex: i, Field: "oldText", Reason: ReasonTextNotFound, ShowsTags: similar != "", Tags: tags,
			Message: fmt.Sprintf("edit %d (oldText): oldText does not occur in the file; it must match exactly, including indentation; re-read the file, or use replace with line refs%s", i, similar),
		})
		return
	}
	matches := []match{{first, first + len(old)}}
	if e.All {
		for at := first + len(old); ; {
			k := strings.Index(j.s[at:], old)
			if k < 0 {
				break
			}
			matches = append(matches, match{at + k, at + k + len(old)})
			at += k + len(old)
		}
	} else if strings.Contains(j.s[first+1:], old) {
		r.ambiguous(i, j, old, first)
		return
	}
	r.addTextChanges(i, j, matches, repl)
}

// addTextChanges groups matches that touch the same lines and adds one
// change per group.
func (r *resolver) addTextChanges(i int, j *joinedText, ms []match, repl string) {
	n := len(j.starts) - 1
	for k := 0; k < len(ms); {
		first := j.lineOf(ms[k].start)
		last := j.lineOf(ms[k].end - 1)
		next := k + 1
		var seg string
		for {
			for next < len(ms) && ms[next].start < j.starts[last+1] {
				last = max(last, j.lineOf(ms[next].end-1))
				next++
			}
			seg = substitute(j, first, last, ms[k:next], repl)
			// A match that swallowed a line's "\n" joins the next line
			// onto the replacement, as exact text replacement would.
			if seg != "" && !strings.HasSuffix(seg, "\n") && strings.HasSuffix(j.s[:j.starts[last+1]], "\n") && last+1 < n {
				last++
				continue
			}
			break
		}
		r.add(i, "oldText", first, last+1, SplitText(seg))
		k = next
	}
}

// substitute returns lines first..last of j with each match replaced.
func substitute(j *joinedText, first, last int, ms []match, repl string) string {
	var b strings.Builder
	pos := j.starts[first]
	for _, m := range ms {
		b.WriteString(j.s[pos:m.start])
		b.WriteString(repl)
		pos = m.end
	}
	b.WriteString(j.s[pos:j.starts[last+1]])
	return b.String()
}

// ambiguous reports every line where old starts, as tags, so the model can
// switch to a line-referenced edit or widen oldText.
func (r *resolver) ambiguous(i int, j *joinedText, old string, first int) {
	const show = 10
	var lines []int
	count := 0
	for at := first; ; {
		count++
		if l := j.lineOf(at); len(lines) == 0 || lines[len(lines)-1] != l {
			lines = append(lines, l)
		}
		k := strings.Index(j.s[at+1:], old)
		if k < 0 {
			break
		}
		at += 1 + k
	}
	var tags []string
	var numbers []int
	for _, l := range lines[:min(len(lines), show)] {
		tags = append(tags, TaggedLine{Number: l + 1, Hash: r.d.Hash(r.h, l+1)}.Tag())
		numbers = append(numbers, l+1)
	}
	more := ""
	if len(lines) > show {
		more = fmt.Sprintf(" and %d more", len(lines)-show)
	}
	r.problem(Problem{
		EditIndex: i, Field: "oldText", Reason: ReasonAmbiguousText, ShowsTags: true, Tags: numbers,
		Message: fmt.Sprintf("edit %d (oldText): oldText occurs %d times, starting on lines %s%s; add surrounding lines to make it unique, set all to replace every occurrence, or use replace with one of these refs", i, count, strings.Join(tags, ", "), more),
	})
}

// closeLines suggests lines that contain the first line of old once
// indentation is ignored, the usual reason an exact match fails, and
// returns their numbers too.
func (r *resolver) closeLines(old string) (string, []int) {
	want := ""
	for _, l := range SplitText(old) {
		if t := strings.TrimSpace(l); t != "" {
			want = t
			break
		}
	}
	if len(want) < 3 {
		return "", nil
	}
	var found []string
	var numbers []int
	for n := 1; n <= r.d.Len() && len(found) < 3; n++ {
		if c := r.d.Line(n); strings.Contains(c, want) {
			found = append(found, TaggedLine{Number: n, Hash: r.h.Sum(c), Content: c}.String())
			numbers = append(numbers, n)
		}
	}
	if len(found) == 0 {
		return "", nil
	}
	return ". Lines with similar text: " + strings.Join(found, " ; "), numbers
}
