package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// withoutLines is c as History gives it without hunks.
func summary(c Change) Change {
	c.Files = append([]File(nil), c.Files...)
	for i := range c.Files {
		c.Files[i].Hunks = nil
	}
	return c
}

func TestAppendedChangesSurviveAReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := newClock()
	o := Options{Now: clk.Now, SegmentBytes: 8 << 10}
	l := openLog(t, dir, o)
	s := newSim(t, l, 9)
	for range 300 {
		s.randomChange([]string{"alice", "bob"})
	}
	rev := s.logged[10]
	inv := make([]File, len(rev.Files))
	for i, f := range rev.Files {
		inv[i] = f.Inverse()
	}
	revert, err := l.Append(Change{Kind: KindRevert, Agent: "alice", Reverts: rev.ID, Files: inv})
	if err != nil {
		t.Fatal(err)
	}
	s.logged = append(s.logged, revert)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(s.logged[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	l2 := openLog(t, dir, o)
	if st := l2.Stats(); st.Changes != len(s.logged) || st.Segments < 2 || st.TornBytes != 0 || st.Damaged != 0 {
		t.Fatalf("stats after reopen: %+v", st)
	}
	for _, c := range s.logged {
		got, err := l2.Get(c.ID.String())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("Get(%s) after reopen:\n got %+v\nwant %+v", c.ID, got, c)
		}
	}
	if got, _ := l2.Get(revert.ID.String()); got.Reverts != rev.ID {
		t.Errorf("the revert names %v, want %v", got.Reverts, rev.ID)
	}
	p, err := l2.History(Query{Limit: 1})
	if err != nil || len(p.Changes) != 1 || !reflect.DeepEqual(p.Changes[0], summary(revert)) {
		t.Fatalf("the newest change after reopen: %+v, %v", p, err)
	}
	// The next change continues the numbering, in the same log.
	c, err := l2.Append(Change{Kind: KindEdit, Agent: "bob", Files: []File{s.editFile("d0/f0.go")}})
	if err == nil && (c.ID.seq != revert.ID.seq+1 || c.ID.log != revert.ID.log) {
		t.Errorf("the change after reopen is %v, after %v", c.ID, revert.ID)
	}
}

func TestAppendRefusesChangesItCouldNotAnswerFor(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), Options{})
	ok := func() Change {
		return Change{Kind: KindEdit, Agent: "a", Files: []File{{Path: "a.go", Before: "v1", After: "v2",
			Hunks: []Hunk{{Hunk: hk(0, 1, 0, 1), Removed: []string{"x"}, Added: []string{"y"}}}}}}
	}
	first, err := l.Append(ok())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(c *Change){
		"no kind":                        func(c *Change) { c.Kind = 0 },
		"an unknown kind":                func(c *Change) { c.Kind = kindEnd },
		"no agent":                       func(c *Change) { c.Agent = "" },
		"a huge agent":                   func(c *Change) { c.Agent = strings.Repeat("a", 300) },
		"no files":                       func(c *Change) { c.Files = nil },
		"a path out of the root":         func(c *Change) { c.Files[0].Path = "../x" },
		"an absolute path":               func(c *Change) { c.Files[0].Path = "/etc/passwd" },
		"an unclean path":                func(c *Change) { c.Files[0].Path = "a//b" },
		"a move onto itself":             func(c *Change) { c.Files[0].From = "a.go" },
		"one file twice":                 func(c *Change) { c.Files = append(c.Files, c.Files[0]) },
		"a revert naming nothing":        func(c *Change) { c.Kind = KindRevert },
		"an edit naming a change":        func(c *Change) { c.Reverts = first.ID },
		"a revert of a later change":     func(c *Change) { c.Kind, c.Reverts = KindRevert, ID{seq: 99, log: first.ID.log} },
		"a revert of another log's":      func(c *Change) { c.Kind, c.Reverts = KindRevert, ID{seq: 1, log: first.ID.log + 1} },
		"a hunk out of order":            func(c *Change) { c.Files[0].Hunks[0].A1 = -1 },
		"a hunk that changes nothing":    func(c *Change) { c.Files[0].Hunks[0] = Hunk{Hunk: hk(1, 1, 1, 1)} },
		"a hunk with too few lines":      func(c *Change) { c.Files[0].Hunks[0].Added = nil },
		"hunks that disagree":            func(c *Change) { c.Files[0].Hunks[0].B0, c.Files[0].Hunks[0].B1 = 1, 2 },
		"hunks overlapping":              func(c *Change) { c.Files[0].Hunks = append(c.Files[0].Hunks, c.Files[0].Hunks[0]) },
		"a version longer than any hash": func(c *Change) { c.Files[0].After = strings.Repeat("v", 200) },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := ok()
			mutate(&c)
			if got, err := l.Append(c); err == nil {
				t.Errorf("appended as %v", got.ID)
			}
		})
	}
}

