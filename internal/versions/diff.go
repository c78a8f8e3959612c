package versions

import (
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff/lcs"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/hashline/hashline/internal/hashline"
)

// DiffTimeout bounds the exact diff search of one Diff call. Past it the
// part not yet resolved counts as one changed block, and a second search,
// bounded alike, tries a faster route that is not always the shortest;
// the diff keeping more lines wins. Rebases may then report more conflicts
// than needed, never fewer. Small edits to large files take microseconds;
// only near-total rewrites and moves of thousands of lines come close.
const DiffTimeout = 100 * time.Millisecond

// Hunk is one change between two versions of a file: lines A0..A1 of the old
// version (0-based, half-open) were replaced by lines B0..B1 of the new one.
// A0 == A1 is a pure insertion before old line A0; B0 == B1 a deletion.
type Hunk struct {
	A0, A1, B0, B1 int
}

// Diff returns the hunks turning old into new, in order. Lines are compared
// by content without their endings. Hunks are separated by at least one
// unchanged line.
func Diff(old, new *hashline.Document) []Hunk { return diff(old, new, DiffTimeout) }

// diff is Diff with its search bounded by timeout (tests make slow diffs
// deterministic with it).
func diff(old, new *hashline.Document, timeout time.Duration) []Hunk {
	n, m := old.Len(), new.Len()
	p := commonPrefix(old, new)
	s := commonSuffix(old, new, p)
	a0, a1, b0, b1 := p, n-s, p, m-s
	switch {
	case a0 == a1 && b0 == b1:
		return nil
	case a0 == a1 || b0 == b1:
		return []Hunk{{a0, a1, b0, b1}}
	}
	if hunks, ok := lcsDiff(old, new, a0, a1, b0, b1); ok {
		return hunks
	}
	return dmpDiff(old, new, a0, a1, b0, b1, timeout)
}

// lcsExactBound is the edit distance (lines removed plus lines added) below
// which go-udiff's LCS search is exact. It stops at 100 (its maxDiffs) and
// then patches a path together that is valid but may mark far more lines as
// changed than were; TestDiffFindsEveryScatteredChange guards the bound.
const lcsExactBound = 100

// lcsDiff diffs the middle lines with go-udiff's Myers LCS, which needs no
// interning and is the fast path for the few changes a rebase usually
// spans. It reports !ok when the result may not be minimal.
func lcsDiff(old, new *hashline.Document, a0, a1, b0, b1 int) ([]Hunk, bool) {
	a, b := lines(old, a0, a1), lines(new, b0, b1)
	ds := lcs.DiffLines(a, b)
	d := 0
	for _, x := range ds {
		d += x.End - x.Start + x.ReplEnd - x.ReplStart
	}
	if d >= lcsExactBound {
		return nil, false
	}
	hunks := make([]Hunk, len(ds))
	for i, x := range ds {
		hunks[i] = Hunk{A0: a0 + x.Start, A1: a0 + x.End, B0: b0 + x.ReplStart, B1: b0 + x.ReplEnd}
	}
	return hunks, true
}

func lines(d *hashline.Document, from, to int) []string {
	out := make([]string, to-from)
	for i := range out {
		out[i] = d.Line(from + i + 1)
	}
	return out
}

