package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/watch"
)

// withHistory is newEngine with a change history in a directory outside
// the workspace.
func withHistory(t *testing.T, files map[string]string, opts ...engine.Option) (*engine.Engine, context.Context, string) {
	t.Helper()
	log, err := history.Open(filepath.Join(t.TempDir(), "history"), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	e, ctx := newEngine(t, files, append([]engine.Option{engine.WithHistory(log)}, opts...)...)
	return e, ctx, e.Workspace().Dir()
}

func writeFile(t *testing.T, root, p, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, e *engine.Engine, ctx context.Context, p string) *engine.ReadResult {
	t.Helper()
	r, err := e.Read(ctx, engine.ReadRequest{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func entries(t *testing.T, e *engine.Engine, req engine.HistoryRequest) []engine.HistoryEntry {
	t.Helper()
	res, err := e.History(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res.Entries
}

func TestReadRecordsAnExternalChangeWithItsHunks(t *testing.T) {
	t.Parallel()
	const before = "one\ntwo\nthree\nfour\n"
	const after = "one\nTWO\nthree\nfour\nfive\n"
	e, ctx, root := withHistory(t, map[string]string{"f.txt": before})
	first := read(t, e, ctx, "f.txt")
	if got := entries(t, e, engine.HistoryRequest{}); len(got) != 0 {
		t.Fatalf("a first read recorded %+v: the engine knew no version before", got)
	}
	writeFile(t, root, "f.txt", after)
	second := read(t, e, ctx, "f.txt")
	read(t, e, ctx, "f.txt") // the same bytes again: nothing more to record

	got := entries(t, e, engine.HistoryRequest{Path: "f.txt", Diff: true})
	if len(got) != 1 {
		t.Fatalf("history = %+v, want the one external change", got)
	}
	c := got[0]
	if c.Agent != history.External || c.Kind != history.KindExternal || c.ID == "" {
		t.Fatalf("entry %+v", c)
	}
	f := c.Files[0]
	h := hashline.Hasher{}
	wantDiff := "@@ -2,1 +2,1 @@\n-2:" + h.Sum("two") + "|two\n+2:" + h.Sum("TWO") + "|TWO\n" +
		"@@ -4,0 +5,1 @@\n+5:" + h.Sum("five") + "|five\n"
	if f.Path != "f.txt" || f.Before != first.Version || f.After != second.Version || f.Added != 2 || f.Removed != 1 || f.Diff != wantDiff || f.DiffOmitted {
		t.Fatalf("file %+v\nwant diff %q", f, wantDiff)
	}

	b, err := e.Blame(ctx, engine.BlameRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != second.Version || b.TotalLines != 5 || len(b.Lines) != 5 {
		t.Fatalf("blame %+v", b)
	}
	for i, l := range b.Lines {
		wrote := l.Number == 2 || l.Number == 5
		if l.Number != i+1 || l.Hash != second.Lines[i].Hash || l.Content != second.Lines[i].Content {
			t.Errorf("line %d is %+v, want Read's %+v", i+1, l.TaggedLine, second.Lines[i])
		}
		if wrote && (l.ChangeID != c.ID || l.Agent != history.External || !l.Time.Equal(c.Time) || l.BeforeHistory) ||
			!wrote && (l.ChangeID != "" || l.Agent != "" || !l.BeforeHistory) {
			t.Errorf("line %d: %+v", l.Number, l)
		}
	}
	page, err := e.Blame(ctx, engine.BlameRequest{Path: "f.txt", Offset: 2, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Lines) != 2 || page.Lines[0].Number != 2 || page.Lines[0].ChangeID != c.ID || !page.Lines[1].BeforeHistory ||
		!page.Truncated || page.NextOffset != 4 {
		t.Fatalf("page %+v", page)
	}
}

func TestGrepRecordsAnExternalChange(t *testing.T) {
	t.Parallel()
	e, ctx, root := withHistory(t, map[string]string{"f.txt": "alpha\nbeta\n"})
	read(t, e, ctx, "f.txt")
	writeFile(t, root, "f.txt", "alpha\nBETA\n")
	_, err := e.Grep(ctx, e.Workspace().Root().FS(), engine.GrepRequest{Pattern: "alpha"}, func(engine.GrepFile) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	got := entries(t, e, engine.HistoryRequest{})
	if len(got) != 1 || got[0].Agent != history.External || got[0].Files[0].Added != 1 {
		t.Fatalf("history = %+v, want the external change Grep found", got)
	}
}

// An external change whose earlier content the engine no longer holds is
// recorded without hunks: the history says the file changed, blame
// claims no line for it.
func TestAnExternalChangeWithoutTheOldSnapshotHasNoHunks(t *testing.T) {
	t.Parallel()
	e, ctx, root := withHistory(t, map[string]string{"f.txt": "a\nb\n"}, engine.WithSnapshotCacheBytes(0))
	first := read(t, e, ctx, "f.txt")
	writeFile(t, root, "f.txt", "a\nB\n")
	second := read(t, e, ctx, "f.txt")
	got := entries(t, e, engine.HistoryRequest{Diff: true})
	if len(got) != 1 {
		t.Fatalf("history = %+v", got)
	}
	f := got[0].Files[0]
	if f.Before != first.Version || f.After != second.Version || f.Diff != "" || !f.DiffOmitted || f.Added != 0 {
		t.Fatalf("file %+v", f)
	}
	b, err := e.Blame(ctx, engine.BlameRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range b.Lines {
		if !l.BeforeHistory || l.ChangeID != "" {
			t.Errorf("line %+v: want before the history", l)
		}
	}
}

func TestWatchRecordsExternalChangesAndEventsCarryTheirIDs(t *testing.T) {
	t.Parallel()
	e, ctx, root := withHistory(t, map[string]string{"f.txt": "a\nb\n"}, engine.WithWatchDebounce(10*time.Millisecond))
	read(t, e, ctx, "f.txt")
	sub, err := e.Subscribe("")
	if err != nil {
		t.Skipf("no file-system watcher here: %v", err)
	}
	defer e.Unsubscribe(sub)
	next := func() watch.Event {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			if ev, ok := sub.Next(); ok {
				return ev
			}
			select {
			case <-sub.Ready():
			case <-deadline:
				t.Fatal("no event")
			}
		}
	}

	writeFile(t, root, "f.txt", "a\nb\nc\n")
	ev := next()
	got := entries(t, e, engine.HistoryRequest{Diff: true})
	if len(got) != 1 || ev.ChangeID == "" || ev.ChangeID != got[0].ID || !ev.External {
		t.Fatalf("event %+v, history %+v", ev, got)
	}
	if f := got[0].Files[0]; f.Added != 1 || f.Removed != 0 || !strings.Contains(f.Diff, "+3:") {
		t.Fatalf("file %+v", f)
	}
	// A read after the watcher does not record the change again.
	read(t, e, ctx, "f.txt")
	if got := entries(t, e, engine.HistoryRequest{}); len(got) != 1 {
		t.Fatalf("history after a read = %+v", got)
	}

	// A file created outside: every line is the change's.
	writeFile(t, root, "new.txt", "x\ny\n")
	ev = next()
	got = entries(t, e, engine.HistoryRequest{Path: "new.txt"})
	if len(got) != 1 || ev.ChangeID != got[0].ID || got[0].Files[0].Before != "" || got[0].Files[0].Added != 2 {
		t.Fatalf("event %+v, history %+v", ev, got)
	}
	b, err := e.Blame(ctx, engine.BlameRequest{Path: "new.txt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range b.Lines {
		if l.ChangeID != got[0].ID || l.Agent != history.External {
			t.Errorf("line %+v", l)
		}
	}

	// A file deleted outside.
	if err := os.Remove(filepath.Join(root, "f.txt")); err != nil {
		t.Fatal(err)
	}
	ev = next()
	got = entries(t, e, engine.HistoryRequest{Path: "f.txt", Diff: true})
	if len(got) != 2 || ev.ChangeID != got[0].ID || got[0].Files[0].After != "" || got[0].Files[0].Removed != 3 {
		t.Fatalf("event %+v, history %+v", ev, got)
	}
}

func TestOpenKeepsTheHistoryInTheStateDirectoryAcrossRestarts(t *testing.T) {
	t.Parallel()
	root, stateDir := t.TempDir(), t.TempDir()
	writeFile(t, root, "f.txt", "a\n")
	ctx := engine.WithAgent(context.Background(), "agent")
	e, err := engine.Open(engine.Config{Root: root, StateDir: stateDir, NoSweep: true, HistoryBytes: 1 << 20, HistoryAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	read(t, e, ctx, "f.txt")
	writeFile(t, root, "f.txt", "a\nb\n")
	read(t, e, ctx, "f.txt")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(e.StateDir(), "history")); err != nil || !fi.IsDir() {
		t.Fatalf("the state directory's history: %v", err)
	}
	e, err = engine.Open(engine.Config{Root: root, StateDir: stateDir, NoSweep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got := entries(t, e, engine.HistoryRequest{})
	if len(got) != 1 || got[0].Agent != history.External || got[0].Files[0].Path != "f.txt" {
		t.Fatalf("history after a restart = %+v", got)
	}
	// Nothing of the history is in the workspace.
	des, err := os.ReadDir(root)
	if err != nil || len(des) != 1 {
		t.Fatalf("the workspace holds %v (%v)", des, err)
	}
}

func TestDefaultConfigHasTheHistorysBounds(t *testing.T) {
	t.Parallel()
	d := engine.DefaultConfig()
	if d.HistoryBytes != history.DefaultMaxBytes || d.HistoryAge != history.DefaultMaxAge {
		t.Fatalf("DefaultConfig: history bounds %d, %v", d.HistoryBytes, d.HistoryAge)
	}
}