// A crash can tear the last record at any byte. Reopening cuts it off
// and keeps every record before it; the log then takes new records and
// reads back the same after another reopen.
func TestATornLastRecordIsCutAtEveryOffset(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	l := openLog(t, src, Options{})
	s := newSim(t, l, 5)
	for range 5 {
		s.randomChange([]string{"a"})
	}
	before := l.Stats().Bytes
	last := s.randomChange([]string{"a"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	seg := segFiles(t, src)[0]
	whole, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	for cut := before; cut < int64(len(whole)); cut++ {
		t.Run(fmt.Sprint(cut-before), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(seg)), whole[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			l := openLog(t, dir, Options{})
			if st := l.Stats(); st.TornBytes != cut-before || st.Next != last.ID.seq || st.Changes != 5 {
				t.Fatalf("stats: %+v, want %d torn bytes and change %d next", st, cut-before, last.ID.seq)
			}
			if fi, _ := os.Stat(filepath.Join(dir, filepath.Base(seg))); fi.Size() != before {
				t.Fatalf("the segment is %d bytes, want %d", fi.Size(), before)
			}
			if _, err := l.Get(last.ID.String()); !errors.Is(err, ErrUnknown) {
				t.Fatalf("Get of the torn change: %v", err)
			}
			if got, err := l.Get(s.logged[4].ID.String()); err != nil || !reflect.DeepEqual(got, s.logged[4]) {
				t.Fatalf("Get of the change before it: %v\n got %+v\nwant %+v", err, got, s.logged[4])
			}
			again, err := l.Append(Change{Kind: KindWrite, Agent: "b", Files: []File{{Path: "z", After: "v", Hunks: []Hunk{{Hunk: hk(0, 0, 0, 1), Added: []string{"z"}}}}}})
			if err != nil || again.ID.seq != last.ID.seq {
				t.Fatalf("append after the cut: %v, %v", again.ID, err)
			}
			l.Close()
			l2 := openLog(t, dir, Options{})
			if got, err := l2.Get(again.ID.String()); err != nil || got.Agent != "b" || l2.Stats().TornBytes != 0 {
				t.Fatalf("after a second reopen: %+v, %v, %+v", got, err, l2.Stats())
			}
		})
	}
	// Garbage after the last record (a file system that extended the file
	// without its data) is cut off too.
	t.Run("zeros", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, filepath.Base(seg)), append(whole[:before:before], make([]byte, 100)...), 0o600)
		l := openLog(t, dir, Options{})
		if st := l.Stats(); st.TornBytes != 100 || st.Next != last.ID.seq {
			t.Fatalf("stats: %+v", st)
		}
	})
}

