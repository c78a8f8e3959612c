package history

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// allPages runs q page by page and returns every change.
func allPages(t *testing.T, l *Log, q Query) []Change {
	t.Helper()
	var out []Change
	for pages := 0; ; pages++ {
		p, err := l.History(q)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Changes) > max(q.Limit, 0) && q.Limit > 0 {
			t.Fatalf("a page of %d changes for limit %d", len(p.Changes), q.Limit)
		}
		out = append(out, p.Changes...)
		if p.NextPageToken == "" {
			return out
		}
		if len(p.Changes) == 0 || pages > 10_000 {
			t.Fatal("a page with nothing in it and a token")
		}
		q.PageToken = p.NextPageToken
	}
}

func ids(cs []Change) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.ID.seq
	}
	return out
}

// lineage is the brute-force history of the file now at p: walking the
// logged changes back, those that touched p, and at the change that moved
// the file to p, on with the path it came from.
func lineage(logged []Change, p string) []uint64 {
	var out []uint64
	for i := len(logged) - 1; i >= 0; i-- {
		for _, f := range logged[i].Files {
			if f.Path == p || f.From != "" && f.From == p {
				out = append(out, logged[i].ID.seq)
				if f.Path == p && f.From != "" {
					p = f.From
				}
				break
			}
		}
	}
	return out
}

func TestHistoryPagesShowEveryChangeOnceNewestFirst(t *testing.T) {
	t.Parallel()
	clk := newClock()
	l := openLog(t, t.TempDir(), Options{Now: clk.Now})
	s := newSim(t, l, 21)
	agents := []string{"alice", "bob", "carol"}
	for range 400 {
		s.randomChange(agents)
	}
	logged := s.logged
	mid := logged[len(logged)/2].Time
	late := logged[len(logged)*3/4].Time
	touched := func(c Change, dir string) bool {
		return slices.ContainsFunc(c.Files, func(f File) bool {
			return strings.HasPrefix(f.Path, dir+"/") || strings.HasPrefix(f.From, dir+"/")
		})
	}
	// The file with the longest history of those moved at least once.
	somePath, most := "", 0
	for p := range s.files {
		l := lineage(logged, p)
		moved := slices.ContainsFunc(l, func(seq uint64) bool {
			return slices.ContainsFunc(logged[seq-1].Files, func(f File) bool { return f.From != "" })
		})
		if n := len(l); moved && n > most {
			somePath, most = p, n
		}
	}
	cases := []struct {
		name string
		q    Query
		want func(c Change) bool // for workspace and directory queries
		file []uint64            // for a file's
	}{
		{name: "the workspace", q: Query{}, want: func(Change) bool { return true }},
		{name: "one agent", q: Query{Agent: "bob"}, want: func(c Change) bool { return c.Agent == "bob" }},
		{name: "external changes", q: Query{Agent: External}, want: func(c Change) bool { return c.Agent == External }},
		{name: "an agent never seen", q: Query{Agent: "zed"}, want: func(Change) bool { return false }},
		{name: "since", q: Query{Since: mid}, want: func(c Change) bool { return !c.Time.Before(mid) }},
		{name: "until", q: Query{Until: mid}, want: func(c Change) bool { return c.Time.Before(mid) }},
		{name: "a time range and an agent", q: Query{Since: mid, Until: late, Agent: "alice"}, want: func(c Change) bool {
			return !c.Time.Before(mid) && c.Time.Before(late) && c.Agent == "alice"
		}},
		{name: "a directory", q: Query{Dir: "d1"}, want: func(c Change) bool { return touched(c, "d1") }},
		{name: "a directory and an agent", q: Query{Dir: "d2", Agent: "carol"}, want: func(c Change) bool { return touched(c, "d2") && c.Agent == "carol" }},
		{name: "a directory that has none", q: Query{Dir: "d"}, want: func(Change) bool { return false }},
		{name: "a file, through its moves", q: Query{Path: somePath}, file: lineage(logged, somePath)},
	}
	for _, tc := range cases {
		for _, limit := range []int{1, 3, 7, 0, MaxLimit} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				q := tc.q
				q.Limit = limit
				got := allPages(t, l, q)
				want := tc.file
				if tc.want != nil {
					want = nil
					for i := len(logged) - 1; i >= 0; i-- {
						if tc.want(logged[i]) {
							want = append(want, logged[i].ID.seq)
						}
					}
				}
				if !slices.Equal(ids(got), want) {
					t.Fatalf("limit %d:\n got %v\nwant %v", limit, ids(got), want)
				}
				for _, c := range got {
					if w := summary(logged[c.ID.seq-1]); !reflect.DeepEqual(c, w) {
						t.Fatalf("change %v:\n got %+v\nwant %+v", c.ID, c, w)
					}
				}
			})
		}
	}
	if len(lineage(logged, somePath)) < 5 {
		t.Errorf("the file query walks only %d changes", len(lineage(logged, somePath)))
	}
}

func TestHistoryFollowsAFileThroughItsMoves(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), Options{})
	s := newSim(t, l, 2)
	s.preexisting("a.go", 5)
	s.preexisting("b.go", 5)
	e1 := s.commit(KindEdit, "x", s.editFile("a.go"))
	eb := s.commit(KindEdit, "x", s.editFile("b.go"))
	s.commit(KindDelete, "x", s.deleteFile("b.go"))
	mv := s.commit(KindMove, "y", s.moveFile("a.go", "b.go"))
	e2 := s.commit(KindEdit, "z", s.editFile("b.go"))
	created := s.commit(KindWrite, "w", s.writeFile("a.go", 3))
	got := func(p string) []uint64 {
		return ids(allPages(t, l, Query{Path: p, Limit: 1}))
	}
	// b.go now is the file a.go was: not the b.go deleted before.
	if g, w := got("b.go"), []uint64{e2.ID.seq, mv.ID.seq, e1.ID.seq}; !slices.Equal(g, w) {
		t.Errorf("b.go: %v, want %v", g, w)
	}
	// a.go's path saw the file created there, the move away and the edit
	// before.
	if g, w := got("a.go"), []uint64{created.ID.seq, mv.ID.seq, e1.ID.seq}; !slices.Equal(g, w) {
		t.Errorf("a.go: %v, want %v", g, w)
	}
	if g := ids(allPages(t, l, Query{Dir: "x"})); len(g) != 0 {
		t.Errorf("a directory of nothing: %v", g)
	}
	_ = eb
}

func TestHistoryGivesHunksOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), Options{})
	s := newSim(t, l, 3)
	s.preexisting("a.go", 10)
	c := s.commit(KindEdit, "x", s.editFile("a.go"))
	p, err := l.History(Query{Path: "a.go", Hunks: true})
	if err != nil || len(p.Changes) != 1 || !reflect.DeepEqual(p.Changes[0], c) {
		t.Fatalf("with hunks: %+v, %v", p, err)
	}
	p, err = l.History(Query{Path: "a.go"})
	if err != nil || p.Changes[0].Files[0].Hunks != nil || p.Changes[0].Files[0].Added != c.Files[0].Added || p.Changes[0].Files[0].Removed != c.Files[0].Removed {
		t.Fatalf("without: %+v, %v", p, err)
	}
}

func TestHistoryRefusesAPageTokenOfAnotherQuery(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), Options{})
	for range 5 {
		if _, err := l.Append(smallChange()); err != nil {
			t.Fatal(err)
		}
	}
	p, err := l.History(Query{Limit: 2, Agent: "agent-1"})
	if err != nil || p.NextPageToken == "" {
		t.Fatal(p, err)
	}
	other := openLog(t, t.TempDir(), Options{})
	other.Append(smallChange())
	cases := []struct {
		name string
		l    *Log
		q    Query
	}{
		{"another agent", l, Query{Limit: 2, Agent: "agent-2"}},
		{"a time range", l, Query{Limit: 2, Agent: "agent-1", Since: time.Unix(1, 0)}},
		{"a directory", l, Query{Limit: 2, Agent: "agent-1", Dir: "internal"}},
		{"garbage", l, Query{Limit: 2, Agent: "agent-1", PageToken: "!!"}},
		{"another log", other, Query{Limit: 2, Agent: "agent-1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := tc.q
			if q.PageToken == "" {
				q.PageToken = p.NextPageToken
			}
			if _, err := tc.l.History(q); !errors.Is(err, ErrBadPageToken) {
				t.Errorf("History = %v, want ErrBadPageToken", err)
			}
		})
	}
	// Another limit is the same query.
	if p2, err := l.History(Query{Limit: 10, Agent: "agent-1", PageToken: p.NextPageToken}); err != nil || len(p2.Changes) != 3 {
		t.Errorf("the next page with another limit: %d changes, %v", len(p2.Changes), err)
	}
	bad := []Query{{Path: "a", Dir: "b"}, {Path: "../a"}, {Dir: "/abs"}, {Limit: -1}}
	for _, q := range bad {
		if _, err := l.History(q); err == nil {
			t.Errorf("History(%+v) was answered", q)
		}
	}
}

// TestSinceListsEveryLaterChangeOfAPath: Since gives, oldest first and
// with their lines, exactly the changes after the one named that touched
// the path, as a file's path or the path it moved from (checked against a
// walk of every change logged), and refuses ids the log cannot name.
func TestSinceListsEveryLaterChangeOfAPath(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), Options{})
	s := newSim(t, l, 11)
	s.preexisting("a.go", 8)
	s.preexisting("b.go", 8)
	for range 300 {
		s.randomChange([]string{"x", "y"})
	}
	paths := map[string]bool{}
	for _, c := range s.logged {
		for _, f := range c.Files {
			paths[f.Path] = true
			if f.From != "" {
				paths[f.From] = true
			}
		}
	}
	for i := 0; i < len(s.logged); i += 7 {
		after := s.logged[i]
		for p := range paths {
			var want []uint64
			for _, c := range s.logged[i+1:] {
				if slices.ContainsFunc(c.Files, func(f File) bool { return f.Path == p || f.From == p }) {
					want = append(want, c.ID.seq)
				}
			}
			got, complete, err := l.Since(after.ID, p)
			if err != nil || !complete {
				t.Fatalf("Since(%s, %s): complete %v, %v", after.ID, p, complete, err)
			}
			if !slices.Equal(ids(got), want) {
				t.Fatalf("Since(%s, %s) = %v, want %v", after.ID, p, ids(got), want)
			}
			for _, c := range got {
				for _, f := range c.Files {
					for _, h := range f.Hunks {
						if !c.LinesOmitted && (len(h.Removed) != h.A1-h.A0 || len(h.Added) != h.B1-h.B0) {
							t.Fatalf("change %s of %s came without its lines: %+v", c.ID, f.Path, h)
						}
					}
				}
			}
		}
	}
	last := s.logged[len(s.logged)-1]
	if got, _, err := l.Since(last.ID, "a.go"); err != nil || len(got) != 0 {
		t.Errorf("Since the newest change: %v, %v", ids(got), err)
	}
	for _, id := range []ID{{seq: last.ID.seq + 1, log: last.ID.log}, {seq: 1, log: last.ID.log + 1}} {
		if _, _, err := l.Since(id, "a.go"); !errors.Is(err, ErrUnknown) {
			t.Errorf("Since(%s) = %v, want ErrUnknown", id, err)
		}
	}
}
