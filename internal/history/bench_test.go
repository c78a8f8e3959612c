package history

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// blameFixture logs a 10,000-line file's creation and 999 edits to it,
// each a few lines replaced, inserted or deleted, among as many changes to
// other files, and returns the log and the file's line count.
func blameFixture(b *testing.B) (*Log, int) {
	l := openLog(b, b.TempDir(), Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	n := 10_000
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("\tvalue%05d := compute(%05d) // a line of about fifty bytes", i, i)
	}
	if _, err := l.Append(Change{Kind: KindWrite, Agent: "a", Files: []File{{Path: "big.go", After: "v0", Hunks: []Hunk{{Hunk: hk(0, 0, 0, n), Added: lines}}}}}); err != nil {
		b.Fatal(err)
	}
	other := smallChange()
	for i := 1; i < 1000; i++ {
		at := rng.IntN(n)
		del := min(rng.IntN(3), n-at)
		add := rng.IntN(4)
		if del == 0 && add == 0 {
			add = 1
		}
		h := Hunk{Hunk: hk(at, at+del, at, at+add), Removed: lines[at : at+del], Added: make([]string, add)}
		for j := range h.Added {
			h.Added[j] = fmt.Sprintf("\tedit%d := %d // a line of an edit", i, j)
		}
		if _, err := l.Append(Change{Kind: KindEdit, Agent: fmt.Sprintf("agent-%d", i%7), Files: []File{{Path: "big.go", Before: "v", After: "v", Hunks: []Hunk{h}}}}); err != nil {
			b.Fatal(err)
		}
		next := append(append(append([]string(nil), lines[:at]...), h.Added...), lines[at+del:]...)
		lines, n = next, len(next)
		if _, err := l.Append(other); err != nil {
			b.Fatal(err)
		}
	}
	return l, n
}

// BenchmarkBlame10kLines1000Changes: Blame of a 10,000-line file with
// 1,000 changes in its history.
func BenchmarkBlame10kLines1000Changes(b *testing.B) {
	l, n := blameFixture(b)
	for b.Loop() {
		spans, err := l.Blame("big.go", n)
		if err != nil || len(spans) < 100 {
			b.Fatal(len(spans), err)
		}
	}
}

// historyFixture logs 100,000 small changes to 1,000 files in 50
// directories by 10 agents.
func historyFixture(b *testing.B) *Log {
	l := openLog(b, b.TempDir(), Options{})
	c := smallChange()
	for i := range 100_000 {
		c.Agent = fmt.Sprintf("agent-%d", i%10)
		c.Files[0].Path = fmt.Sprintf("dir%02d/file%04d.go", i%50, i%1000)
		if _, err := l.Append(c); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

// BenchmarkHistory: the last 100 changes of a workspace with 100,000
// logged, and of a directory, a file and an agent's.
func BenchmarkHistory(b *testing.B) {
	l := historyFixture(b)
	for _, tc := range []struct {
		name string
		q    Query
	}{
		{"workspace", Query{Limit: 100}},
		{"workspace with hunks", Query{Limit: 100, Hunks: true}},
		{"directory", Query{Limit: 100, Dir: "dir07"}},
		{"file", Query{Limit: 100, Path: "dir07/file0007.go"}},
		{"agent", Query{Limit: 100, Agent: "agent-3"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := l.History(tc.q)
				if err != nil || len(p.Changes) != 100 {
					b.Fatal(len(p.Changes), err)
				}
			}
		})
	}
}

// BenchmarkAppend: one small change (a one-line edit), as the engine
// appends after each commit; with Fsync as with --fsync.
func BenchmarkAppend(b *testing.B) {
	for _, fsync := range []bool{false, true} {
		b.Run(fmt.Sprintf("fsync=%v", fsync), func(b *testing.B) {
			l := openLog(b, b.TempDir(), Options{Fsync: fsync})
			c := smallChange()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Append(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPrepare: one small change prepared, written to the file and
// resolved, as the engine records a change of its own.
func BenchmarkPrepare(b *testing.B) {
	l := openLog(b, b.TempDir(), Options{})
	c := smallChange()
	b.ReportAllocs()
	for b.Loop() {
		p, err := l.Prepare(c, true)
		if err == nil {
			err = l.Resolve(p.ID, true)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen: reopening a log of 100,000 small changes (reading every
// record back and building the index).
func BenchmarkOpen(b *testing.B) {
	l := historyFixture(b)
	dir := l.dir
	l.Close()
	for b.Loop() {
		l2, err := Open(dir, Options{})
		if err != nil || l2.Stats().Changes != 100_000 {
			b.Fatal(err)
		}
		l2.Close()
	}
}
