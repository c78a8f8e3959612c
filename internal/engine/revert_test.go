package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
)

// numbered is a file of n lines, "line 1" to "line n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// replaced is content with lines from..to (1-based, inclusive) replaced by
// the lines of text.
func replaced(content string, from, to int, text string) string {
	lines := strings.SplitAfter(content, "\n")
	lines = lines[:len(lines)-1] // the "" after the final newline
	return strings.Join(lines[:from-1], "") + text + strings.Join(lines[to:], "")
}

// as is ctx naming agent.
func as(ctx context.Context, agent string) context.Context { return engine.WithAgent(ctx, agent) }

// editLines has the agent of ctx read p and replace its lines from..to
// with text, and returns the id of the change.
func editLines(t *testing.T, e *engine.Engine, ctx context.Context, p string, from, to int, text string) string {
	t.Helper()
	r := read(t, e, ctx, p)
	if _, err := e.Edit(ctx, &engine.EditRequest{Path: p, Edits: []hashline.Edit{{Op: hashline.OpReplace,
		Start: r.Lines[from-1].Tag(), End: r.Lines[to-1].Tag(), Text: text}}}); err != nil {
		t.Fatal(err)
	}
	return newest(t, e)
}

// newest is the id of the newest change of the history.
func newest(t *testing.T, e *engine.Engine) string {
	t.Helper()
	got := entries(t, e, engine.HistoryRequest{MaxEntries: 1})
	if len(got) == 0 {
		t.Fatal("the history is empty")
	}
	return got[0].ID
}

func onDisk(t *testing.T, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	if errors.Is(err, os.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// revertEntry checks that the newest change of the history is the revert
// res names, of change of, by agent, and returns it.
func revertEntry(t *testing.T, e *engine.Engine, res *engine.RevertResult, of, agent string) engine.HistoryEntry {
	t.Helper()
	got := entries(t, e, engine.HistoryRequest{MaxEntries: 1})[0]
	if res.ChangeID == "" || got.ID != res.ChangeID || got.Kind != history.KindRevert || got.Reverts != of || got.Agent != agent || res.Reverted != of {
		t.Fatalf("the revert's entry is %+v (result %+v), want a revert of %s by %s", got, res, of, agent)
	}
	return got
}

// caches runs f with the snapshot cache on, and off: then the version a
// change left is rebuilt from the history.
var caches = []struct {
	name string
	opts []engine.Option
}{{"cached", nil}, {"rebuilt", []engine.Option{engine.WithSnapshotCacheBytes(0)}}}

// TestRevertKeepsAnotherAgentsLaterChange: A edits lines 10-12, B lines
// 40-45, A reverts its change: A's lines are as they were, B's stay, and
// the revert is a change of A's that names the one it undid.
func TestRevertKeepsAnotherAgentsLaterChange(t *testing.T) {
	t.Parallel()
	for _, c := range caches {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			orig := numbered(60)
			e, ctx, root := withHistory(t, map[string]string{"f.txt": orig}, c.opts...)
			a, b := as(ctx, "A"), as(ctx, "B")
			idA := editLines(t, e, a, "f.txt", 10, 12, "A ten\nA eleven\nA eleven and a half\n")
			editLines(t, e, b, "f.txt", 40, 45, "B forty\n")
			res, err := e.Revert(a, engine.RevertRequest{ChangeID: idA})
			if err != nil {
				t.Fatal(err)
			}
			want := replaced(orig, 40, 45, "B forty\n")
			if got := onDisk(t, root, "f.txt"); got != want {
				t.Fatalf("after the revert:\n%s\nwant:\n%s", got, want)
			}
			entry := revertEntry(t, e, res, idA, "A")
			if len(res.Results) != 1 || len(entry.Files) != 1 || entry.Files[0].Added != 3 || entry.Files[0].Removed != 3 {
				t.Fatalf("result %+v, entry %+v", res, entry)
			}
			er := res.Results[0].(*engine.EditResult)
			if er.Version != entry.Files[0].After || !strings.Contains(er.TaggedDiff, "|line 10") || er.DryRun {
				t.Fatalf("edit result %+v", er)
			}
		})
	}
}

