package versions_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/versions"
)

func see(v *versions.Views, agent, file, version string, lines versions.Lines) {
	v.See(agent, file, versions.Seen{Version: version, Lines: lines})
}

func versionsOf(h []versions.Seen) []string {
	var out []string
	for _, s := range h {
		out = append(out, s.Version)
	}
	return out
}

func TestViewsRememberTheLastVersionsPerAgentAndFile(t *testing.T) {
	v := versions.NewViews(2, 0)
	see(v, "a", "f", "v1", versions.Range(1, 10))
	see(v, "a", "f", "v2", versions.Range(3, 5))
	see(v, "b", "f", "v1", nil)
	if got, ok := v.Seen("a", "f"); !ok || got != "v2" {
		t.Errorf("a saw %q %v, want v2", got, ok)
	}
	h := v.History("a", "f")
	if got := versionsOf(h); !slices.Equal(got, []string{"v2", "v1"}) {
		t.Fatalf("a's history = %v, want v2 then v1", got)
	}
	if !slices.Equal(h[0].Lines, versions.Range(3, 5)) || !slices.Equal(h[1].Lines, versions.Range(1, 10)) {
		t.Errorf("lines = %v and %v", h[0].Lines, h[1].Lines)
	}
	see(v, "a", "g", "v9", nil) // evicts (b, f), the least recently used pair
	if _, ok := v.Seen("b", "f"); ok || v.History("b", "f") != nil {
		t.Error("(b, f) survived past the bound")
	}
	if got, ok := v.Seen("a", "g"); !ok || got != "v9" {
		t.Errorf("a saw g %q %v", got, ok)
	}
	pair := int64(1 + 1 + versions.ViewEntryOverhead)
	want := versions.ViewStats{Entries: 2, Versions: 3, Evictions: 1, MaxEntries: 2, MaxBytes: versions.DefaultViewBytes,
		Bytes: 2*pair + 3*(2+versions.ViewVersionOverhead) + 2*versions.ViewSpanBytes}
	if s := v.Stats(); s != want {
		t.Errorf("stats = %+v\nwant    %+v", s, want)
	}
	if _, ok := v.Seen("nobody", "f"); ok {
		t.Error("an unknown agent has a view")
	}
}

func TestViewsSeeingAVersionAgainAddsItsLines(t *testing.T) {
	v := versions.NewViews(10, 0)
	see(v, "a", "f", "v1", versions.Range(1, 50))
	see(v, "a", "f", "v2", versions.Range(1, 3))
	see(v, "a", "f", "v1", versions.Range(51, 100)) // the next page
	h := v.History("a", "f")
	if got := versionsOf(h); !slices.Equal(got, []string{"v1", "v2"}) {
		t.Fatalf("history = %v, want v1 (seen again) first", got)
	}
	if !slices.Equal(h[0].Lines, versions.Range(1, 100)) {
		t.Errorf("v1's lines = %v, want 1-100", h[0].Lines)
	}
	if s := v.Stats(); s.Versions != 2 || s.Bytes != 1+1+versions.ViewEntryOverhead+2*(2+versions.ViewVersionOverhead)+2*versions.ViewSpanBytes {
		t.Errorf("stats %+v", s)
	}
}

func TestViewsForgetTheLeastRecentlyUsedVersionPastTheDepth(t *testing.T) {
	t.Run("the oldest version goes when none was used", func(t *testing.T) {
		v := versions.NewViews(10, 0, versions.WithDepth(3))
		for i := 1; i <= 5; i++ {
			see(v, "a", "f", fmt.Sprintf("v%d", i), nil)
		}
		if got := versionsOf(v.History("a", "f")); !slices.Equal(got, []string{"v5", "v4", "v3"}) {
			t.Errorf("history = %v", got)
		}
		if s := v.Stats(); s.Versions != 3 || s.Bytes != 1+1+versions.ViewEntryOverhead+3*(2+versions.ViewVersionOverhead) {
			t.Errorf("stats %+v: the forgotten versions are still counted", s)
		}
	})
	t.Run("a version edits keep rebasing from stays, after the ones shown since", func(t *testing.T) {
		v := versions.NewViews(10, 0, versions.WithDepth(3))
		see(v, "a", "f", "read", versions.Range(1, 100))
		for i := 1; i <= 5; i++ {
			see(v, "a", "f", fmt.Sprintf("edit%d", i), versions.Range(i, i+6))
			v.Use("a", "f", "read")
		}
		if got := versionsOf(v.History("a", "f")); !slices.Equal(got, []string{"edit5", "edit4", "read"}) {
			t.Errorf("history = %v, want the two last edits and the read they rebase from", got)
		}
	})
	t.Run("using a version never seen changes nothing", func(t *testing.T) {
		v := versions.NewViews(10, 0)
		v.Use("a", "f", "v1")
		see(v, "a", "f", "v1", nil)
		v.Use("a", "f", "v9")
		if got := versionsOf(v.History("a", "f")); !slices.Equal(got, []string{"v1"}) {
			t.Errorf("history = %v", got)
		}
	})
	t.Run("a depth of one is the last version only", func(t *testing.T) {
		v := versions.NewViews(10, 0, versions.WithDepth(1))
		see(v, "", "f", "v1", nil)
		see(v, "", "f", "v2", nil)
		if got := versionsOf(v.History("", "f")); !slices.Equal(got, []string{"v2"}) {
			t.Errorf("history = %v", got)
		}
	})
	t.Run("an empty version is not recorded", func(t *testing.T) {
		v := versions.NewViews(10, 0)
		see(v, "a", "f", "", versions.Range(1, 3))
		if _, ok := v.Seen("a", "f"); ok {
			t.Error("a view of no version")
		}
	})
}