// dmpDiff diffs the middle lines with diffmatchpatch's Myers bisection on
// lines interned to runes: exact however many changes there are, within
// timeout (0: no bound). Past it the part of the search not yet resolved
// comes back as one deletion and one insertion: valid, but it may mark
// unchanged lines as changed (see DiffTimeout for the second try).
//
// The bisection is called directly, with the library's own timeout left at
// 0: with a timeout set, the library first splits both texts at a long run
// they share ("half match"), a speed-up that can miss the shortest diff
// and mark lines a rebase needs as changed. The deadline given to the
// bisection still bounds every step of it.
func dmpDiff(old, new *hashline.Document, a0, a1, b0, b1 int, timeout time.Duration) []Hunk {
	ra, rb, ok := intern(old, new, a0, a1, b0, b1)
	if !ok {
		return []Hunk{{a0, a1, b0, b1}}
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0
	var diffs []diffmatchpatch.Diff
	if min(len(ra), len(rb)) == 1 {
		// The bisection indexes past its arrays when both sides are one
		// rune; the library's entry point answers a side of one rune
		// without a search (the line is in the other side or it is not).
		diffs = dmp.DiffMainRunes(ra, rb, false)
	} else {
		diffs = dmp.DiffBisect(string(ra), string(rb), deadline)
		if !deadline.IsZero() && time.Now().After(deadline) {
			// The search may have stopped short. The half match resolves
			// large moved or swapped blocks at once: a valid diff too,
			// kept if it keeps more lines.
			dmp.DiffTimeout = timeout
			if alt := dmp.DiffMainRunes(ra, rb, false); kept(alt) > kept(diffs) {
				diffs = alt
			}
		}
	}
	var hunks []Hunk
	i, j := a0, b0
	open := false
	for _, d := range diffs {
		k := utf8.RuneCountInString(d.Text)
		switch {
		case k == 0:
			// The bisection's pieces are not merged: an empty one must not
			// split a hunk in two.
			continue
		case d.Type == diffmatchpatch.DiffEqual:
			open = false
			i += k
			j += k
			continue
		case !open:
			hunks = append(hunks, Hunk{A0: i, A1: i, B0: j, B1: j})
			open = true
		}
		h := &hunks[len(hunks)-1]
		if d.Type == diffmatchpatch.DiffDelete {
			i += k
			h.A1 = i
		} else {
			j += k
			h.B1 = j
		}
	}
	return hunks
}

// kept counts the lines diffs keeps.
func kept(diffs []diffmatchpatch.Diff) int {
	n := 0
	for _, d := range diffs {
		if d.Type == diffmatchpatch.DiffEqual {
			n += utf8.RuneCountInString(d.Text)
		}
	}
	return n
}

// commonPrefix returns how many leading lines old and new share. It
// compares big blocks of bytes first: a rebase usually diffs a large file
// against itself with a few small changes.
func commonPrefix(old, new *hashline.Document) int {
	a, b := old.Text(), new.Text()
	off := 0
	for step := 64 << 10; step >= 64; step /= 8 {
		for off+step <= len(a) && off+step <= len(b) && a[off:off+step] == b[off:off+step] {
			off += step
		}
	}
	// Every line that ends before off is equal byte for byte, ending too.
	p := strings.Count(a[:strings.LastIndexByte(a[:off], '\n')+1], "\n")
	for p < old.Len() && p < new.Len() && old.Line(p+1) == new.Line(p+1) {
		p++
	}
	return p
}

// commonSuffix returns how many trailing lines old and new share, not
// counting the first p lines (already matched as the prefix).
func commonSuffix(old, new *hashline.Document, p int) int {
	a, b := old.Text(), new.Text()
	off := 0
	for step := 64 << 10; step >= 64; step /= 8 {
		for off+step <= len(a) && off+step <= len(b) && a[len(a)-off-step:len(a)-off] == b[len(b)-off-step:len(b)-off] {
			off += step
		}
	}
	// The lines that start after the first newline of the common tail are
	// equal byte for byte.
	s := 0
	tail := a[len(a)-off:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		rest := tail[i+1:]
		s = strings.Count(rest, "\n")
		if rest != "" && rest[len(rest)-1] != '\n' {
			s++
		}
	}
	n, m := old.Len(), new.Len()
	s = min(s, n-p, m-p)
	for s < n-p && s < m-p && old.Line(n-s) == new.Line(m-s) {
		s++
	}
	return s
}

// intern numbers the distinct lines of old[a0:a1] and new[b0:b1] as runes,
// equal lines sharing one, so the diff library compares whole lines. Runes
// stay valid Unicode scalar values (the library turns them into strings);
// more distinct lines than there are such values is reported as !ok.
func intern(old, new *hashline.Document, a0, a1, b0, b1 int) ([]rune, []rune, bool) {
	ids := make(map[string]rune, (a1-a0)+(b1-b0))
	next := rune(0)
	conv := func(d *hashline.Document, from, to int) ([]rune, bool) {
		out := make([]rune, to-from)
		for i := range out {
			l := d.Line(from + i + 1)
			r, ok := ids[l]
			if !ok {
				if next > utf8.MaxRune {
					return nil, false
				}
				r = next
				ids[l] = r
				next++
				if next == 0xD800 { // skip the surrogates
					next = 0xE000
				}
			}
			out[i] = r
		}
		return out, true
	}
	ra, ok := conv(old, a0, a1)
	if !ok {
		return nil, nil, false
	}
	rb, ok := conv(new, b0, b1)
	return ra, rb, ok
}

// lineMap answers questions about base lines and gaps from the hunks of a
// diff base -> current.
type lineMap struct {
	hunks []Hunk
}

// changed returns the hunk that replaced base line i (0-based), if any.
func (m lineMap) changed(i int) (Hunk, bool) {
	k := sort.Search(len(m.hunks), func(k int) bool { return m.hunks[k].A1 > i })
	if k < len(m.hunks) && m.hunks[k].A0 <= i {
		return m.hunks[k], true
	}
	return Hunk{}, false
}

// to returns the current index of base line i, which must be untouched.
func (m lineMap) to(i int) int {
	k := sort.Search(len(m.hunks), func(k int) bool { return m.hunks[k].A1 > i })
	if k == 0 {
		return i
	}
	h := m.hunks[k-1]
	return i + h.B1 - h.A1
}

// insertedAt returns the hunk that may have inserted lines into gap g on
// the side of an insertion anchored before it (after: the anchor is line
// g-1, the text goes after it) or after it (the anchor is line g): a hunk
// that only adds lines at g, one whose removed lines surround g, or one that
// starts (after) or ends (!after) at g and adds more lines than it removes,
// since the extra lines may have been inserted right at g.
func (m lineMap) insertedAt(g int, after bool) (Hunk, bool) {
	k := sort.Search(len(m.hunks), func(k int) bool { return m.hunks[k].A1 >= g })
	for ; k < len(m.hunks) && m.hunks[k].A0 <= g; k++ {
		h := m.hunks[k]
		grew := h.B1-h.B0 > h.A1-h.A0
		switch {
		case h.A0 == g && h.A1 == g, h.A0 < g && g < h.A1:
			return h, true
		case after && h.A0 == g && grew, !after && h.A1 == g && grew:
			return h, true
		}
	}
	return Hunk{}, false
}

// touched returns the first hunk that changed a line of base lines
// [from, to) or inserted into one of the gaps strictly inside it.
func (m lineMap) touched(from, to int) (Hunk, bool) {
	// Past the search, a hunk that removes lines overlaps [from, to) and a
	// pure insertion lies strictly inside it.
	k := sort.Search(len(m.hunks), func(k int) bool { return m.hunks[k].A1 > from })
	if k < len(m.hunks) && m.hunks[k].A0 < to {
		return m.hunks[k], true
	}
	return Hunk{}, false
}
