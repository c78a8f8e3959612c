package watch

import (
	"bytes"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Range is a changed region between two versions of a file, like a unified
// diff hunk header without context: OldCount lines starting at line
// OldStart became NewCount lines starting at NewStart. Lines are 1-based; a
// side with a count of 0 is a pure insertion or deletion and its start is
// the line before it (0 at the top of the file), as in "@@ -3,0 +4,2 @@".
type Range struct {
	OldStart, OldCount int
	NewStart, NewCount int
}

// Ranges returns the changed regions from old to new, in file order. Lines
// are compared with their endings, so a line whose only change is CRLF to
// LF is a change. Adjacent changes are merged into one region. Identical
// contents have no ranges.
func Ranges(old, new []byte) []Range {
	// The common head and tail are cut off by whole lines before the line
	// diff, so an edit of a large file costs the size of the change plus
	// one scan, not a split of the whole file.
	pre := commonPrefixLines(old, new)
	suf := commonSuffixLines(old[pre:], new[pre:])
	a, b := splitLines(old[pre:len(old)-suf]), splitLines(new[pre:len(new)-suf])
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	skip := bytes.Count(old[:pre], []byte{'\n'}) // whole lines before the diffed part
	var out []Range
	for _, d := range lcs.DiffLines(a, b) {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if lastOldEnd(last, skip) == d.Start && lastNewEnd(last, skip) == d.ReplStart {
				last.OldCount += d.End - d.Start
				last.NewCount += d.ReplEnd - d.ReplStart
				continue
			}
		}
		out = append(out, Range{
			OldStart: skip + d.Start + 1, OldCount: d.End - d.Start,
			NewStart: skip + d.ReplStart + 1, NewCount: d.ReplEnd - d.ReplStart,
		})
	}
	// Only now that merging is done can a zero count move its start to the
	// line before, as the header convention wants.
	for i := range out {
		if out[i].OldCount == 0 {
			out[i].OldStart--
		}
		if out[i].NewCount == 0 {
			out[i].NewStart--
		}
	}
	return out
}

// lastOldEnd and lastNewEnd are the 0-based indexes, within the diffed
// part, just past a range that still has 1-based starts.
func lastOldEnd(r *Range, skip int) int { return r.OldStart - 1 - skip + r.OldCount }
func lastNewEnd(r *Range, skip int) int { return r.NewStart - 1 - skip + r.NewCount }

// chunk is how many bytes the common head and tail are compared by at a
// time (with the vectorised bytes.Equal) before the byte-wise finish.
const chunk = 256

// commonPrefixLines is the byte length of the whole lines (with their
// endings) that a and b start with.
func commonPrefixLines(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+chunk <= n && bytes.Equal(a[i:i+chunk], b[i:i+chunk]) {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return i
	}
	// Back off to the end of the last complete shared line.
	return bytes.LastIndexByte(a[:i], '\n') + 1
}

// commonSuffixLines is the byte length of the whole lines that a and b end
// with; a shared tail counts only from a line start in both.
func commonSuffixLines(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+chunk <= n && bytes.Equal(a[len(a)-i-chunk:len(a)-i], b[len(b)-i-chunk:len(b)-i]) {
		i += chunk
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	// The shared tail must start right after a newline (or at the start)
	// in both, so that it is made of whole lines in both.
	for i > 0 {
		sa, sb := len(a)-i, len(b)-i
		if (sa == 0 || a[sa-1] == '\n') && (sb == 0 || b[sb-1] == '\n') {
			break
		}
		j := bytes.IndexByte(a[sa:], '\n')
		if j < 0 {
			return 0
		}
		i -= j + 1
	}
	return max(i, 0)
}

// splitLines splits text after each "\n"; a last line without newline is a
// line too.
func splitLines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	lines := make([]string, 0, bytes.Count(text, []byte{'\n'})+1)
	for len(text) > 0 {
		i := bytes.IndexByte(text, '\n') + 1
		if i == 0 {
			i = len(text)
		}
		lines = append(lines, string(text[:i]))
		text = text[i:]
	}
	return lines
}
