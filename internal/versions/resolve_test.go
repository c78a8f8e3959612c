package versions_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// held is the snapshots a test holds, by version: Batch.Snapshot.
type held map[string]*hashline.Document

func (m held) get(v string) (*hashline.Document, bool) {
	d, ok := m[v]
	return d, ok
}

// top is base with a line inserted above it by another agent: every line of
// base is one further down.
var top = doc("new", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10")

// TestResolveChoosesTheBase: which version a batch's references are read
// against (the explicit baseVersion, else the versions the agent was
// shown, the most recent first), and what comes of it, against real
// documents: "v1" is base, "v2" the current file, "v0" a version nobody
// holds.
func TestResolveChoosesTheBase(t *testing.T) {
	t.Parallel()
	r := versions.Range
	l5 := []hashline.Edit{replace(ref(base, 5), "", "L5")}
	for _, tt := range []struct {
		name     string
		cur      *hashline.Document // the current file, v2 (top when nil)
		base     string             // the explicit baseVersion
		views    []versions.Seen
		edits    []hashline.Edit
		from     string // the version rebased from
		moved    []versions.Move
		warning  string // a substring of the one warning, "" for none
		unknown  string // the refusal's unknown base
		how      string // and how the agent came by it
		notShown bool   // refused: not shown
		conflict bool   // refused: a conflict from v1 to v2
	}{
		{
			name:  "no view and no baseVersion: the batch as it is, for the planner to check by line and hash",
			edits: l5,
		},
		{
			name:  "a batch without line references reads no version, not even one nobody holds",
			views: []versions.Seen{{Version: "v0", Lines: r(1, 10)}},
			edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "end"}},
		},
		{
			name:  "the version last shown, which the references match: rebased from it",
			views: []versions.Seen{{Version: "v1", Lines: r(1, 10)}},
			edits: l5,
			from:  "v1",
			moved: []versions.Move{{Ref: ref(base, 5), From: 5, To: 6}},
		},
		{
			name:  "a baseVersion the views do not hold is taken at its word for every line",
			base:  "v1",
			edits: l5,
			from:  "v1",
			moved: []versions.Move{{Ref: ref(base, 5), From: 5, To: 6}},
		},
		{
			name:  "a baseVersion the views hold counts only the lines shown of it",
			base:  "v1",
			views: []versions.Seen{{Version: "v1", Lines: r(1, 3)}},
			edits: l5,
			// Neither v1's lines shown nor the current file's name line 5.
			notShown: true,
		},
		{
			name:    "the baseVersion before the views: its references are rebased from it, though the agent saw the current file since",
			base:    "v1",
			views:   []versions.Seen{{Version: "v2", Lines: r(1, 11)}, {Version: "v1", Lines: r(1, 10)}},
			edits:   l5,
			from:    "v1",
			moved:   []versions.Move{{Ref: ref(base, 5), From: 5, To: 6}},
			warning: "",
		},
		{
			name:    "the newest view does not show the lines, an older one does: read against the older, with a warning naming both",
			views:   []versions.Seen{{Version: "v2", Lines: r(1, 3)}, {Version: "v1", Lines: r(1, 10)}},
			edits:   l5,
			from:    "v1",
			moved:   []versions.Move{{Ref: ref(base, 5), From: 5, To: 6}},
			warning: "lines you were shown of version v2, the one you last saw; they all match lines you were shown of version v1, which you saw earlier",
		},
		{
			name:  "the newest view shows the lines as they are now: read against the current file, not rebased",
			views: []versions.Seen{{Version: "v2", Lines: r(1, 11)}, {Version: "v1", Lines: r(1, 10)}},
			edits: []hashline.Edit{replace(ref(top, 6), "", "L5")},
		},
		{
			name:    "the version last shown is held no more: refused, the references cannot be proven",
			views:   []versions.Seen{{Version: "v0", Lines: r(1, 10)}, {Version: "v1", Lines: r(1, 10)}},
			edits:   l5,
			unknown: "v0",
			how:     "last saw",
		},
		{
			name:    "a baseVersion held no more: refused, whatever the views",
			base:    "v0",
			views:   []versions.Seen{{Version: "v1", Lines: r(1, 10)}},
			edits:   l5,
			unknown: "v0",
			how:     "gave as baseVersion",
		},
		{
			name:    "a held baseVersion the references do not match, and no view: checked against the current file, with a warning",
			base:    "v1",
			edits:   []hashline.Edit{replace(ref(top, 1), "", "NEW")},
			warning: "they were checked against the current file v2 by line and hash instead",
		},
		{
			name:     "another change rewrote the referenced line since the base: a conflict naming both versions",
			cur:      doc("new", "l1", "l2", "l3", "l4", "FIVE", "l6", "l7", "l8", "l9", "l10"),
			views:    []versions.Seen{{Version: "v1", Lines: r(1, 10)}},
			edits:    l5,
			conflict: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cur := tt.cur
			if cur == nil {
				cur = top
			}
			got, err := versions.Resolve(versions.Batch{
				Edits: tt.edits, Hasher: h, BaseVersion: tt.base, Views: tt.views,
				Current: "v2", Doc: cur, Snapshot: held{"v1": base}.get,
			})
			var refusal *versions.Refusal
			var ce *versions.ConflictError
			switch {
			case tt.unknown != "" || tt.notShown:
				if !errors.As(err, &refusal) {
					t.Fatalf("Resolve = %+v, %v; want a refusal", got, err)
				}
				if refusal.UnknownBase != tt.unknown || refusal.How != tt.how || refusal.NotShown != tt.notShown {
					t.Errorf("refusal: unknown base %q (%q), not shown %v; want %q (%q), %v",
						refusal.UnknownBase, refusal.How, refusal.NotShown, tt.unknown, tt.how, tt.notShown)
				}
				if len(refusal.Batch.Stale()) == 0 {
					t.Errorf("the refusal shows no current lines: %v", refusal)
				}
				return
			case tt.conflict:
				if !errors.As(err, &ce) {
					t.Fatalf("Resolve = %+v, %v; want a conflict", got, err)
				}
				if ce.BaseVersion != "v1" || ce.CurrentVersion != "v2" {
					t.Errorf("conflict from %q to %q, want v1 to v2", ce.BaseVersion, ce.CurrentVersion)
				}
				return
			case err != nil:
				t.Fatalf("Resolve: %v", err)
			}
			if got.From != tt.from || !slices.Equal(got.Moved, tt.moved) {
				t.Errorf("from %q moved %v, want %q %v", got.From, got.Moved, tt.from, tt.moved)
			}
			if tt.from == "" && !slices.Equal(got.Edits, tt.edits) {
				t.Errorf("edits %v, want them as they came: %v", got.Edits, tt.edits)
			}
			switch {
			case tt.warning == "" && len(got.Warnings) > 0:
				t.Errorf("warnings %q, want none", got.Warnings)
			case tt.warning != "" && (len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], tt.warning)):
				t.Errorf("warnings %q, want one saying %q", got.Warnings, tt.warning)
			}
			if tt.from == "" {
				return
			}
			// The rebased batch applied to the current file is the batch
			// applied to the base, with the other change merged in.
			res, err := hashline.ApplyEdits(cur, got.Edits, hashline.ApplyOptions{Hasher: h})
			if err != nil {
				t.Fatalf("applying the rebased edits %v: %v", got.Edits, err)
			}
			if want := "new\nl1\nl2\nl3\nl4\nL5\nl6\nl7\nl8\nl9\nl10\n"; string(res.Doc.View()) != want {
				t.Errorf("rebased result %q, want %q", res.Doc.View(), want)
			}
		})
	}
}