// TestRevertOfLinesChangedSinceIsAConflict: A edits lines 10-12, C lines
// 25-26, B line 11: A's revert is refused naming B's change and its agent
// (not C's), with the lines as they are now, and the file is left byte for
// byte as it was.
func TestRevertOfLinesChangedSinceIsAConflict(t *testing.T) {
	t.Parallel()
	for _, c := range caches {
		for _, dry := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/dry=%v", c.name, dry), func(t *testing.T) {
				t.Parallel()
				e, ctx, root := withHistory(t, map[string]string{"f.txt": numbered(30)}, c.opts...)
				a, b := as(ctx, "A"), as(ctx, "B")
				idA := editLines(t, e, a, "f.txt", 10, 12, "A ten\nA eleven\nA twelve\n")
				editLines(t, e, as(ctx, "C"), "f.txt", 25, 26, "C\n") // elsewhere: not named
				idB := editLines(t, e, b, "f.txt", 11, 11, "B eleven\n")
				before := onDisk(t, root, "f.txt")
				_, err := e.Revert(a, engine.RevertRequest{ChangeID: idA, DryRun: dry})
				var ce *engine.RevertConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("Revert = %v, want a RevertConflictError", err)
				}
				if ce.ID != idA || len(ce.Later) != 1 || ce.Later[0] != (engine.LaterChange{ID: idB, Agent: "B", Path: "f.txt"}) {
					t.Fatalf("conflict %+v, want B's change %s named", ce, idB)
				}
				if len(ce.Files) != 1 || ce.Files[0].Lines == nil || !strings.Contains(ce.Files[0].What, idB+" (agent B)") {
					t.Fatalf("files %+v", ce.Files)
				}
				msg := err.Error()
				if !strings.Contains(msg, ">>> 11:"+hashline.Hasher{}.Sum("B eleven")+"|B eleven") || !strings.Contains(msg, "nothing was written") {
					t.Fatalf("message does not show the line B wrote, marked, with its fresh tag:\n%s", msg)
				}
				if got := onDisk(t, root, "f.txt"); got != before {
					t.Fatalf("the file changed:\n%s", got)
				}
				if got := newest(t, e); got != idB {
					t.Fatalf("the newest change is %s, want B's %s: a refused revert records nothing", got, idB)
				}
			})
		}
	}
}

// TestRevertOfASetIsWhole: a set's revert undoes all its files at once,
// past an edit of one of them elsewhere, as one set; a conflict in one of
// them writes none.
func TestRevertOfASetIsWhole(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": numbered(20), "b.txt": numbered(20), "c.txt": numbered(20)}
	setUp := func(t *testing.T, opts ...engine.Option) (*engine.Engine, context.Context, string, string) {
		e, ctx, root := withHistory(t, files, opts...)
		var changes []engine.Change
		for _, p := range []string{"a.txt", "b.txt", "c.txt"} {
			r := read(t, e, ctx, p)
			changes = append(changes, &engine.EditRequest{Path: p, Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: r.Lines[4].Tag(), Text: "set " + p + "\n"}}})
		}
		if _, err := e.Apply(ctx, &engine.ApplyRequest{Changes: changes}); err != nil {
			t.Fatal(err)
		}
		return e, ctx, root, newest(t, e)
	}
	for _, c := range caches {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, ctx, root, set := setUp(t, c.opts...)
			editLines(t, e, as(ctx, "B"), "b.txt", 15, 16, "B\n")
			res, err := e.Revert(ctx, engine.RevertRequest{ChangeID: set})
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range map[string]string{"a.txt": numbered(20), "b.txt": replaced(numbered(20), 15, 16, "B\n"), "c.txt": numbered(20)} {
				if got := onDisk(t, root, p); got != want {
					t.Errorf("%s:\n%s\nwant\n%s", p, got, want)
				}
			}
			if entry := revertEntry(t, e, res, set, "agent"); len(entry.Files) != 3 || len(res.Results) != 3 {
				t.Fatalf("entry %+v", entry)
			}
		})
	}
	t.Run("conflict", func(t *testing.T) {
		t.Parallel()
		e, ctx, root, set := setUp(t)
		idB := editLines(t, e, as(ctx, "B"), "c.txt", 5, 5, "B five\n")
		before := map[string]string{}
		for _, p := range []string{"a.txt", "b.txt", "c.txt"} {
			before[p] = onDisk(t, root, p)
		}
		_, err := e.Revert(ctx, engine.RevertRequest{ChangeID: set})
		var ce *engine.RevertConflictError
		if !errors.As(err, &ce) || len(ce.Later) != 1 || ce.Later[0].ID != idB || ce.Files[0].Path != "c.txt" || ce.Files[0].Index != 2 {
			t.Fatalf("Revert = %v (%+v), want a conflict in c.txt naming %s", err, ce, idB)
		}
		for p, want := range before {
			if got := onDisk(t, root, p); got != want {
				t.Errorf("%s changed:\n%s", p, got)
			}
		}
	})
}