func TestViewsAreBoundedInBytes(t *testing.T) {
	const maxBytes = 64 << 10
	t.Run("many agents with long names stay under the bound, the oldest forgotten first", func(t *testing.T) {
		v := versions.NewViews(1_000_000, maxBytes)
		agent := func(i int) string { return fmt.Sprintf("%04d-%s", i, strings.Repeat("x", 1000)) }
		for i := range 1000 {
			see(v, agent(i), "src/main.go", "v2-0123456789abcdef0123456789abcdef", versions.Range(1, 10))
			if s := v.Stats(); s.Bytes > maxBytes {
				t.Fatalf("after %d agents: %d bytes, over the bound of %d", i+1, s.Bytes, maxBytes)
			}
		}
		s := v.Stats()
		if s.Entries >= 100 || s.Entries < 10 || s.Evictions != uint64(1000-s.Entries) {
			t.Fatalf("stats %+v: want a few dozen entries of ~1.3 KB, the rest evicted", s)
		}
		if _, ok := v.Seen(agent(0), "src/main.go"); ok {
			t.Error("the oldest agent's view survived")
		}
		if _, ok := v.Seen(agent(999), "src/main.go"); !ok {
			t.Error("the newest agent's view was forgotten")
		}
	})
	t.Run("many versions with many shown lines stay under the bound", func(t *testing.T) {
		v := versions.NewViews(1_000_000, maxBytes)
		var grep []int // every other line: as many spans as lines
		for n := 1; n <= 2*versions.MaxViewSpans+100; n += 2 {
			grep = append(grep, n)
		}
		for i := range 200 {
			agent, file := fmt.Sprintf("agent%d", i%7), fmt.Sprintf("f%d", i%13)
			see(v, agent, file, fmt.Sprintf("v2-%032d", i), versions.LinesOf(grep...))
			s := v.Stats()
			if s.Bytes > maxBytes {
				t.Fatalf("after %d views: %d bytes, over the bound of %d", i+1, s.Bytes, maxBytes)
			}
		}
		h := v.History("agent3", "f4") // the last seen pair (i = 199)
		if len(h) != 1 || len(h[0].Lines) != versions.MaxViewSpans {
			t.Fatalf("the last pair: %d versions, %d spans; want 1 version of %d spans (the cap)", len(h), len(h[0].Lines), versions.MaxViewSpans)
		}
		if s := v.Stats(); s.Versions < 1 || s.Evictions == 0 {
			t.Errorf("stats %+v", s)
		}
	})
	t.Run("a version seen again is counted by its new size", func(t *testing.T) {
		v := versions.NewViews(10, maxBytes)
		see(v, "a", "f", "v1", versions.Range(1, 2))
		see(v, "a", "f", "v1", versions.Range(5, 6))
		if s := v.Stats(); s.Entries != 1 || s.Bytes != 1+1+2+versions.ViewEntryOverhead+versions.ViewVersionOverhead+2*versions.ViewSpanBytes {
			t.Errorf("stats %+v", s)
		}
	})
	t.Run("a single pair larger than the bound is kept alone", func(t *testing.T) {
		v := versions.NewViews(10, 1000)
		see(v, "a", "f", "v1", nil)
		see(v, strings.Repeat("a", 2000), "f", "v1", nil)
		if s := v.Stats(); s.Entries != 1 || s.Evictions != 1 {
			t.Errorf("stats %+v", s)
		}
		if _, ok := v.Seen(strings.Repeat("a", 2000), "f"); !ok {
			t.Error("the pair just seen was forgotten")
		}
	})
}

