package history

import (
	"slices"
	"testing"
	"time"
)

// Blame walks hunks backwards; the test replays them forwards, line by
// line, and the two must agree on every line of every file, after any mix
// of edits, writes, moves, deletions, sets and external changes, with
// and without the older changes dropped by the byte bound, and after a
// reopen.
func TestBlameMatchesAForwardReplay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		seed    uint64
		changes int
		opts    Options
	}{
		{"the whole history", 1, 400, Options{}},
		{"another workspace", 2, 400, Options{}},
		{"older changes dropped by the byte bound", 3, 1500, Options{MaxBytes: 64 << 10, SegmentBytes: 4 << 10}},
		{"older changes dropped, another workspace", 4, 1500, Options{MaxBytes: 32 << 10, SegmentBytes: 4 << 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			l := openLog(t, dir, tc.opts)
			s := newSim(t, l, tc.seed)
			s.preexisting("d0/old.go", 40)
			s.preexisting("d1/old.go", 25)
			agents := []string{"alice", "bob", "carol"}
			check := func(l *Log, when string) {
				from := l.Stats().First
				for p := range s.files {
					spans, err := l.Blame(p, len(s.files[p]))
					if err != nil {
						t.Fatal(err)
					}
					got, want := perLine(t, spans, len(s.files[p])), s.wantBlame(p, from)
					if !slices.Equal(got, want) {
						t.Fatalf("%s: blame of %s:\n got %v\nwant %v", when, p, got, want)
					}
					for _, sp := range spans {
						if sp.ID.IsZero() {
							continue
						}
						c := s.logged[sp.ID.seq-1]
						if sp.Agent != c.Agent || !sp.Time.Equal(c.Time) || sp.ID != c.ID {
							t.Fatalf("%s: span %+v, change %+v", when, sp, c)
						}
					}
				}
			}
			for i := range tc.changes {
				s.randomChange(agents)
				if i%97 == 0 {
					check(l, "while appending")
				}
			}
			check(l, "at the end")
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l2 := openLog(t, dir, tc.opts)
			check(l2, "after a reopen")
		})
	}
}

func TestBlameCases(t *testing.T) {
	t.Parallel()
	type step struct {
		kind  Kind
		agent string
		file  func(s *sim) File
	}
	edit := func(p string, at, del int, add ...string) func(s *sim) File {
		return func(s *sim) File {
			old := s.files[p]
			nw := slices.Replace(slices.Clone(old), at, at+del, add...)
			return File{Path: p, Before: version(old), After: version(nw), Hunks: HunksOf(doc(old), doc(nw))}
		}
	}
	create := func(p string, lines ...string) func(s *sim) File {
		return func(s *sim) File {
			return File{Path: p, After: version(lines), Hunks: HunksOf(nil, doc(lines))}
		}
	}
	mv := func(from, to string) func(s *sim) File { return func(s *sim) File { return s.moveFile(from, to) } }
	del := func(p string) func(s *sim) File { return func(s *sim) File { return s.deleteFile(p) } }
	cases := []struct {
		name  string
		pre   int // lines a.go had before the history
		steps []step
		path  string
		// want per line: the step (1-based) that wrote it, 0 for older
		want []uint64
	}{
		{"lines older than the history", 3, nil, "a.go", []uint64{0, 0, 0}},
		{"an insertion", 3, []step{{KindEdit, "x", edit("a.go", 1, 0, "new")}}, "a.go", []uint64{0, 1, 0, 0}},
		{"a deletion leaves the lines around it as they were", 4, []step{{KindEdit, "x", edit("a.go", 1, 2)}}, "a.go", []uint64{0, 0}},
		{"a replacement", 3, []step{{KindEdit, "x", edit("a.go", 1, 1, "b1", "b2")}}, "a.go", []uint64{0, 1, 1, 0}},
		{"a later change over an earlier one", 3, []step{
			{KindEdit, "x", edit("a.go", 0, 0, "p1", "p2", "p3")},
			{KindEdit, "y", edit("a.go", 1, 1, "q")},
			{KindEdit, "z", edit("a.go", 5, 1)},
		}, "a.go", []uint64{1, 2, 1, 0, 0}},
		{"a created file", 0, []step{{KindWrite, "x", create("n.go", "1", "2")}, {KindEdit, "y", edit("n.go", 2, 0, "3")}}, "n.go", []uint64{1, 1, 2}},
		{"a moved file keeps its lines' changes", 3, []step{
			{KindEdit, "x", edit("a.go", 0, 1, "first")},
			{KindMove, "y", mv("a.go", "b.go")},
			{KindEdit, "z", edit("b.go", 3, 0, "last")},
		}, "b.go", []uint64{1, 0, 0, 3}},
		{"a file created where another was moved from starts afresh", 3, []step{
			{KindEdit, "x", edit("a.go", 0, 1, "first")},
			{KindMove, "y", mv("a.go", "b.go")},
			{KindWrite, "z", create("a.go", "other")},
		}, "a.go", []uint64{3}},
		{"a file deleted and created again starts afresh", 3, []step{
			{KindDelete, "x", del("a.go")},
			{KindWrite, "z", create("a.go", "again", "and again")},
		}, "a.go", []uint64{2, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := openLog(t, t.TempDir(), Options{})
			s := newSim(t, l, 1)
			s.preexisting("a.go", tc.pre)
			for _, st := range tc.steps {
				s.commit(st.kind, st.agent, st.file(s))
			}
			spans, err := l.Blame(tc.path, len(s.files[tc.path]))
			if err != nil {
				t.Fatal(err)
			}
			if got := perLine(t, spans, len(s.files[tc.path])); !slices.Equal(got, tc.want) {
				t.Errorf("blame = %v, want %v (spans %+v)", got, tc.want, spans)
			}
			if got := s.wantBlame(tc.path, 1); !slices.Equal(got, tc.want) {
				t.Errorf("the forward replay = %v, want %v", got, tc.want)
			}
		})
	}
}