// TestRevertOfDeletesMovesAndCreations: a deleted file is written again
// where its path is free, a moved one moved back where it is unchanged
// and its old path free, a created one deleted where it is unchanged;
// otherwise the revert is refused naming the later change in the way.
func TestRevertOfDeletesMovesAndCreations(t *testing.T) {
	t.Parallel()
	const body = "one\ntwo\nthree\n"
	cases := []struct {
		name  string
		opts  []engine.Option
		setup func(t *testing.T, e *engine.Engine, ctx context.Context) // makes the change to revert
		since func(t *testing.T, e *engine.Engine, ctx context.Context) // B's changes after it; nil for none
		want  map[string]string                                         // the files after the revert; nil: refused
		path  string                                                    // where a refusal meets B's change
		warn  bool
	}{
		{name: "delete", setup: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			read(t, e, ctx, "f.txt")
			mustDo(t, func() error { _, err := e.Delete(ctx, &engine.DeleteRequest{Path: "f.txt"}); return err })
		}, want: map[string]string{"f.txt": body}},
		{name: "delete of a file no longer held", opts: []engine.Option{engine.WithSnapshotCacheBytes(0)}, setup: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error { _, err := e.Delete(ctx, &engine.DeleteRequest{Path: "crlf.txt"}); return err })
		}, want: map[string]string{"crlf.txt": "x\ny\n"}, warn: true},
		{name: "delete, path taken again", setup: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error { _, err := e.Delete(ctx, &engine.DeleteRequest{Path: "f.txt"}); return err })
		}, since: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error {
				_, err := e.Write(ctx, &engine.WriteRequest{Path: "f.txt", Content: "new\n"})
				return err
			})
		}, path: "f.txt"},
		{name: "move", setup: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error { _, err := e.Move(ctx, &engine.MoveRequest{From: "f.txt", To: "d/g.txt"}); return err })
		}, want: map[string]string{"f.txt": body, "d/g.txt": "<none>"}},
		{name: "move, file changed since", setup: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error { _, err := e.Move(ctx, &engine.MoveRequest{From: "f.txt", To: "g.txt"}); return err })
		}, since: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			editLines(t, e, ctx, "g.txt", 2, 2, "TWO\n")
		}, path: "g.txt"},
		{name: "move, old path taken", setup: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error { _, err := e.Move(ctx, &engine.MoveRequest{From: "f.txt", To: "g.txt"}); return err })
		}, since: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error {
				_, err := e.Write(ctx, &engine.WriteRequest{Path: "f.txt", Content: "new\n"})
				return err
			})
		}, path: "f.txt"},
		{name: "create", setup: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error {
				_, err := e.Write(ctx, &engine.WriteRequest{Path: "n/new.txt", Content: "fresh\n"})
				return err
			})
		}, want: map[string]string{"n/new.txt": "<none>", "f.txt": body}},
		{name: "create, changed since", setup: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			mustDo(t, func() error {
				_, err := e.Write(ctx, &engine.WriteRequest{Path: "new.txt", Content: "fresh\n"})
				return err
			})
		}, since: func(t *testing.T, e *engine.Engine, ctx context.Context) {
			editLines(t, e, ctx, "new.txt", 1, 1, "changed\n")
		}, path: "new.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, ctx, root := withHistory(t, map[string]string{"f.txt": body, "crlf.txt": "x\r\ny\r\n"}, c.opts...)
			c.setup(t, e, ctx)
			id := newest(t, e)
			var idB string
			if c.since != nil {
				c.since(t, e, as(ctx, "B"))
				idB = newest(t, e)
			}
			snapshot := map[string]string{}
			for _, p := range []string{"f.txt", "g.txt", "d/g.txt", "new.txt", "n/new.txt", "crlf.txt"} {
				snapshot[p] = onDisk(t, root, p)
			}
			res, err := e.Revert(ctx, engine.RevertRequest{ChangeID: id})
			if c.want == nil {
				var ce *engine.RevertConflictError
				if !errors.As(err, &ce) || len(ce.Later) == 0 || ce.Later[len(ce.Later)-1] != (engine.LaterChange{ID: idB, Agent: "B", Path: c.path}) {
					t.Fatalf("Revert = %v (%+v), want a conflict at %s naming %s", err, ce, c.path, idB)
				}
				for p, want := range snapshot {
					if got := onDisk(t, root, p); got != want {
						t.Errorf("%s changed: %q, was %q", p, got, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range c.want {
				if got := onDisk(t, root, p); got != want {
					t.Errorf("%s: %q, want %q", p, got, want)
				}
			}
			revertEntry(t, e, res, id, "agent")
			if (len(res.Warnings) > 0) != c.warn {
				t.Errorf("warnings %q, want some: %v", res.Warnings, c.warn)
			}
		})
	}
}

