package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/workspace"
)

// historyEngine is an engine over a new workspace of files, with a history
// in a directory of its own outside the workspace, on a clock the test
// moves.
func historyEngine(t *testing.T, files map[string]string) (*Engine, *history.Log, *time.Time) {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root, workspace.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	log, err := history.Open(filepath.Join(t.TempDir(), "history"), history.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e := New(ws, WithHistory(log))
	t.Cleanup(func() {
		e.Shutdown()
		log.Close()
		ws.Close()
	})
	return e, log, &now
}

// fileChange is what a server change of path from old to new text records.
func fileChange(path, old, new string) history.File {
	var od, nd *hashline.Document
	f := history.File{Path: path}
	if old != "" {
		od = hashline.ParseText(old)
		f.Before = workspace.Version([]byte(old))
	}
	if new != "" {
		nd = hashline.ParseText(new)
		f.After = workspace.Version([]byte(new))
	}
	f.Hunks = history.HunksOf(od, nd)
	return f
}

func TestRecordGivesTheChangeAnIDUnderTheCallersAgent(t *testing.T) {
	t.Parallel()
	e, log, _ := historyEngine(t, nil)
	ctx := WithAgent(context.Background(), "alice")
	id, err := e.record(ctx, history.Change{Kind: history.KindWrite, RequestID: "r1", Files: []history.File{fileChange("a.txt", "", "one\ntwo\n")}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := log.Get(id.String())
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent != "alice" || c.RequestID != "r1" || c.Kind != history.KindWrite || c.Files[0].Added != 2 {
		t.Fatalf("recorded %+v", c)
	}
	// An agent set by the caller (the external one) is kept.
	id2, err := e.record(ctx, history.Change{Kind: history.KindExternal, Agent: history.External, Files: []history.File{fileChange("a.txt", "one\ntwo\n", "one\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := log.Get(id2.String()); c.Agent != history.External {
		t.Fatalf("agent %q, want %q", c.Agent, history.External)
	}
	// A change the history refuses is an error, and no id.
	if id, err := e.record(ctx, history.Change{Kind: history.KindEdit}); err == nil || !id.IsZero() {
		t.Fatalf("a change of no file: id %v, err %v", id, err)
	}

	// Without a history nothing is recorded, and that is no error.
	plain, _, _ := historyEngine(t, nil)
	plain.opts.history = nil
	if id, err := plain.record(ctx, history.Change{Kind: history.KindWrite, Files: []history.File{fileChange("a.txt", "", "x\n")}}); err != nil || !id.IsZero() {
		t.Fatalf("without a history: id %v, err %v", id, err)
	}
}

// ids lists the entries' agents and paths, newest first, for comparison.
func summary(entries []HistoryEntry) []string {
	var out []string
	for _, e := range entries {
		var paths []string
		for _, f := range e.Files {
			p := f.Path
			if f.From != "" {
				p = f.From + "->" + p
			}
			paths = append(paths, p)
		}
		out = append(out, e.Agent+" "+e.Kind.String()+" "+strings.Join(paths, ","))
	}
	return out
}

func TestHistoryFiltersPagesAndVisibility(t *testing.T) {
	t.Parallel()
	e, _, now := historyEngine(t, map[string]string{"a/x.txt": "x\n", "b/y.txt": "y\n", "a/sub/z.txt": "z\n"})
	ctx := context.Background()
	as := func(agent string) context.Context { return WithAgent(ctx, agent) }
	rec := func(agent string, kind history.Kind, files ...history.File) history.ID {
		t.Helper()
		id, err := e.record(as(agent), history.Change{Kind: kind, Files: files})
		if err != nil {
			t.Fatal(err)
		}
		*now = now.Add(time.Minute)
		return id
	}
	start := *now
	rec("alice", history.KindEdit, fileChange("a/x.txt", "x\n", "x\nx2\n"))
	rec("bob", history.KindEdit, fileChange("b/y.txt", "y\n", "y\ny2\n"))
	rec("alice", history.KindSet, fileChange("a/sub/z.txt", "z\n", "Z\n"), fileChange("b/y.txt", "y\ny2\n", "Y\ny2\n"))
	moveIn := history.File{Path: "a/moved.txt", From: "b/y.txt", Before: workspace.Version([]byte("Y\ny2\n")), After: workspace.Version([]byte("Y\ny2\n"))}
	rec("carol", history.KindMove, moveIn)
	rec(history.External, history.KindExternal, fileChange("a/x.txt", "x\nx2\n", "x\nx2\nx3\n"))

	cases := []struct {
		name string
		req  HistoryRequest
		want []string
	}{
		{"the whole workspace, newest first", HistoryRequest{}, []string{
			"(external) external a/x.txt", "carol move b/y.txt->a/moved.txt", "alice set a/sub/z.txt,b/y.txt", "bob edit b/y.txt", "alice edit a/x.txt"}},
		{"one agent", HistoryRequest{Agent: "alice"}, []string{"alice set a/sub/z.txt,b/y.txt", "alice edit a/x.txt"}},
		{"a file", HistoryRequest{Path: "a/x.txt"}, []string{"(external) external a/x.txt", "alice edit a/x.txt"}},
		{"a file follows its move", HistoryRequest{Path: "a/moved.txt"}, []string{
			"carol move b/y.txt->a/moved.txt", "alice set a/sub/z.txt,b/y.txt", "bob edit b/y.txt"}},
		{"a directory", HistoryRequest{Path: "a/sub"}, []string{"alice set a/sub/z.txt,b/y.txt"}},
		{"a time window", HistoryRequest{Since: start.Add(time.Minute), Until: start.Add(3 * time.Minute)}, []string{
			"alice set a/sub/z.txt,b/y.txt", "bob edit b/y.txt"}},
		{"a token that sees a/ only: sets show its files, a move in is a file appearing", HistoryRequest{
			Visible: func(p string) bool { return strings.HasPrefix(p, "a/") }}, []string{
			"(external) external a/x.txt", "carol move a/moved.txt", "alice set a/sub/z.txt", "alice edit a/x.txt"}},
		{"a token that sees b/ only: a move out is the file leaving", HistoryRequest{
			Visible: func(p string) bool { return strings.HasPrefix(p, "b/") }}, []string{
			"carol move b/y.txt", "alice set b/y.txt", "bob edit b/y.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.History(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(res.Entries); !slices.Equal(got, tc.want) {
				t.Errorf("entries\n got %q\nwant %q", got, tc.want)
			}
			if res.NextPageToken != "" || res.OlderDropped {
				t.Errorf("token %q, older dropped %v on the only page", res.NextPageToken, res.OlderDropped)
			}
		})
	}

	t.Run("the visible ends of moves name no hidden path or version", func(t *testing.T) {
		res, err := e.History(ctx, HistoryRequest{Path: "a", Visible: func(p string) bool { return strings.HasPrefix(p, "a/") }})
		if err != nil {
			t.Fatal(err)
		}
		in := res.Entries[1].Files[0]
		if in.From != "" || in.Before != "" || in.After == "" {
			t.Errorf("a move in: %+v", in)
		}
		res, err = e.History(ctx, HistoryRequest{Visible: func(p string) bool { return strings.HasPrefix(p, "b/") }})
		if err != nil {
			t.Fatal(err)
		}
		out := res.Entries[0].Files[0]
		if out.Path != "b/y.txt" || out.From != "" || out.After != "" || out.Before == "" {
			t.Errorf("a move out: %+v", out)
		}
	})

	t.Run("pages of two, filtered, continue where the last ended", func(t *testing.T) {
		visible := func(p string) bool { return strings.HasPrefix(p, "a/") }
		var got []string
		req := HistoryRequest{MaxEntries: 2, Visible: visible}
		pages := 0
		for {
			res, err := e.History(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(res.Entries) > 2 {
				t.Fatalf("a page of %d entries", len(res.Entries))
			}
			got = append(got, summary(res.Entries)...)
			if res.NextPageToken == "" {
				break
			}
			req.PageToken = res.NextPageToken
		}
		want := []string{"(external) external a/x.txt", "carol move a/moved.txt", "alice set a/sub/z.txt", "alice edit a/x.txt"}
		if !slices.Equal(got, want) || pages != 2 {
			t.Errorf("%d pages of\n %q\nwant 2 of\n %q", pages, got, want)
		}
	})

	t.Run("a token of another query is refused", func(t *testing.T) {
		res, err := e.History(ctx, HistoryRequest{MaxEntries: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.History(ctx, HistoryRequest{MaxEntries: 1, Agent: "bob", PageToken: res.NextPageToken})
		var re *RequestError
		if !errors.As(err, &re) || re.Field != "page_token" {
			t.Fatalf("err = %v, want a page_token refusal", err)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		for _, req := range []HistoryRequest{{MaxEntries: -1}, {Since: start, Until: start}} {
			var re *RequestError
			if _, err := e.History(ctx, req); !errors.As(err, &re) {
				t.Errorf("%+v: err = %v, want a RequestError", req, err)
			}
		}
		if _, err := e.History(ctx, HistoryRequest{Path: "../out"}); !errors.Is(err, workspace.ErrOutsideRoot) {
			t.Errorf("a path outside: err = %v", err)
		}
	})

	t.Run("the diff tags removed and added lines", func(t *testing.T) {
		res, err := e.History(ctx, HistoryRequest{Path: "a/sub/z.txt", Diff: true})
		if err != nil {
			t.Fatal(err)
		}
		h := hashline.Hasher{}
		want := "@@ -1,1 +1,1 @@\n-1:" + h.Sum("z") + "|z\n+1:" + h.Sum("Z") + "|Z\n"
		if f := res.Entries[0].Files[0]; f.Diff != want || f.DiffOmitted || f.Added != 1 || f.Removed != 1 {
			t.Errorf("file %+v, want diff %q", f, want)
		}
	})
}

func TestHistoryOfADirectoryThatIsGone(t *testing.T) {
	t.Parallel()
	e, _, _ := historyEngine(t, nil)
	ctx := WithAgent(context.Background(), "alice")
	for _, p := range []string{"gone/a.txt", "gone/b.txt", "gone/c.txt"} {
		if _, err := e.record(ctx, history.Change{Kind: history.KindWrite, Files: []history.File{fileChange(p, "", "1\n")}}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	req := HistoryRequest{Path: "gone", MaxEntries: 2}
	for {
		res, err := e.History(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, summary(res.Entries)...)
		if res.NextPageToken == "" {
			break
		}
		req.PageToken = res.NextPageToken
	}
	want := []string{"alice write gone/c.txt", "alice write gone/b.txt", "alice write gone/a.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestHistoryAndBlameWithoutAHistory(t *testing.T) {
	t.Parallel()
	e, _, _ := historyEngine(t, map[string]string{"a.txt": "a\n"})
	e.opts.history = nil
	ctx := context.Background()
	if _, err := e.History(ctx, HistoryRequest{}); !errors.Is(err, ErrHistoryOff) {
		t.Errorf("History: %v", err)
	}
	if _, err := e.Blame(ctx, BlameRequest{Path: "a.txt"}); !errors.Is(err, ErrHistoryOff) {
		t.Errorf("Blame: %v", err)
	}
	if _, err := e.ChangePaths("c1-0000000a"); !errors.Is(err, ErrHistoryOff) {
		t.Errorf("ChangePaths: %v", err)
	}
}

func TestChangePaths(t *testing.T) {
	t.Parallel()
	e, _, _ := historyEngine(t, nil)
	ctx := WithAgent(context.Background(), "alice")
	id, err := e.record(ctx, history.Change{Kind: history.KindSet, Files: []history.File{
		fileChange("a.txt", "", "1\n"),
		{Path: "c.txt", From: "b.txt", Before: workspace.Version([]byte("2\n")), After: workspace.Version([]byte("2\n"))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.ChangePaths(id.String())
	if err != nil || !slices.Equal(got, []string{"a.txt", "c.txt", "b.txt"}) {
		t.Fatalf("ChangePaths = %q, %v", got, err)
	}
	for _, tc := range []struct {
		id   string
		want error
	}{
		{"nonsense", history.ErrMalformed},
		{"c99-0000000a", history.ErrUnknown},
	} {
		if _, err := e.ChangePaths(tc.id); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.id, err, tc.want)
		}
	}
}
