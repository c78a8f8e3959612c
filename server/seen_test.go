package server_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// What each agent saw: the server remembers, per agent and file, the last
// few versions it was shown and which lines of each, reads an edit's
// references against a version in which the agent was shown every
// referenced line, and refuses a line number the agent never saw.

// numbered is a file of n lines "line 1" .. "line n".
func numbered(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i+1)
	}
	return lines
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// colliding returns a line, not among avoid, whose hash is target's.
func colliding(target string, avoid ...string) string {
	h := hashline.Hasher{}
	for i := 0; ; i++ {
		c := fmt.Sprintf("filler %d", i)
		if h.Sum(c) == h.Sum(target) && !strings.Contains(strings.Join(avoid, "\n"), c) {
			return c
		}
	}
}

// editErr edits path as c and returns the error.
func (e *env) editErr(c *client.Client, path string, edits ...*hashlinev1.FileEdit) (*hashlinev1.EditResponse, error) {
	return c.Edit(e.ctx, &hashlinev1.EditRequest{Path: path, Edits: edits})
}

// wantNotShown checks err is STALE_REF whose refs are all NOT_SHOWN, with
// fresh lines, at the given lines.
func wantNotShown(t *testing.T, err error, lines ...int32) client.StaleRefError {
	t.Helper()
	return wantStale(t, err, "NOT_SHOWN", lines...)
}

// wantStale checks err is STALE_REF whose refs all have reason, with fresh
// lines, at the given lines.
func wantStale(t *testing.T, err error, reason string, lines ...int32) client.StaleRefError {
	t.Helper()
	var stale client.StaleRefError
	if !errors.As(err, &stale) {
		t.Fatalf("err = %v, want STALE_REF", err)
	}
	if len(stale.Refs) != len(lines) {
		t.Fatalf("stale refs %v, want one at each of lines %v", stale.Refs, lines)
	}
	for i, r := range stale.Refs {
		if r.GetReason() != reason || r.GetLine() != lines[i] || len(r.GetFresh()) == 0 {
			t.Errorf("stale ref %d = %v, want %s at line %d with fresh lines", i, r, reason, lines[i])
		}
	}
	return stale
}

// TestEditFromOldNumbersAfterTheAgentsOwnInsertion is the case of issue
// 25: a model reads a file, inserts lines near the top, then edits further
// down with the line numbers it read. Its tags match the version it read,
// not the one its insertion made: they are rebased from the read, and the
// edit lands on the line the model meant.
func TestEditFromOldNumbersAfterTheAgentsOwnInsertion(t *testing.T) {
	v1Lines := numbered(60)
	v1 := joinLines(v1Lines)
	for _, tt := range []struct {
		name  string
		other func(e *env) // what happens between the insertion and the edit
		at    int          // the number the edit gives line 40 of v1 (0: 40)
		to    int32        // where line 40 of v1 is then
		want  []string     // the lines around it afterwards
	}{
		{name: "alone", to: 43},
		{name: "by the number the insertion's reply moved it to", at: 43, to: 43},
		{name: "with another agent's insertion in between", other: func(e *env) {
			b := e.agent("b")
			e.readAs(b, "f.txt")
			// Line 20 of the file after a's insertion is v1's line 17.
			e.editAs(b, "f.txt", client.InsertAfter(tag(e.read("f.txt"), 20), "b1\nb2"))
		}, to: 45},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("f.txt", v1)
			a := e.agent("a")
			read := e.readAs(a, "f.txt").GetVersion()
			ins := e.editAs(a, "f.txt", client.InsertAfter(tag(v1, 2), "new 1\nnew 2\nnew 3"))
			if w := ins.GetWindows(); len(w) != 1 || w[0].GetEnd() >= 40 {
				t.Fatalf("the insertion's reply shows %v; the test needs line 40 outside it", w)
			}
			if tt.other != nil {
				tt.other(e)
			}
			ref := tag(v1, 40)
			if tt.at != 0 {
				ref = fmt.Sprintf("%d:%s", tt.at, strings.SplitN(ref, ":", 2)[1])
			}
			resp, err := e.editErr(a, "f.txt", client.Replace(ref, "", "line 40 changed"))
			if err != nil {
				t.Fatalf("edit from the read's line 40: %v", err)
			}
			got := strings.Split(e.read("f.txt"), "\n")
			if got[tt.to-1] != "line 40 changed" || got[tt.to-2] != "line 39" || got[tt.to] != "line 41" {
				t.Errorf("lines %d-%d = %q, want line 40 replaced", tt.to-1, tt.to+1, got[tt.to-2:tt.to+1])
			}
			if tt.at != 0 {
				if resp.GetRebasedFrom() != "" || len(resp.GetMoved()) != 0 {
					t.Errorf("rebasedFrom %q moved %v: a reference to the file as it is was rebased", resp.GetRebasedFrom(), resp.GetMoved())
				}
				return
			}
			if resp.GetRebasedFrom() != read {
				t.Errorf("rebasedFrom %q, want the read %s", resp.GetRebasedFrom(), read)
			}
			if m := resp.GetMoved(); len(m) != 1 || m[0].GetFrom() != 40 || m[0].GetTo() != tt.to {
				t.Errorf("moved %v, want 40 -> %d", m, tt.to)
			}
			if w := strings.Join(resp.GetWarnings(), "\n"); !strings.Contains(w, read) || !strings.Contains(w, ins.GetVersion()) {
				t.Errorf("warnings %q: want the read version %s and the last one seen %s named", w, read, ins.GetVersion())
			}
		})
	}
}