// A crash while a new segment was being started leaves a file shorter
// than its header; it is removed and the segment before it goes on.
func TestATornSegmentHeaderIsRemoved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	c, err := l.Append(Change{Kind: KindWrite, Agent: "a", Files: []File{{Path: "a", After: "v", Hunks: []Hunk{{Hunk: hk(0, 0, 0, 1), Added: []string{"a"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	torn := filepath.Join(dir, segName(c.ID.seq+1))
	os.WriteFile(torn, []byte(segMagic[:5]), 0o600)
	l2 := openLog(t, dir, Options{})
	if _, err := os.Stat(torn); !os.IsNotExist(err) {
		t.Errorf("the torn segment is still there: %v", err)
	}
	if _, err := l2.Get(c.ID.String()); err != nil {
		t.Fatal(err)
	}
	if c2, err := l2.Append(Change{Kind: KindEdit, Agent: "a", Files: []File{{Path: "a", Before: "v", After: "w", Hunks: []Hunk{{Hunk: hk(0, 1, 0, 1), Removed: []string{"a"}, Added: []string{"b"}}}}}}); err != nil || c2.ID.seq != c.ID.seq+1 {
		t.Fatalf("append: %v %v", c2.ID, err)
	}
}

// Damage inside an older segment is not a torn tail: the segment is left
// as it is, the changes from the damage to its end are lost (expired to
// Get), and Blame does not attribute lines across them.
func TestDamageInAnOlderSegmentLosesOnlyItsRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := Options{SegmentBytes: 4 << 10}
	l := openLog(t, dir, o)
	s := newSim(t, l, 3)
	s.preexisting("a.go", 10)
	for range 60 {
		s.commit(KindEdit, "a", s.editFile("a.go"))
	}
	l.Close()
	segs := segFiles(t, dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	b, _ := os.ReadFile(segs[1])
	b[len(b)-5] ^= 0xff // in the segment's last record
	os.WriteFile(segs[1], b, 0o600)
	l2 := openLog(t, dir, o)
	st := l2.Stats()
	if st.Damaged != 1 || st.TornBytes != 0 || st.Next != uint64(len(s.logged)+1) || st.Changes != len(s.logged)-1 {
		t.Fatalf("stats: %+v", st)
	}
	if fi, _ := os.Stat(segs[1]); fi.Size() != int64(len(b)) {
		t.Error("the damaged segment was cut")
	}
	var lost Change
	for _, c := range s.logged {
		_, err := l2.Get(c.ID.String())
		if errors.Is(err, ErrExpired) {
			lost = c
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if lost.ID.IsZero() {
		t.Fatal("no change was lost")
	}
	spans, err := l2.Blame("a.go", len(s.files["a.go"]))
	if err != nil {
		t.Fatal(err)
	}
	for i, seq := range perLine(t, spans, len(s.files["a.go"])) {
		if want := s.owner["a.go"][i]; seq != 0 && seq != want || seq == 0 && want > lost.ID.seq {
			t.Fatalf("line %d: blamed on %d, written by %d; change %d was lost", i+1, seq, want, lost.ID.seq)
		}
	}
}

func TestTheLogStaysWithinItsByteBound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts Options
	}{
		{"small segments", Options{MaxBytes: 64 << 10, SegmentBytes: 4 << 10}},
		{"the default segment size", Options{MaxBytes: 128 << 10}},
		{"one segment's worth", Options{MaxBytes: 8 << 10, SegmentBytes: 8 << 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			l := openLog(t, dir, tc.opts)
			s := newSim(t, l, 11)
			for i := range 3000 {
				s.randomChange([]string{"a", "b"})
				if i%50 == 0 {
					if n := logBytes(t, l, dir); n > tc.opts.MaxBytes {
						t.Fatalf("after %d changes the log is %d bytes, over %d", i+1, n, tc.opts.MaxBytes)
					}
				}
			}
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			st := l.Stats()
			if st.First <= 1 || st.Bytes > tc.opts.MaxBytes || st.Bytes != dirBytes(t, dir) {
				t.Fatalf("stats %+v, %d bytes on disk", st, dirBytes(t, dir))
			}
			if _, err := l.Get(s.logged[0].ID.String()); !errors.Is(err, ErrExpired) {
				t.Errorf("Get of the first change: %v, want ErrExpired", err)
			}
			if _, err := l.Get(s.logged[len(s.logged)-1].ID.String()); err != nil {
				t.Errorf("Get of the last change: %v", err)
			}
			// The index holds no path only dropped changes touched.
			for p, seqs := range l.paths {
				if len(seqs) == 0 || seqs[0] < st.First {
					t.Fatalf("the index holds %s: %v, the log starts at %d", p, seqs, st.First)
				}
			}
			l.Close()
			if l2 := openLog(t, dir, tc.opts); l2.Stats().First != st.First || l2.Stats().Next != st.Next {
				t.Errorf("reopened: %+v, was %+v", l2.Stats(), st)
			}
		})
	}
}

// A million small changes keep the log within its bound (and the index
// to the changes the log holds).
func TestAMillionSmallChangesStayWithinTheBound(t *testing.T) {
	if testing.Short() {
		t.Skip("a million appends")
	}
	t.Parallel()
	dir := t.TempDir()
	const bound = 1 << 20
	l := openLog(t, dir, Options{MaxBytes: bound})
	c := smallChange()
	for i := range 1_000_000 {
		// As the engine records them: appended (a change found made
		// outside the server), or prepared and resolved, every so often
		// written at once, as a change of its own is.
		if i%4 == 0 {
			if _, err := l.Append(c); err != nil {
				t.Fatal(err)
			}
		} else {
			p, err := l.Prepare(c, i%64 == 1)
			if err == nil {
				err = l.Resolve(p.ID, i%5 != 0)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if i%100_000 == 0 {
			if n := logBytes(t, l, dir); n > bound {
				t.Fatalf("after %d changes the log is %d bytes", i+1, n)
			}
		}
	}
	st := l.Stats()
	if n := logBytes(t, l, dir); n > bound || st.Next != 1_000_001 || len(l.entries) != int(st.Next-st.First) {
		t.Fatalf("%d bytes on disk, stats %+v, %d entries", n, st, len(l.entries))
	}
	if cap(l.entries) > 4*len(l.entries)+1024 {
		t.Errorf("the index holds room for %d changes for %d", cap(l.entries), len(l.entries))
	}
}

func smallChange() Change {
	return Change{Kind: KindEdit, Agent: "agent-1", RequestID: "0195b2c4-7d1e-7aa0-9c1f-3b5e8f0a2d44", Files: []File{{
		Path: "internal/server/handler.go", Before: "v2-0123456789abcdef0123456789abcdef", After: "v2-fedcba9876543210fedcba9876543210",
		Hunks: []Hunk{{Hunk: hk(41, 42, 41, 42), Removed: []string{"\treturn nil, err"}, Added: []string{"\treturn nil, fmt.Errorf(\"handler: %w\", err)"}}},
	}}}
}

func TestChangesPastTheirAgeAreDropped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := newClock()
	o := Options{MaxAge: 24 * time.Hour, SegmentBytes: 4 << 10, Now: clk.Now}
	l := openLog(t, dir, o)
	var day1, day2 []Change
	for range 100 {
		c, err := l.Append(smallChange())
		if err != nil {
			t.Fatal(err)
		}
		day1 = append(day1, c)
	}
	clk.Advance(20 * time.Hour)
	for range 100 {
		c, err := l.Append(smallChange())
		if err != nil {
			t.Fatal(err)
		}
		day2 = append(day2, c)
	}
	clk.Advance(5 * time.Hour) // day 1 is past its age, day 2 is not
	p, err := l.History(Query{Limit: MaxLimit})
	if err != nil || len(p.Changes) != 100 || p.Changes[99].ID != day2[0].ID {
		t.Fatalf("History shows %d changes, want day 2's 100: %v", len(p.Changes), err)
	}
	if _, err := l.Get(day1[99].ID.String()); !errors.Is(err, ErrExpired) {
		t.Errorf("Get of a change past its age: %v", err)
	}
	// Every change rewrites line 42.
	if spans, err := l.Blame(day1[0].Files[0].Path, 50); err != nil || len(spans) != 3 || spans[1].ID != day2[99].ID || !spans[0].ID.IsZero() {
		t.Errorf("Blame: %+v, %v", spans, err)
	}
	if _, err := l.Get(day2[0].ID.String()); err != nil {
		t.Errorf("Get of a change within its age: %v", err)
	}
	segsBefore := len(segFiles(t, dir))
	if _, err := l.Append(smallChange()); err != nil { // trims
		t.Fatal(err)
	}
	if n := len(segFiles(t, dir)); n >= segsBefore || l.Stats().First > day2[0].ID.seq {
		t.Errorf("segments %d -> %d, first change %d: day 1's segments should go, day 2's stay", segsBefore, n, l.Stats().First)
	}
	// Reopened later, once day 2 too is past its age: nothing is shown,
	// and ids are expired, not unknown.
	l.Close()
	clk.Advance(48 * time.Hour)
	l2 := openLog(t, dir, o)
	if p, err := l2.History(Query{}); err != nil || len(p.Changes) != 0 {
		t.Errorf("History after two days: %d changes, %v", len(p.Changes), err)
	}
	if _, err := l2.Get(day2[99].ID.String()); !errors.Is(err, ErrExpired) {
		t.Errorf("Get: %v, want ErrExpired", err)
	}
	if spans, err := l2.Blame(day1[0].Files[0].Path, 50); err != nil || len(spans) != 1 || !spans[0].ID.IsZero() {
		t.Errorf("Blame once every change is past its age: %+v, %v", spans, err)
	}
}

func TestGetTellsMalformedUnknownAndExpiredIDsApart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, Options{MaxBytes: 16 << 10, SegmentBytes: 4 << 10})
	var all []Change
	for range 300 {
		c, err := l.Append(smallChange())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, c)
	}
	other := openLog(t, t.TempDir(), Options{})
	foreign, _ := other.Append(smallChange())
	last := all[len(all)-1].ID
	cases := []struct {
		id   string
		want error
	}{
		{"", ErrMalformed},
		{"c12", ErrMalformed},
		{"12-" + strings.Split(last.String(), "-")[1], ErrMalformed},
		{all[0].ID.String(), ErrExpired},
		{ID{seq: last.seq + 1, log: last.log}.String(), ErrUnknown},
		{ID{seq: 1 << 40, log: last.log}.String(), ErrUnknown},
		{foreign.ID.String(), ErrUnknown},
		{last.String(), nil},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			t.Parallel()
			_, err := l.Get(tc.id)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Get(%q) = %v, want %v", tc.id, err, tc.want)
			}
			for _, other := range []error{ErrMalformed, ErrUnknown, ErrExpired} {
				if other != tc.want && errors.Is(err, other) {
					t.Fatalf("Get(%q) = %v, also %v", tc.id, err, other)
				}
			}
		})
	}
}

func TestAChangeTooLargeForASegmentIsKeptWithoutItsLines(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), Options{SegmentBytes: 4 << 10})
	s := newSim(t, l, 1)
	big := s.commit(KindWrite, "a", s.writeFile("big.go", 3000))
	if !big.LinesOmitted || big.HunksMerged || big.Files[0].Added != 3000 || big.Files[0].Hunks[0].Added != nil {
		t.Fatalf("a 500-line write: %+v", big)
	}
	// 1500 one-line hunks are too many even without lines: merged.
	old := s.files["big.go"]
	var hunks []Hunk
	for i := 0; i < len(old); i += 2 {
		hunks = append(hunks, Hunk{Hunk: hk(i, i+1, i, i+1), Removed: []string{old[i]}, Added: []string{old[i] + " changed"}})
	}
	c, err := l.Append(Change{Kind: KindEdit, Agent: "b", Files: []File{{Path: "big.go", Before: version(old), After: "v2-changed", Hunks: hunks}}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.HunksMerged || len(c.Files[0].Hunks) != 1 || c.Files[0].Hunks[0].Hunk != hk(0, 2999, 0, 2999) {
		t.Fatalf("merged: %d hunks, the first %+v", len(c.Files[0].Hunks), c.Files[0].Hunks[0])
	}
	got, err := l.Get(c.ID.String())
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("Get: %+v, %v", got, err)
	}
	// The merged hunk takes the unchanged lines between as rewritten.
	spans, err := l.Blame("big.go", 3000)
	if err != nil || len(spans) != 2 || spans[0].ID != c.ID || spans[0].End != 2999 || spans[1].ID != big.ID {
		t.Fatalf("blame: %+v, %v", spans, err)
	}
	var files []File
	for i := range 400 {
		files = append(files, File{Path: fmt.Sprintf("a/rather/long/directory/name/file%04d.go", i), Before: "v2-0123456789abcdef0123456789abcdef"})
	}
	if _, err := l.Append(Change{Kind: KindDelete, Agent: "c", Files: files}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a change of 400 files in a 4 KiB segment: %v", err)
	}
}