// A change that rewrote a file without hunks (an external change whose
// earlier content the engine no longer held) says the file changed, not
// which lines: blame attributes none of the lines left to it or to the
// changes before it.
func TestBlameStopsAtAChangeWithoutHunks(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), Options{})
	old := []string{"a", "b", "c"}
	mid := []string{"a", "B", "c"}
	nw := []string{"a", "B", "c", "d"}
	if _, err := l.Append(Change{Kind: KindEdit, Agent: "x", Files: []File{{Path: "f", Before: version(old), After: version(mid), Hunks: HunksOf(doc(old), doc(mid))}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(Change{Kind: KindExternal, Agent: External, Files: []File{{Path: "f", Before: version(mid), After: version(nw)}}}); err != nil {
		t.Fatal(err)
	}
	spans, err := l.Blame("f", len(nw))
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 1 || !spans[0].ID.IsZero() || spans[0].Start != 1 || spans[0].End != 4 {
		t.Fatalf("blame = %+v, want lines 1-4 older than the history", spans)
	}
	// A later edit with hunks is still attributed above it.
	last := []string{"a", "B", "c", "d", "e"}
	c, err := l.Append(Change{Kind: KindEdit, Agent: "y", Files: []File{{Path: "f", Before: version(nw), After: version(last), Hunks: HunksOf(doc(nw), doc(last))}}})
	if err != nil {
		t.Fatal(err)
	}
	spans, err = l.Blame("f", len(last))
	if err != nil {
		t.Fatal(err)
	}
	if got := perLine(t, spans, len(last)); !slices.Equal(got, []uint64{0, 0, 0, 0, c.ID.seq}) {
		t.Fatalf("blame = %v", got)
	}
}

func TestHorizon(t *testing.T) {
	t.Parallel()
	clk := newClock()
	l := openLog(t, t.TempDir(), Options{MaxAge: time.Hour, Now: clk.Now})
	if h := l.Horizon(); h != 1 {
		t.Fatalf("empty log: horizon %d, want 1", h)
	}
	for range 3 {
		if _, err := l.Append(Change{Kind: KindWrite, Agent: "x", Files: []File{{Path: "f", After: "v2-0"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if h := l.Horizon(); h != 1 {
		t.Fatalf("nothing dropped: horizon %d, want 1", h)
	}
	clk.Advance(2 * time.Hour)
	if _, err := l.Append(Change{Kind: KindWrite, Agent: "x", Files: []File{{Path: "f", After: "v2-1"}}}); err != nil {
		t.Fatal(err)
	}
	if h := l.Horizon(); h != 4 {
		t.Fatalf("three changes aged out: horizon %d, want 4", h)
	}
}
