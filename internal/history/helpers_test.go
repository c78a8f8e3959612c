package history

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

func hk(a0, a1, b0, b1 int) versions.Hunk { return versions.Hunk{A0: a0, A1: a1, B0: b0, B1: b1} }

// clock is a settable clock for Options.Now; every reading moves it on by
// a millisecond, so that changes have distinct times.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Add(int64(time.Millisecond))).UTC() }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func openLog(t testing.TB, dir string, o Options) *Log {
	t.Helper()
	l, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// logBytes is the size of l's files in dir, read under l's lock: the
// timer's flush may otherwise drop the oldest segment and append to the
// newest between two of dirBytes's stats, counting the one before and the
// other after, more than was ever on disk at once.
func logBytes(t testing.TB, l *Log, dir string) int64 {
	t.Helper()
	l.mu.RLock()
	defer l.mu.RUnlock()
	return dirBytes(t, dir)
}

// dirBytes is the size of the files in dir.
func dirBytes(t testing.TB, dir string) int64 {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, de := range des {
		fi, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		n += fi.Size()
	}
	return n
}

func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, segPrefix+"*"+segSuffix))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

func version(lines []string) string {
	h1, h2 := fnv.New64a(), fnv.New64()
	for _, s := range lines {
		h1.Write([]byte(s + "\n"))
		h2.Write([]byte(s + "\n"))
	}
	return fmt.Sprintf("v2-%016x%016x", h1.Sum64(), h2.Sum64())
}

func doc(lines []string) *hashline.Document {
	if len(lines) == 0 {
		return hashline.ParseText("")
	}
	return hashline.ParseText(strings.Join(lines, "\n") + "\n")
}

// sim is a workspace whose changes are logged, and the brute-force
// answer to Blame: per file, per line, the sequence number of the change
// that last wrote it (0: a line of the files the workspace had before the
// log), kept by replaying every change's hunks forward.
type sim struct {
	t      testing.TB
	l      *Log
	rng    *rand.Rand
	files  map[string][]string
	owner  map[string][]uint64
	logged []Change
	n      int
}

func newSim(t testing.TB, l *Log, seed uint64) *sim {
	s := &sim{t: t, l: l, rng: rand.New(rand.NewPCG(seed, 7)), files: map[string][]string{}, owner: map[string][]uint64{}}
	return s
}

// preexisting puts a file in the workspace without logging it.
func (s *sim) preexisting(p string, n int) {
	s.files[p] = s.lines(n)
	s.owner[p] = make([]uint64, n)
}

func (s *sim) lines(n int) []string {
	out := make([]string, n)
	for i := range out {
		s.n++
		out[i] = fmt.Sprintf("line %d of a generated file", s.n)
	}
	return out
}

// edited returns lines with a few random insertions, deletions and
// replacements.
func (s *sim) edited(lines []string) []string {
	out := slices.Clone(lines)
	for range 1 + s.rng.IntN(3) {
		at := s.rng.IntN(len(out) + 1)
		switch s.rng.IntN(3) {
		case 0:
			out = slices.Insert(out, at, s.lines(1+s.rng.IntN(3))...)
		case 1:
			if at < len(out) {
				out = slices.Delete(out, at, min(len(out), at+1+s.rng.IntN(3)))
			}
		case 2:
			if at < len(out) {
				end := min(len(out), at+1+s.rng.IntN(3))
				out = slices.Replace(out, at, end, s.lines(1+s.rng.IntN(3))...)
			}
		}
	}
	if slices.Equal(out, lines) {
		out = append(out, s.lines(1)...)
	}
	return out
}

// fileChange describes one file of a change to make.
func (s *sim) editFile(p string) File {
	old := s.files[p]
	nw := s.edited(old)
	return File{Path: p, Before: version(old), After: version(nw), Hunks: HunksOf(doc(old), doc(nw))}
}

func (s *sim) writeFile(p string, n int) File {
	old, had := s.files[p]
	nw := s.lines(n)
	f := File{Path: p, After: version(nw), Hunks: HunksOf(doc(old), doc(nw))}
	if had {
		f.Before = version(old)
	}
	return f
}

func (s *sim) moveFile(from, to string) File {
	return File{Path: to, From: from, Before: version(s.files[from]), After: version(s.files[from])}
}

func (s *sim) deleteFile(p string) File {
	return File{Path: p, Before: version(s.files[p]), Hunks: HunksOf(doc(s.files[p]), nil)}
}