func TestConcurrentAppendsAndQueries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, Options{MaxBytes: 256 << 10, SegmentBytes: 8 << 10, Fsync: true})
	const writers, each = 4, 150
	var wg sync.WaitGroup
	ids := make(chan ID, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				c := smallChange()
				c.Agent = fmt.Sprintf("agent-%d", w)
				c.Files[0].Path = fmt.Sprintf("d%d/f%d.go", w, i%5)
				got, err := l.Append(c)
				if err != nil {
					t.Error(err)
					return
				}
				ids <- got.ID
			}
		})
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 3 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch r {
				case 0:
					_, err = l.History(Query{Limit: 20, Hunks: true})
				case 1:
					_, err = l.History(Query{Dir: "d1", Agent: "agent-1"})
				case 2:
					_, err = l.Blame("d2/f1.go", 60)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(ids)
	seen := map[ID]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %v given twice", id)
		}
		seen[id] = true
	}
	if st := l.Stats(); st.Next != writers*each+1 {
		t.Fatalf("stats %+v", st)
	}
	var pages int
	var got []Change
	for tok := ""; ; pages++ {
		p, err := l.History(Query{Limit: 100, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Changes...)
		if tok = p.NextPageToken; tok == "" {
			break
		}
	}
	for i := 1; i < len(got); i++ {
		if got[i].ID.seq != got[i-1].ID.seq-1 || got[i].Time.After(got[i-1].Time) {
			t.Fatalf("History out of order at %d: %v after %v", i, got[i].ID, got[i-1].ID)
		}
	}
}

// Without Fsync a change waits in memory a moment: queries find it there,
// and it reaches the file on its own, without a Sync.
func TestAnUnsyncedChangeIsReadFromMemoryAndWrittenSoon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, Options{})
	onDisk := dirBytes(t, dir)
	c, err := l.Append(smallChange())
	if err != nil {
		t.Fatal(err)
	}
	l.mu.RLock()
	pending := len(l.wbuf)
	l.mu.RUnlock()
	if got, err := l.Get(c.ID.String()); err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("Get while the record may be in memory (%d bytes waiting): %v", pending, err)
	}
	if spans, err := l.Blame(c.Files[0].Path, 50); err != nil || spans[1].ID != c.ID {
		t.Fatalf("Blame: %+v, %v", spans, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for dirBytes(t, dir) != l.Stats().Bytes {
		if time.Now().After(deadline) {
			t.Fatalf("the record is not in the file after 10s: %d bytes, was %d, %d in the log", dirBytes(t, dir), onDisk, l.Stats().Bytes)
		}
		time.Sleep(time.Millisecond)
	}
}