// TestEditAfterEditFromOneRead: a model that reads once and then sends its
// changes one call at a time, every one from the tags of that read, keeps
// landing past the number of versions remembered per file: the read is
// kept while edits rebase from it.
func TestEditAfterEditFromOneRead(t *testing.T) {
	v1 := joinLines(numbered(40))
	e := newEnv(t)
	e.write("f.txt", v1)
	a := e.agent("a")
	read := e.readAs(a, "f.txt").GetVersion()
	// Each edit inserts a line after line 4k of the read, from its tags.
	for k := 1; k <= 8; k++ {
		resp, err := e.editErr(a, "f.txt", client.InsertAfter(tag(v1, 4*k), fmt.Sprintf("after %d", 4*k)))
		if err != nil {
			t.Fatalf("edit %d: %v", k, err)
		}
		if k > 1 && resp.GetRebasedFrom() != read {
			t.Errorf("edit %d: rebasedFrom %q, want the read %s", k, resp.GetRebasedFrom(), read)
		}
	}
	var want []string
	for i, l := range numbered(40) {
		want = append(want, l)
		if n := i + 1; n%4 == 0 && n <= 32 {
			want = append(want, fmt.Sprintf("after %d", n))
		}
	}
	if got := e.read("f.txt"); got != joinLines(want) {
		t.Errorf("file =\n%s\nwant\n%s", got, joinLines(want))
	}
}

// TestAStaleNumberWhoseHashCollides: the line now at the number the model
// read has, by chance, the same 2-hex hash as the line it read there.
// Checked against the file by number and hash, the edit would replace that
// other line. When the agent's own insertion moved the lines, its reply
// said where they went, so the number may be read as the new one too: two
// readings, two lines, and the edit is refused with both shown (or as for
// an unknown base when the read is no longer held). When the agent was
// never shown the line at that number as the file is now, the tags are
// rebased from its read onto the right line.
func TestAStaleNumberWhoseHashCollides(t *testing.T) {
	lines := numbered(60)
	// After three lines inserted at the top, line 40 is the read's line 37:
	// make their hashes collide.
	lines[36] = colliding(lines[39], lines...)
	v1 := joinLines(lines)
	for _, tt := range []struct {
		name      string
		opts      []engine.Option
		insert    func(e *env, a *client.Client) // the three lines, and what a was shown of them
		refused   string                         // the StaleRef reason; "" when the edit lands
		rebasedTo int
	}{
		{name: "after the agent's own insertion, the read held: refused, both lines shown", insert: func(e *env, a *client.Client) {
			e.editAs(a, "f.txt", client.InsertAfter(tag(v1, 1), "x\ny\nz"))
		}, refused: "NOT_SHOWN"},
		{name: "after the agent's own insertion, no snapshots: refused", opts: []engine.Option{engine.WithSnapshotCacheBytes(0)}, insert: func(e *env, a *client.Client) {
			e.editAs(a, "f.txt", client.InsertAfter(tag(v1, 1), "x\ny\nz"))
		}, refused: "CHANGED"},
		{name: "after another agent's insertion and a read of the top: rebased onto the right line", insert: func(e *env, a *client.Client) {
			b := e.agent("b")
			e.readAs(b, "f.txt")
			e.editAs(b, "f.txt", client.InsertAfter(tag(v1, 1), "x\ny\nz"))
			if _, err := a.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Limit: 10}); err != nil {
				t.Fatal(err)
			}
		}, rebasedTo: 43},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvWS(t, nil, tt.opts...)
			e.write("f.txt", v1)
			a := e.agent("a")
			e.readAs(a, "f.txt")
			tt.insert(e, a)
			now := e.read("f.txt")
			if tag(now, 40) != tag(v1, 40) {
				t.Fatalf("no collision: %s vs %s", tag(now, 40), tag(v1, 40))
			}
			before := e.snapshot()
			resp, err := e.editErr(a, "f.txt", client.Replace(tag(v1, 40), "", "line 40 changed"))
			if tt.refused != "" {
				stale := wantStale(t, err, tt.refused, 40)
				e.assertUnchanged(before)
				fresh := strings.Join(stale.Refs[0].GetFresh(), "\n")
				if tt.refused == "NOT_SHOWN" && (!strings.Contains(fresh, tag(now, 40)+"|"+lines[36]) || !strings.Contains(fresh, tag(now, 43)+"|line 40")) {
					t.Errorf("fresh lines %q: want both lines the reference can name, 40 and 43", fresh)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m := resp.GetMoved(); len(m) != 1 || m[0].GetTo() != int32(tt.rebasedTo) {
				t.Errorf("moved %v, want 40 -> %d", m, tt.rebasedTo)
			}
			got := strings.Split(e.read("f.txt"), "\n")
			if got[tt.rebasedTo-1] != "line 40 changed" || got[39] != lines[36] {
				t.Errorf("line %d = %q and line 40 = %q: want the read's line 40 replaced and the colliding line kept", tt.rebasedTo, got[tt.rebasedTo-1], got[39])
			}
		})
	}
}