func mustDo(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}

// TestRevertOfARevertOfARevert: each revert is a change of its own that
// can be reverted, back and forth.
func TestRevertOfARevertOfARevert(t *testing.T) {
	t.Parallel()
	for _, c := range caches {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			orig := numbered(12)
			e, ctx, root := withHistory(t, map[string]string{"f.txt": orig}, c.opts...)
			id := editLines(t, e, ctx, "f.txt", 3, 4, "three\n")
			edited := onDisk(t, root, "f.txt")
			editLines(t, e, as(ctx, "B"), "f.txt", 10, 10, "B ten\n")
			// B's line 10 is the original line 11: lines 3-4 are one line now.
			want := []string{replaced(orig, 11, 11, "B ten\n"), replaced(edited, 10, 10, "B ten\n"), replaced(orig, 11, 11, "B ten\n")}
			for i, w := range want {
				res, err := e.Revert(ctx, engine.RevertRequest{ChangeID: id})
				if err != nil {
					t.Fatalf("revert %d: %v", i+1, err)
				}
				if got := onDisk(t, root, "f.txt"); got != w {
					t.Fatalf("after revert %d:\n%s\nwant\n%s", i+1, got, w)
				}
				revertEntry(t, e, res, id, "agent")
				id = res.ChangeID
			}
		})
	}
}