// collider returns a line, unlike like, whose hash is like's.
func collider(like string) string {
	for i := 0; ; i++ {
		if c := fmt.Sprintf("c%d", i); h.Sum(c) == h.Sum(like) {
			return c
		}
	}
}

// TestResolveNotShown: a reference counts only as a line the agent was
// shown, by number and hash, in a version it saw; one to a line of the
// current file it never saw is refused NOT_SHOWN with the current lines,
// whatever its hash. Against real documents, the agent having been shown
// lines 1-3 of the current file ("v2") alone.
func TestResolveNotShown(t *testing.T) {
	t.Parallel()
	cur := doc("a", "b", "c", "d", "e", "f")
	views := []versions.Seen{{Version: "v2", Lines: versions.Range(1, 3)}}
	for _, tt := range []struct {
		name    string
		edits   []hashline.Edit
		refused []int // the lines refused as not shown
	}{
		{name: "a line shown", edits: []hashline.Edit{replace(ref(cur, 2), "", "B")}},
		{name: "a range whose ends were shown: its inner lines need not have been", edits: []hashline.Edit{replace(ref(cur, 1), ref(cur, 3), "X")}},
		{name: "a line never shown, though its hash matches", edits: []hashline.Edit{replace(ref(cur, 5), "", "E")}, refused: []int{5}},
		{name: "an insertion anchored on a line never shown", edits: []hashline.Edit{{Op: hashline.OpInsertAfter, Start: ref(cur, 4), Text: "x"}}, refused: []int{4}},
		{name: "a range ending on a line never shown", edits: []hashline.Edit{replace(ref(cur, 2), ref(cur, 4), "X")}, refused: []int{4}},
		{name: "a shown line with a stale hash: for the planner, which shows it fresh", edits: []hashline.Edit{replace(hashline.Ref{Line: 2, Hash: h.Sum("zz")}.String(), "", "B")}},
		{name: "a number past the end: for the planner, which gives the file's length", edits: []hashline.Edit{replace(hashline.Ref{Line: 20, Hash: h.Sum("x")}.String(), "", "B")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := versions.Resolve(versions.Batch{Edits: tt.edits, Hasher: h, Views: views, Current: "v2", Doc: cur})
			if tt.refused == nil {
				if err != nil || got.From != "" || !slices.Equal(got.Edits, tt.edits) {
					t.Fatalf("Resolve = %+v, %v; want the batch as it is", got, err)
				}
				return
			}
			var refusal *versions.Refusal
			if !errors.As(err, &refusal) || !refusal.NotShown {
				t.Fatalf("Resolve = %+v, %v; want a NOT_SHOWN refusal", got, err)
			}
			var lines []int
			for _, p := range refusal.Batch.Stale() {
				lines = append(lines, p.Line)
				if len(p.Fresh) == 0 {
					t.Errorf("refused reference %s has no fresh lines", p.Ref)
				}
			}
			if !slices.Equal(lines, tt.refused) {
				t.Errorf("refused lines %v, want %v", lines, tt.refused)
			}
		})
	}
}