// TestTheLinesAnAgentWasShown: which lines count as shown, by what showed
// them, and what a reference to another line gets.
func TestTheLinesAnAgentWasShown(t *testing.T) {
	content := joinLines(numbered(150))
	page := func(offset, limit int32) func(e *env, a *client.Client) {
		return func(e *env, a *client.Client) {
			if _, err := a.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Offset: offset, Limit: limit}); err != nil {
				t.Fatal(err)
			}
		}
	}
	grep := func(pattern string, context int32) func(e *env, a *client.Client) {
		return func(e *env, a *client.Client) {
			if _, err := a.Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: pattern, Before: context, After: context}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	both := func(fs ...func(e *env, a *client.Client)) func(e *env, a *client.Client) {
		return func(e *env, a *client.Client) {
			for _, f := range fs {
				f(e, a)
			}
		}
	}
	r := func(n int) string { return tag(content, n) }
	for _, tt := range []struct {
		name     string
		see      func(e *env, a *client.Client)
		edit     *hashlinev1.FileEdit
		notShown []int32 // nil: the edit lands
	}{
		{name: "a line of the page read", see: page(1, 50), edit: client.Replace(r(50), "", "x")},
		{name: "a line past the page read, matching by number and hash", see: page(1, 50), edit: client.Replace(r(120), "", "x"), notShown: []int32{120}},
		{name: "an anchor past the page read", see: page(1, 50), edit: client.InsertAfter(r(120), "x"), notShown: []int32{120}},
		{name: "a range ending past the page read", see: page(1, 50), edit: client.Replace(r(40), r(60), "x"), notShown: []int32{60}},
		{name: "a range whose ends were shown, not its inside", see: both(page(1, 10), grep("^line 30$", 0)), edit: client.Delete(r(5), r(30))},
		{name: "the second page read", see: both(page(1, 50), page(51, 50)), edit: client.Replace(r(99), "", "x")},
		{name: "a line Grep matched", see: grep("^line 77$", 1), edit: client.Replace(r(77), "", "x")},
		{name: "a line of Grep's context", see: grep("^line 77$", 1), edit: client.InsertBefore(r(78), "x")},
		{name: "a line past Grep's context", see: grep("^line 77$", 1), edit: client.Replace(r(80), "", "x"), notShown: []int32{80}},
		{name: "every reference not shown is reported", see: page(1, 10), edit: client.Replace(r(20), r(30), "x"), notShown: []int32{20, 30}},
		{name: "append needs no line", see: page(1, 1), edit: client.Append("x")},
		{name: "prepend needs no line", see: page(1, 1), edit: client.Prepend("x")},
		{name: "replaceText needs no line", see: page(1, 1), edit: client.ReplaceText("line 120\n", "x\n", false)},
		{name: "a line number past the end is out of range, not unseen", see: page(1, 10), edit: client.Replace("151:ab", "", "x")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("f.txt", content)
			a := e.agent("a")
			tt.see(e, a)
			before := e.snapshot()
			_, err := e.editErr(a, "f.txt", tt.edit)
			switch {
			case tt.notShown != nil:
				stale := wantNotShown(t, err, tt.notShown...)
				e.assertUnchanged(before)
				// The refusal showed the current lines: a retry from them lands.
				retry := client.Replace(stale.Refs[0].GetCurrentLine(), "", "retried")
				if _, err := e.editErr(a, "f.txt", retry); err != nil {
					t.Fatalf("retry from the fresh tag %s: %v", stale.Refs[0].GetCurrentLine(), err)
				}
			case strings.HasPrefix(tt.name, "a line number past the end"):
				if !errors.Is(err, client.ErrLineOutOfRange) {
					t.Fatalf("err = %v, want LINE_OUT_OF_RANGE", err)
				}
			case err != nil:
				t.Fatalf("err = %v, want the edit applied", err)
			}
		})
	}
}