// commit logs a change and replays it on the workspace.
func (s *sim) commit(kind Kind, agent string, files ...File) Change {
	s.t.Helper()
	c, err := s.l.Append(Change{Kind: kind, Agent: agent, RequestID: fmt.Sprintf("req-%d", len(s.logged)), Files: files})
	if err != nil {
		s.t.Fatal(err)
	}
	s.replay(Change{ID: c.ID, Files: files}) // with the lines, whatever the log kept
	s.logged = append(s.logged, c)
	return c
}

func (s *sim) replay(c Change) {
	// Moves take their sources first, as the engine does a set's steps
	// all at once.
	type src struct {
		lines []string
		owner []uint64
	}
	srcs := map[string]src{}
	for _, f := range c.Files {
		if f.From != "" {
			srcs[f.From] = src{s.files[f.From], s.owner[f.From]}
			delete(s.files, f.From)
			delete(s.owner, f.From)
		}
	}
	for _, f := range c.Files {
		lines, owner := s.files[f.Path], s.owner[f.Path]
		if f.From != "" {
			lines, owner = srcs[f.From].lines, srcs[f.From].owner
		}
		if f.Before == "" && f.From == "" {
			lines, owner = nil, nil
		}
		if f.After == "" {
			delete(s.files, f.Path)
			delete(s.owner, f.Path)
			continue
		}
		var nl []string
		var no []uint64
		prev := 0
		for _, h := range f.Hunks {
			if !slices.Equal(lines[h.A0:h.A1], h.Removed) {
				s.t.Fatalf("the generator's hunk %+v does not remove %q", h, lines[h.A0:h.A1])
			}
			nl = append(append(nl, lines[prev:h.A0]...), h.Added...)
			no = append(no, owner[prev:h.A0]...)
			for range h.B1 - h.B0 {
				no = append(no, c.ID.seq)
			}
			prev = h.A1
		}
		s.files[f.Path] = append(nl, lines[prev:]...)
		s.owner[f.Path] = append(no, owner[prev:]...)
	}
}

// randomChange makes one random change to the workspace.
func (s *sim) randomChange(agents []string) Change {
	paths := make([]string, 0, len(s.files))
	for p := range s.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	agent := agents[s.rng.IntN(len(agents))]
	newPath := func() string {
		for {
			p := fmt.Sprintf("d%d/f%d.go", s.rng.IntN(3), s.rng.IntN(12))
			if _, ok := s.files[p]; !ok {
				return p
			}
		}
	}
	r := s.rng.IntN(20)
	switch {
	case len(paths) < 3 || r == 0:
		return s.commit(KindWrite, agent, s.writeFile(newPath(), 1+s.rng.IntN(30)))
	case r == 1:
		return s.commit(KindDelete, agent, s.deleteFile(paths[s.rng.IntN(len(paths))]))
	case r <= 3:
		return s.commit(KindMove, agent, s.moveFile(paths[s.rng.IntN(len(paths))], newPath()))
	case r == 4:
		return s.commit(KindWrite, agent, s.writeFile(paths[s.rng.IntN(len(paths))], 1+s.rng.IntN(30)))
	case r == 5:
		return s.commit(KindExternal, External, s.editFile(paths[s.rng.IntN(len(paths))]))
	case r == 6:
		// A set: edits to two files and a move of a third, edited too.
		i := s.rng.Perm(len(paths))
		mv := s.editFile(paths[i[2]])
		mv.From, mv.Path = mv.Path, newPath()
		return s.commit(KindSet, agent, s.editFile(paths[i[0]]), s.editFile(paths[i[1]]), mv)
	}
	return s.commit(KindEdit, agent, s.editFile(paths[s.rng.IntN(len(paths))]))
}

// wantBlame is the brute-force blame of p: per line, the change that last
// wrote it, 0 for one older than the oldest change from on.
func (s *sim) wantBlame(p string, from uint64) []uint64 {
	out := slices.Clone(s.owner[p])
	for i, o := range out {
		if o < from {
			out[i] = 0
		}
	}
	return out
}

// perLine expands spans to one sequence number per line.
func perLine(t testing.TB, spans []BlameSpan, n int) []uint64 {
	t.Helper()
	var out []uint64
	for i, sp := range spans {
		if sp.Start != len(out)+1 || sp.End < sp.Start {
			t.Fatalf("span %d is %d..%d after %d lines", i, sp.Start, sp.End, len(out))
		}
		for range sp.End - sp.Start + 1 {
			out = append(out, sp.ID.seq)
		}
	}
	if len(out) != n {
		t.Fatalf("spans cover %d lines of %d", len(out), n)
	}
	return out
}