// TestResolveTwoReadings: the agent's own insertion moved its read's lines,
// and its reply said where; a number it then sends may be the old one or
// the new. When the short hash matches in both readings and they land on
// different lines, neither is taken; a line shown at that very number in
// the latest version is what the number names.
func TestResolveTwoReadings(t *testing.T) {
	t.Parallel()
	// v1: line 2 collides with line 5. v2: three lines inserted after line
	// 1, so v2's line 5 is v1's line 2, with line 5's hash.
	v1 := doc("l1", collider("l5"), "l3", "l4", "l5", "l6")
	v2 := doc("l1", "x", "y", "z", collider("l5"), "l3", "l4", "l5", "l6")
	edits := []hashline.Edit{replace(ref(v1, 5), "", "L5")}
	if ref(v1, 5) != ref(v2, 5) {
		t.Fatalf("no collision: %s, %s", ref(v1, 5), ref(v2, 5))
	}
	read := versions.Seen{Version: "v1", Lines: versions.Range(1, 6)}
	for _, tt := range []struct {
		name   string
		latest versions.Seen // what the agent's edit showed of v2
		refuse bool
		want   string
	}{
		{name: "line 5 known only as moved: two readings, refused", latest: versions.Seen{Version: "v2", Lines: versions.Range(1, 4), Moved: versions.Range(5, 9)}, refuse: true},
		{name: "line 5 shown at that number: the current file's line 5", latest: versions.Seen{Version: "v2", Lines: versions.Range(1, 9)}, want: "l1 x y z L5 l3 l4 l5 l6"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := versions.Resolve(versions.Batch{
				Edits: edits, Hasher: h, Views: []versions.Seen{tt.latest, read},
				Current: "v2", Doc: v2, Snapshot: held{"v1": v1}.get,
			})
			if tt.refuse {
				var refusal *versions.Refusal
				if !errors.As(err, &refusal) || !refusal.NotShown {
					t.Fatalf("Resolve = %+v, %v; want a NOT_SHOWN refusal", got, err)
				}
				p := refusal.Batch.Problems[0]
				if !strings.Contains(p.Message, "v1") || !slices.Equal(p.Tags, []int{5}) {
					t.Errorf("problem %+v: want both places named, the current line 5 among its tags", p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := hashline.ApplyEdits(v2, got.Edits, hashline.ApplyOptions{Hasher: h})
			if err != nil {
				t.Fatal(err)
			}
			if text := strings.Join(strings.Fields(string(res.Doc.View())), " "); text != tt.want {
				t.Errorf("result %q, want %q", text, tt.want)
			}
		})
	}
}

// TestRefusalShown: what a refusal showed the agent of the current file,
// from the line numbers it carries: a conflict's fresh lines, its current
// line and the references that held; a batch error's fresh lines and the
// lines its problems show as tags; nothing for an error that shows no tags.
func TestRefusalShown(t *testing.T) {
	t.Parallel()
	plan := func(d *hashline.Document, edits ...hashline.Edit) error {
		_, err := hashline.PlanEdits(d, edits, h)
		return err
	}
	// A conflict: line 5 rewritten (CHANGED, now line 6 of cur), line 9
	// moved to 10 and held.
	cur := doc("new", "l1", "l2", "l3", "l4", "FIVE", "l6", "l7", "l8", "l9", "l10")
	_, conflict := versions.Rebase(base, cur, []hashline.Edit{replace(ref(base, 5), "", "x"), replace(ref(base, 9), "", "y")}, h)
	ambiguous := doc("func a() {", "\tif x {", "\t}", "}")
	for _, tt := range []struct {
		name string
		err  error
		want versions.Lines // nil: shows no tags
	}{
		{name: "a conflict", err: conflict, want: versions.Range(3, 10)},
		{name: "a conflict wrapped", err: fmt.Errorf("refused: %w", conflict), want: versions.Range(3, 10)},
		{name: "an ambiguous oldText: the lines it could mean", err: plan(ambiguous, hashline.Edit{Op: hashline.OpReplaceText, OldText: "}\n", NewText: "}//\n"}), want: versions.Lines{{3, 4}}},
		{name: "a stale reference: its fresh lines", err: plan(base, replace(hashline.Ref{Line: 5, Hash: h.Sum("l6")}.String(), "", "x")), want: versions.Range(2, 8)},
		{name: "a missing oldText with nothing like it: no tags", err: plan(base, hashline.Edit{Op: hashline.OpReplaceText, OldText: "nowhere", NewText: "x"})},
		{name: "not a refusal of references", err: errors.New("disk full")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := versions.RefusalShown(tt.err)
			if ok != (tt.want != nil) || !slices.Equal(got, tt.want) {
				t.Errorf("RefusalShown = %v, %v; want %v (%v)", got, ok, tt.want, tt.want != nil)
			}
		})
	}
	var ce *versions.ConflictError
	if !errors.As(conflict, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Current != 6 || !strings.HasPrefix(ce.Conflicts[0].CurrentLine, ref(cur, 6)+"|") {
		t.Errorf("conflict %+v: want line 5 changed, its current line 6", conflict)
	}
}

// TestEditShown: what an Edit's reply showed of the version it wrote: its
// windows, every line with full, and the lines shown of the version it
// replaced that it left alone, at their new numbers (moved when the number
// changed).
func TestEditShown(t *testing.T) {
	t.Parallel()
	// The edit inserts two lines after line 3 of base.
	plan, err := hashline.PlanEdits(base, []hashline.Edit{{Op: hashline.OpInsertAfter, Start: ref(base, 3), Text: "a\nb"}}, h)
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Apply(base, hashline.ApplyOptions{Hasher: h, Context: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := versions.Range
	for _, tt := range []struct {
		name  string
		full  bool
		views []versions.Seen
		want  versions.Seen
	}{
		{name: "full: every line", full: true, want: versions.Seen{Version: "v2", Lines: r(1, 12)}},
		{name: "no view of the version replaced: the window", want: versions.Seen{Version: "v2", Lines: r(3, 6)}},
		{name: "the lines read of it, carried", views: []versions.Seen{{Version: "v1", Lines: r(1, 10)}},
			want: versions.Seen{Version: "v2", Lines: r(1, 6), Moved: r(6, 12)}},
		{name: "a view of another version carries nothing", views: []versions.Seen{{Version: "v0", Lines: r(1, 10)}},
			want: versions.Seen{Version: "v2", Lines: r(3, 6)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := versions.EditShown("v2", base, res, tt.full, tt.views, "v1")
			if got.Version != tt.want.Version || !slices.Equal(got.Lines, tt.want.Lines) || !slices.Equal(got.Moved, tt.want.Moved) {
				t.Errorf("EditShown = %+v, want %+v", got, tt.want)
			}
		})
	}
}