// TestWhatAnEditReplyShows: the windows of an Edit's reply are lines the
// agent was shown of the version it wrote, and so are the lines it was
// shown of the version before that the edit left alone, at the numbers
// the reply says they moved to; full shows it all.
func TestWhatAnEditReplyShows(t *testing.T) {
	v1 := joinLines(numbered(100))
	for _, tt := range []struct {
		name    string
		first   *hashlinev1.EditRequest // from a read of lines 1-20
		next    func(v1, v2 string) []*hashlinev1.FileEdit
		stale   string // the StaleRef reason; "" when the edit lands
		staleAt []int32
	}{
		{
			name:  "lines of the page before and after a change that kept the length",
			first: &hashlinev1.EditRequest{Edits: []*hashlinev1.FileEdit{client.Replace(tag(v1, 10), "", "ten")}},
			next: func(v1, v2 string) []*hashlinev1.FileEdit {
				// The changed line from the window, and lines of the read
				// on both sides of it: one batch mixing the two reads.
				return []*hashlinev1.FileEdit{client.Replace(tag(v2, 10), "", "TEN"), client.Replace(tag(v1, 2), "", "two"), client.Replace(tag(v1, 20), "", "twenty")}
			},
		},
		{
			name:  "lines after a change that moved them, at the numbers the reply gave",
			first: &hashlinev1.EditRequest{Edits: []*hashlinev1.FileEdit{client.InsertAfter(tag(v1, 10), "ten and a half")}},
			next: func(v1, v2 string) []*hashlinev1.FileEdit {
				return []*hashlinev1.FileEdit{client.Replace(tag(v2, 11), "", "TEN"), client.Replace(tag(v2, 21), "", "twenty")}
			},
		},
		{
			name:  "lines after a change that moved them, at their old numbers, mixed with the new version's",
			first: &hashlinev1.EditRequest{Edits: []*hashlinev1.FileEdit{client.InsertAfter(tag(v1, 10), "ten and a half")}},
			next: func(v1, v2 string) []*hashlinev1.FileEdit {
				return []*hashlinev1.FileEdit{client.Replace(tag(v2, 11), "", "TEN"), client.Replace(tag(v1, 20), "", "twenty")}
			},
			stale: "CHANGED", staleAt: []int32{20},
		},
		{
			name:  "not lines the read never showed",
			first: &hashlinev1.EditRequest{Edits: []*hashlinev1.FileEdit{client.InsertAfter(tag(v1, 10), "ten and a half")}},
			next: func(v1, v2 string) []*hashlinev1.FileEdit {
				return []*hashlinev1.FileEdit{client.Replace(tag(v2, 11), "", "TEN"), client.Replace(tag(v2, 40), "", "forty")}
			},
			stale: "NOT_SHOWN", staleAt: []int32{40},
		},
		{
			name:  "every line with full",
			first: &hashlinev1.EditRequest{Full: true, Edits: []*hashlinev1.FileEdit{client.InsertAfter(tag(v1, 10), "ten and a half")}},
			next: func(v1, v2 string) []*hashlinev1.FileEdit {
				return []*hashlinev1.FileEdit{client.Replace(tag(v2, 11), "", "TEN"), client.Replace(tag(v2, 90), "", "ninety")}
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("f.txt", v1)
			a := e.agent("a")
			if _, err := a.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Limit: 20}); err != nil {
				t.Fatal(err)
			}
			tt.first.Path = "f.txt"
			if _, err := a.Edit(e.ctx, tt.first); err != nil {
				t.Fatal(err)
			}
			before := e.snapshot()
			_, err := e.editErr(a, "f.txt", tt.next(v1, e.read("f.txt"))...)
			if tt.stale != "" {
				wantStale(t, err, tt.stale, tt.staleAt...)
				e.assertUnchanged(before)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestARetryAfterAConflictKeepsTheReferencesThatHeld: the conflict names
// the references that failed; a retry that fixes them from the fresh
// lines and keeps the others as they were lands.
func TestARetryAfterAConflictKeepsTheReferencesThatHeld(t *testing.T) {
	e := newEnv(t)
	e.write("f.txt", tenLines)
	a, b := e.agent("a"), e.agent("b")
	e.readAs(a, "f.txt")
	e.readAs(b, "f.txt")
	e.editAs(b, "f.txt", client.Replace(tag(tenLines, 5), "", "B5"))
	_, err := e.editErr(a, "f.txt", client.Replace(tag(tenLines, 5), "", "A5"), client.Replace(tag(tenLines, 8), "", "A8"))
	var stale client.StaleRefError
	if !errors.As(err, &stale) || len(stale.Refs) != 1 {
		t.Fatalf("err = %v, want one conflict", err)
	}
	if _, err := e.editErr(a, "f.txt", client.Replace(stale.Refs[0].GetCurrentLine(), "", "A5"), client.Replace(tag(tenLines, 8), "", "A8")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := oneLine(e.read("f.txt")); got != "l1 l2 l3 l4 A5 l6 l7 A8 l9 l10" {
		t.Errorf("file = %q", got)
	}
}

// TestViewsStayWithinTheirBoundWithManyVersions: agents that read pages,
// grep and edit many files keep the memory of what they saw under
// --view-bytes.
func TestViewsStayWithinTheirBoundWithManyVersions(t *testing.T) {
	const maxBytes = 16 << 10
	e := newEnv(t, engine.WithViewBytes(maxBytes))
	content := joinLines(numbered(200))
	for f := range 6 {
		e.write(fmt.Sprintf("f%d.txt", f), content)
	}
	for i := range 60 {
		a := e.agent(fmt.Sprintf("agent-%d-%s", i%5, strings.Repeat("x", 200)))
		path := fmt.Sprintf("f%d.txt", i%6)
		if _, err := a.Read(e.ctx, &hashlinev1.ReadRequest{Path: path, Offset: int32(1 + i%150), Limit: 7}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: "line [0-9]*" + fmt.Sprint(i%10) + "$", Path: path, MaxMatches: 1000}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: path, Edits: []*hashlinev1.FileEdit{client.Append(fmt.Sprint("appended ", i))}}); err != nil {
			t.Fatal(err)
		}
		if s := e.svc.Engine().ViewStats(); s.Bytes > maxBytes {
			t.Fatalf("after %d rounds: %+v, over the bound", i+1, s)
		}
	}
	if s := e.svc.Engine().ViewStats(); s.Evictions == 0 || s.Versions <= s.Entries {
		t.Errorf("stats %+v: want several versions per pair and evictions at the bound", s)
	}
}

// TestABaseVersionTheViewsForgotIsTakenAtItsWord: the agent read the file,
// then was shown more versions of it than are remembered. Its tags from
// the read, without baseVersion, match no version the server remembers it
// saw: refused as stale. Named with baseVersion, a version the server
// cannot tell whether it showed, they are read against it and rebased
// from its snapshot, as after a restart.
func TestABaseVersionTheViewsForgotIsTakenAtItsWord(t *testing.T) {
	v1 := joinLines(numbered(20))
	e := newEnv(t)
	e.write("f.txt", v1)
	a := e.agent("a")
	read := e.readAs(a, "f.txt").GetVersion()
	// Five appends, each from nothing: five versions shown, none rebased
	// from the read, which is forgotten.
	for i := range versions.DefaultViewDepth + 1 {
		e.editAs(a, "f.txt", client.Prepend(fmt.Sprint("top ", i)))
	}
	before := e.snapshot()
	_, err := e.editErr(a, "f.txt", client.Replace(tag(v1, 20), "", "twenty"))
	wantStale(t, err, "CHANGED", 20)
	e.assertUnchanged(before)
	resp, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", BaseVersion: read, Edits: []*hashlinev1.FileEdit{client.Replace(tag(v1, 20), "", "twenty")}})
	if err != nil {
		t.Fatal(err)
	}
	if m := resp.GetMoved(); resp.GetRebasedFrom() != read || len(m) != 1 || m[0].GetTo() != 25 {
		t.Errorf("rebasedFrom %q moved %v, want from the read, 20 -> 25", resp.GetRebasedFrom(), m)
	}
	if got := strings.Split(e.read("f.txt"), "\n")[24]; got != "twenty" {
		t.Errorf("line 25 = %q", got)
	}
}
