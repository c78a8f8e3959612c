package versions_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// scenario is a base file, another agent's change to it and a batch made
// against the base, generated so that the truth is known without a diff:
// every line is distinct, so the lines the other change kept are exactly
// the ones a correct diff matches.
type scenario struct {
	base  []string
	kept  []bool     // per base line: the other change left it alone
	repl  [][]string // per base line not kept: what replaced it (nil: deleted)
	ins   [][]string // per gap 0..n: lines the other change inserted there
	cur   []string
	at    []int // per base line: its index in cur, or -1
	mine  []myEdit
	edits []hashline.Edit
}

type myEdit struct {
	op     hashline.Op
	s, e   int // 0-based line range [s, e) of replace/delete; s is the anchor of inserts
	lines  []string
	append bool
}

func generate(r *rand.Rand) *scenario {
	sc := &scenario{}
	n := 1 + r.IntN(12)
	for i := range n {
		sc.base = append(sc.base, fmt.Sprintf("b%d", i))
	}
	fresh := 0
	newLines := func(prefix string) []string {
		out := make([]string, 1+r.IntN(2))
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, fresh)
			fresh++
		}
		return out
	}
	sc.kept = make([]bool, n)
	sc.repl = make([][]string, n)
	sc.ins = make([][]string, n+1)
	for g := 0; g <= n; g++ {
		if r.IntN(6) == 0 {
			sc.ins[g] = newLines("o")
		}
		sc.cur = append(sc.cur, sc.ins[g]...)
		if g == n {
			break
		}
		switch r.IntN(8) {
		case 0:
			sc.repl[g] = newLines("o")
		case 1: // deleted
		default:
			sc.kept[g] = true
		}
		sc.at = append(sc.at, -1)
		if sc.kept[g] {
			sc.at[g] = len(sc.cur)
			sc.cur = append(sc.cur, sc.base[g])
		} else {
			sc.cur = append(sc.cur, sc.repl[g]...)
		}
	}
	bd := doc(sc.base...)
	for range 1 + r.IntN(3) {
		var m myEdit
		switch k := r.IntN(10); {
		case k < 3:
			m.op = hashline.OpReplace
		case k < 5:
			m.op = hashline.OpDelete
		case k < 7:
			m.op = hashline.OpInsertAfter
		case k < 9:
			m.op = hashline.OpInsertBefore
		default:
			m.op, m.append = hashline.OpAppend, true
		}
		m.s = r.IntN(n)
		m.e = min(n, m.s+1+r.IntN(3))
		if m.op != hashline.OpDelete {
			m.lines = newLines("m")
		}
		e := hashline.Edit{Op: m.op, Text: strings.Join(m.lines, "\n")}
		switch m.op {
		case hashline.OpReplace, hashline.OpDelete:
			e.Start, e.End = ref(bd, m.s+1), ref(bd, m.e)
		case hashline.OpInsertAfter, hashline.OpInsertBefore:
			e.Start = ref(bd, m.s+1)
		}
		sc.mine = append(sc.mine, m)
		sc.edits = append(sc.edits, e)
	}
	return sc
}

// block is a maximal run of the other change between two kept lines: base
// lines [a0, a1) and the gaps inside, replaced by lines.
type block struct {
	a0, a1 int
	lines  []string
}

func (sc *scenario) blocks() []block {
	var bs []block
	var open *block
	n := len(sc.base)
	for g := 0; g <= n; g++ {
		if len(sc.ins[g]) > 0 {
			if open == nil {
				bs = append(bs, block{a0: g, a1: g})
				open = &bs[len(bs)-1]
			}
			open.lines = append(open.lines, sc.ins[g]...)
		}
		if g == n {
			break
		}
		if sc.kept[g] {
			open = nil
			continue
		}
		if open == nil {
			bs = append(bs, block{a0: g, a1: g})
			open = &bs[len(bs)-1]
		}
		open.a1 = g + 1
		open.lines = append(open.lines, sc.repl[g]...)
	}
	return bs
}