func TestViewsKeepTheNewestLinesPastTheSpanCap(t *testing.T) {
	v := versions.NewViews(10, 0)
	var old, newer []int
	for i := range versions.MaxViewSpans {
		old = append(old, 4*i+1)
		newer = append(newer, 4*i+3)
	}
	see(v, "a", "f", "v1", versions.LinesOf(old...))
	see(v, "a", "f", "v1", versions.LinesOf(newer...))
	got := v.History("a", "f")[0].Lines
	if len(got) != versions.MaxViewSpans || !got.Has(3) || got.Has(1) {
		t.Errorf("%d spans, has 3: %v, has 1: %v; want the newer lines only", len(got), got.Has(3), got.Has(1))
	}
}

func TestLines(t *testing.T) {
	r := versions.Range
	for _, tt := range []struct {
		name string
		got  versions.Lines
		want versions.Lines
	}{
		{"a range", r(3, 5), versions.Lines{{3, 5}}},
		{"an empty range is none", r(5, 4), nil},
		{"a range is clipped at line 1", r(-2, 2), versions.Lines{{1, 2}}},
		{"a file with no lines shows none", r(1, 0), nil},
		{"numbers in any order, repeated, become runs", versions.LinesOf(7, 3, 4, 4, 10, 0, 5), versions.Lines{{3, 5}, {7, 7}, {10, 10}}},
		{"a union merges overlapping and touching runs", r(1, 3).Union(versions.Lines{{4, 6}, {9, 9}}).Union(r(5, 8)), versions.Lines{{1, 9}}},
		{"a union keeps gaps", r(1, 2).Union(r(4, 5)), versions.Lines{{1, 2}, {4, 5}}},
		{"a union with nothing is the same", r(1, 2).Union(nil), versions.Lines{{1, 2}}},
		{"a clip keeps what is inside", versions.Lines{{1, 3}, {5, 9}, {12, 20}}.Clip(2, 13), versions.Lines{{2, 3}, {5, 9}, {12, 13}}},
		{"a clip of nothing inside is none", r(1, 3).Clip(4, 10), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	l := versions.Lines{{2, 4}, {8, 8}}
	for n, want := range map[int]bool{0: false, 1: false, 2: true, 4: true, 5: false, 7: false, 8: true, 9: false} {
		if l.Has(n) != want {
			t.Errorf("Has(%d) = %v, want %v", n, !want, want)
		}
	}
	a := r(1, 2)
	_ = a.Union(r(3, 9))
	if !slices.Equal(a, r(1, 2)) {
		t.Error("Union changed its receiver")
	}
}

func TestViewsKeepTheLinesKnownAsMoved(t *testing.T) {
	v := versions.NewViews(10, 0)
	v.See("a", "f", versions.Seen{Version: "v2", Lines: versions.Range(1, 3), Moved: versions.Range(10, 20)})
	v.See("a", "f", versions.Seen{Version: "v2", Moved: versions.Range(30, 30)})
	s := v.History("a", "f")[0]
	if !slices.Equal(s.Lines, versions.Range(1, 3)) || !slices.Equal(s.Moved, versions.Lines{{10, 20}, {30, 30}}) {
		t.Errorf("seen = %+v", s)
	}
	for n, want := range map[int]bool{2: true, 15: true, 30: true, 25: false} {
		if s.Has(n) != want {
			t.Errorf("Has(%d) = %v", n, !want)
		}
	}
	if st := v.Stats(); st.Bytes != 1+1+versions.ViewEntryOverhead+2+versions.ViewVersionOverhead+3*versions.ViewSpanBytes {
		t.Errorf("stats %+v: want every run counted", st)
	}
}

// TestViewsHoldWhatSomePairRemembers: Holds follows the versions pairs
// remember, through the depth bound, re-showing and the entry bound.
func TestViewsHoldWhatSomePairRemembers(t *testing.T) {
	v := versions.NewViews(2, 0, versions.WithDepth(2))
	see := func(agent, version string) {
		v.See(agent, "f", versions.Seen{Version: version, Lines: versions.Range(1, 1)})
	}
	see("a", "v1")
	see("b", "v1")
	see("a", "v2")
	see("a", "v2") // shown again: still one hold of a's
	see("a", "v3") // a forgets v1; b still holds it
	for _, tt := range []struct {
		version string
		want    bool
	}{{"v1", true}, {"v2", true}, {"v3", true}, {"v4", false}} {
		if got := v.Holds(tt.version); got != tt.want {
			t.Errorf("after a: v1 v2 v3, b: v1: Holds(%s) = %v, want %v", tt.version, got, tt.want)
		}
	}
	see("c", "v4") // three pairs over a bound of two: b, the least recently used, goes
	if v.Holds("v1") {
		t.Error("v1 is still held after the only pair left holding it was forgotten")
	}
	if !v.Holds("v4") || !v.Holds("v3") {
		t.Error("the pairs kept lost their versions")
	}
}