// TestRevertDryRunWritesNothing: a dry run returns the tagged diff the
// revert would make, and neither the file nor the history changes.
func TestRevertDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	e, ctx, root := withHistory(t, map[string]string{"f.txt": numbered(10)})
	id := editLines(t, e, ctx, "f.txt", 5, 5, "five\n")
	before := onDisk(t, root, "f.txt")
	res, err := e.Revert(ctx, engine.RevertRequest{ChangeID: id, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	er := res.Results[0].(*engine.EditResult)
	h := hashline.Hasher{}
	if !res.DryRun || res.ChangeID != "" || !er.DryRun || !strings.Contains(er.TaggedDiff, "+5:"+h.Sum("line 5")+"|line 5") || !strings.Contains(er.TaggedDiff, "-five") {
		t.Fatalf("dry run %+v, diff:\n%s", res, er.TaggedDiff)
	}
	if got := onDisk(t, root, "f.txt"); got != before {
		t.Fatalf("a dry run wrote:\n%s", got)
	}
	if got := newest(t, e); got != id {
		t.Fatalf("a dry run recorded %s", got)
	}
}

// TestRevertRefusesIDsItCannotName: a string that is no id, an id of no
// change of this history, one it let go, and a change whose lines it does
// not hold are refused with the error that says which.
func TestRevertRefusesIDsItCannotName(t *testing.T) {
	t.Parallel()
	var now time.Time
	clock := func() time.Time { return now }
	now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log, err := history.Open(filepath.Join(t.TempDir(), "history"), history.Options{MaxAge: time.Hour, Now: func() time.Time { return clock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	e, ctx := newEngine(t, map[string]string{"f.txt": "a\nb\n"}, engine.WithHistory(log), engine.WithSnapshotCacheBytes(0))
	old := editLines(t, e, ctx, "f.txt", 1, 1, "A\n")
	now = now.Add(2 * time.Hour)
	root := e.Workspace().Dir()
	writeFile(t, root, "f.txt", "A\nB\n")
	read(t, e, ctx, "f.txt") // an external change, whose earlier content is not held
	external := newest(t, e)
	x, _ := history.ParseID(external)
	other := fmt.Sprintf("c%d-%s", x.Seq()+5, strings.Split(external, "-")[1])
	for _, c := range []struct {
		id   string
		want error
	}{
		{"bogus", history.ErrMalformed},
		{"c0-12345678", history.ErrMalformed},
		{other, history.ErrUnknown},
		{old, history.ErrExpired},
		{external, engine.ErrNotRevertible},
	} {
		if _, err := e.Revert(ctx, engine.RevertRequest{ChangeID: c.id}); !errors.Is(err, c.want) {
			t.Errorf("Revert(%q) = %v, want %v", c.id, err, c.want)
		}
	}
	if got := onDisk(t, root, "f.txt"); got != "A\nB\n" {
		t.Fatalf("the file changed: %q", got)
	}
}

// TestRevertDoesNotFollowAFileMovedOrDeletedSince: the file a change
// edited is gone from its path: moved or deleted by a later change,
// which the refusal names and says how to undo.
func TestRevertDoesNotFollowAFileMovedOrDeletedSince(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		since func(e *engine.Engine, ctx context.Context) error
		what  string
	}{
		{"moved", func(e *engine.Engine, ctx context.Context) error {
			_, err := e.Move(ctx, &engine.MoveRequest{From: "f.txt", To: "g.txt"})
			return err
		}, "moved it to g.txt"},
		{"deleted", func(e *engine.Engine, ctx context.Context) error {
			_, err := e.Delete(ctx, &engine.DeleteRequest{Path: "f.txt"})
			return err
		}, "deleted it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, ctx, _ := withHistory(t, map[string]string{"f.txt": numbered(5)})
			id := editLines(t, e, ctx, "f.txt", 2, 2, "two\n")
			mustDo(t, func() error { return c.since(e, as(ctx, "B")) })
			idB := newest(t, e)
			_, err := e.Revert(ctx, engine.RevertRequest{ChangeID: id})
			var ce *engine.RevertConflictError
			if !errors.As(err, &ce) || len(ce.Later) != 1 || ce.Later[0].ID != idB || !strings.Contains(ce.Files[0].What, c.what) ||
				!strings.Contains(err.Error(), "revert "+idB+" first") {
				t.Fatalf("Revert = %v, want a conflict naming %s that %s", err, idB, c.what)
			}
		})
	}
}

// TestRevertAfterTheFileWasRewrittenWhole: a Write that replaced the whole
// file meets every line, and a file emptied by the change and written
// again meets its new lines; a CRLF file keeps its line endings.
func TestRevertKeepsLineEndingsAndMeetsWholeRewrites(t *testing.T) {
	t.Parallel()
	e, ctx, root := withHistory(t, map[string]string{"crlf.txt": "a\r\nb\r\nc\r\n", "w.txt": numbered(6)})
	id := editLines(t, e, ctx, "crlf.txt", 2, 2, "B\n")
	if _, err := e.Revert(ctx, engine.RevertRequest{ChangeID: id}); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(t, root, "crlf.txt"); got != "a\r\nb\r\nc\r\n" {
		t.Fatalf("crlf.txt: %q", got)
	}
	id = editLines(t, e, ctx, "w.txt", 3, 3, "three\n")
	mustDo(t, func() error {
		_, err := e.Write(as(ctx, "B"), &engine.WriteRequest{Path: "w.txt", Content: "all new\n"})
		return err
	})
	idB := newest(t, e)
	_, err := e.Revert(ctx, engine.RevertRequest{ChangeID: id})
	var ce *engine.RevertConflictError
	if !errors.As(err, &ce) || len(ce.Later) != 1 || ce.Later[0].ID != idB {
		t.Fatalf("Revert = %v, want a conflict naming the write %s", err, idB)
	}
	// Emptied, then written again.
	read(t, e, ctx, "w.txt")
	mustDo(t, func() error {
		_, err := e.Write(ctx, &engine.WriteRequest{Path: "w.txt", Content: ""})
		return err
	})
	emptied := newest(t, e)
	mustDo(t, func() error {
		_, err := e.Edit(as(ctx, "B"), &engine.EditRequest{Path: "w.txt", Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "B's\n"}}})
		return err
	})
	idB = newest(t, e)
	_, err = e.Revert(ctx, engine.RevertRequest{ChangeID: emptied})
	if !errors.As(err, &ce) || len(ce.Later) != 1 || ce.Later[0].ID != idB {
		t.Fatalf("Revert = %v, want a conflict naming %s", err, idB)
	}
	if got := onDisk(t, root, "w.txt"); got != "B's\n" {
		t.Fatalf("w.txt: %q", got)
	}
}