// merge applies both changes to the base by hand, or reports that they
// collide: a reference on a line the other change rewrote, a range the
// other change reached into, or two insertions at one point.
func (sc *scenario) merge() ([]string, bool) {
	bs := sc.blocks()
	inBlock := func(i int) bool {
		for _, b := range bs {
			if b.a0 <= i && i < b.a1 {
				return true
			}
		}
		return false
	}
	pureAt := func(g int) bool {
		for _, b := range bs {
			if b.a0 == g && b.a1 == g {
				return true
			}
		}
		return false
	}
	// A block next to an insertion's gap, on the far side from its anchor,
	// that adds more lines than it removes may hide an insertion there.
	grewAt := func(g int, after bool) bool {
		for _, b := range bs {
			grew := len(b.lines) > b.a1-b.a0
			if grew && b.a0 < b.a1 && ((after && b.a0 == g) || (!after && b.a1 == g)) {
				return true
			}
		}
		return false
	}
	n := len(sc.base)
	after := make([][]string, n)  // my insertAfter texts per anchor
	before := make([][]string, n) // my insertBefore texts per anchor
	replaced := map[int][]string{}
	skip := make([]bool, n)
	var tail []string
	for _, m := range sc.mine {
		switch m.op {
		case hashline.OpAppend:
			tail = append(tail, m.lines...)
		case hashline.OpInsertAfter, hashline.OpInsertBefore:
			g := m.s + 1
			if m.op == hashline.OpInsertBefore {
				g = m.s
			}
			if inBlock(m.s) || pureAt(g) || grewAt(g, m.op == hashline.OpInsertAfter) {
				return nil, false
			}
			if m.op == hashline.OpInsertAfter {
				after[m.s] = m.lines
			} else {
				before[m.s] = m.lines
			}
		default:
			for i := m.s; i < m.e; i++ {
				if inBlock(i) || (i > m.s && pureAt(i)) {
					return nil, false
				}
				skip[i] = true
			}
			replaced[m.s] = m.lines
		}
	}
	// Two insertions at different points of the base that land at one
	// point of the current file (the other change deleted all between).
	type pos struct{ base, cur int }
	var ps []pos
	for _, m := range sc.mine {
		switch m.op {
		case hashline.OpAppend:
			ps = append(ps, pos{n, len(sc.cur)})
		case hashline.OpInsertAfter:
			ps = append(ps, pos{m.s + 1, sc.at[m.s] + 1})
		case hashline.OpInsertBefore:
			ps = append(ps, pos{m.s, sc.at[m.s]})
		}
	}
	for i := range ps {
		for j := range ps {
			if ps[i].base != ps[j].base && ps[i].cur == ps[j].cur {
				return nil, false
			}
		}
	}
	var out []string
	bi := 0
	for i := 0; ; {
		// At gap i: a block of the other change may start here, as a pure
		// insertion or as the rewrite of lines i..a1-1 (lines inserted at
		// gaps inside or right after it belong to the block too).
		if bi < len(bs) && bs[bi].a0 == i {
			b := bs[bi]
			bi++
			out = append(out, b.lines...)
			if b.a1 > i {
				i = b.a1
				continue
			}
		}
		if i == n {
			break
		}
		out = append(out, before[i]...)
		if lines, ok := replaced[i]; ok {
			out = append(out, lines...)
		}
		if !skip[i] {
			out = append(out, sc.base[i])
		}
		out = append(out, after[i]...)
		i++
	}
	return append(out, tail...), true
}

// checkScenario rebases the batch and compares with the hand merge: a
// conflict exactly when the merge collides, and otherwise the same file.
func checkScenario(t *testing.T, sc *scenario) {
	t.Helper()
	bd, cd := doc(sc.base...), doc(sc.cur...)
	if _, err := hashline.PlanEdits(bd, sc.edits, h); err != nil {
		return // an invalid batch (overlapping edits): nothing to rebase
	}
	want, ok := sc.merge()
	got, err := versions.Rebase(bd, cd, sc.edits, h)
	var ce *versions.ConflictError
	switch {
	case errors.As(err, &ce):
		if ok {
			t.Fatalf("rebase reported %v\nbut the changes merge to %q", err, want)
		}
		return
	case err != nil:
		t.Fatalf("rebase: %v", err)
	case !ok:
		t.Fatalf("rebase applied edits %+v, but the changes collide", got.Edits)
	}
	res, err := hashline.ApplyEdits(cd, got.Edits, hashline.ApplyOptions{Hasher: h})
	if err != nil {
		t.Fatalf("applying rebased edits %+v to %q: %v", got.Edits, sc.cur, err)
	}
	if gotText, wantText := res.Doc.Text(), strings.Join(want, "\n")+"\n"; gotText != wantText && !(len(want) == 0 && gotText == "") {
		t.Fatalf("rebased result\n%q\nwant the merge\n%q", gotText, wantText)
	}
}

func describe(sc *scenario) string {
	return fmt.Sprintf("base %q\ncur  %q\nedits %+v", sc.base, sc.cur, sc.edits)
}

// TestRebaseEqualsMerge is the property test: for generated scenarios,
// rebasing then applying equals applying the batch to the base and merging
// the other change in, and a conflict is reported exactly when the two
// changes collide.
func TestRebaseEqualsMerge(t *testing.T) {
	conflicts, merged := 0, 0
	for seed := range uint64(3000) {
		sc := generate(rand.New(rand.NewPCG(seed, 7)))
		t.Run("", func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Logf("seed %d\n%s", seed, describe(sc))
				}
			}()
			checkScenario(t, sc)
		})
		if _, ok := sc.merge(); ok {
			merged++
		} else {
			conflicts++
		}
	}
	// The generator must exercise both outcomes.
	if conflicts < 300 || merged < 300 {
		t.Errorf("%d conflicting and %d merging scenarios; the generator is lopsided", conflicts, merged)
	}
}

func FuzzRebaseEqualsMerge(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s, s^0x9e3779b97f4a7c15)
	}
	f.Fuzz(func(t *testing.T, a, b uint64) {
		sc := generate(rand.New(rand.NewPCG(a, b)))
		defer func() {
			if t.Failed() {
				t.Log(describe(sc))
			}
		}()
		checkScenario(t, sc)
	})
}

func TestDiffFindsEveryScatteredChange(t *testing.T) {
	// Many scattered one-line changes in a large file: an exact diff marks
	// exactly those lines (go-udiff's bounded LCS alone marked 1352 lines
	// for 60 changes, 7420 for 200). 49 changes stay under go-udiff's
	// bound, 60 and more take the diffmatchpatch path.
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 49, 60, 200, 1000} {
		old := make([]string, 10000)
		for i := range old {
			old[i] = fmt.Sprintf("line %d", i)
		}
		cur := slices.Clone(old)
		changed := map[int]bool{}
		for len(changed) < k {
			i := r.IntN(len(old))
			changed[i] = true
			cur[i] = fmt.Sprintf("changed %d", i)
		}
		marked := 0
		// A minute: no timing under -race.
		for _, hk := range versions.DiffWithin(doc(old...), doc(cur...), time.Minute) {
			if hk.A1-hk.A0 != hk.B1-hk.B0 {
				t.Fatalf("hunk %+v is not a one-for-one replacement", hk)
			}
			marked += hk.A1 - hk.A0
		}
		if marked != k {
			t.Errorf("%d changed lines: the diff marked %d", k, marked)
		}
	}
}

func TestDiffPastItsTimeoutStaysValid(t *testing.T) {
	t.Parallel()
	old := make([]string, 3000)
	for i := range old {
		old[i] = fmt.Sprintf("line %d", i)
	}
	cur := slices.Clone(old)
	for i := 0; i < len(cur); i += 20 {
		cur[i] = "changed"
	}
	od, cd := doc(old...), doc(cur...)
	hunks := versions.DiffWithin(od, cd, time.Nanosecond)
	// Replaying the hunks turns old into cur, and every line they keep is
	// equal: a timed-out diff may over-report changes, never hide one.
	var got []string
	prev := 0
	for _, hk := range hunks {
		got = append(got, old[prev:hk.A0]...)
		got = append(got, cur[hk.B0:hk.B1]...)
		prev = hk.A1
	}
	got = append(got, old[prev:]...)
	if !slices.Equal(got, cur) {
		t.Fatal("the hunks do not turn the old file into the new one")
	}
}

func TestDiffPastItsTimeoutKeepsSwappedHalves(t *testing.T) {
	// The halves of a 10k-line file swapped: the exact search runs out of
	// time at once, and the half match keeps one half whole instead of
	// marking every line changed.
	t.Parallel()
	old := file10K()
	cur := append(slices.Clone(old[5000:]), old[:5000]...)
	marked := 0
	for _, hk := range versions.DiffWithin(doc(old...), doc(cur...), time.Nanosecond) {
		marked += hk.A1 - hk.A0
	}
	if marked != 5000 {
		t.Errorf("the diff marked %d base lines, want 5000", marked)
	}
}
