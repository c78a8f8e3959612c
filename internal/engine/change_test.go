package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// changeEngine is an engine over a new directory holding files, which
// edits without reading first.
func changeEngine(t *testing.T, files map[string]string, opts ...engine.Option) (*engine.Engine, string) {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(root, workspace.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return engine.New(ws, append([]engine.Option{engine.WithRequireRead(false)}, opts...)...), root
}

// ref is the reference of line n of text.
func ref(text string, n int) string {
	return hashline.ParseText(text).Tagged(hashline.Hasher{}, n, n)[0].Tag()
}

func readFile(t *testing.T, root, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestTheCallsThatChangeFiles runs Edit, Write, Delete, Move and Apply with
// the engine's own types against real files: what each returns, what it
// leaves on disk, and the errors of each, naming the paths they are about.
func TestTheCallsThatChangeFiles(t *testing.T) {
	t.Parallel()
	const text = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"
	zero := 0
	tests := []struct {
		name  string
		call  func(ctx context.Context, e *engine.Engine) (any, error)
		check func(t *testing.T, res any)
		err   string // in the error; "" for none
		disk  map[string]string
	}{
		{
			name: "an edit replaces its line and shows the default context",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Edit(ctx, &engine.EditRequest{Path: "./f.txt", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref(text, 4), Text: "FOUR"}}})
			},
			check: func(t *testing.T, res any) {
				r := res.(*engine.EditResult)
				if r.Path != "f.txt" || r.TotalLines != 8 || r.DryRun || len(r.Replaced) != 1 || r.Replaced[0].Content != "four" {
					t.Errorf("result %+v", r)
				}
				if len(r.Windows) != 1 || r.Windows[0].Start != 1 || r.Windows[0].End != 7 {
					t.Errorf("windows %+v, want lines 1-7 (three lines of context)", r.Windows)
				}
				if want := workspace.Version([]byte(strings.Replace(text, "four", "FOUR", 1))); r.Version != want {
					t.Errorf("version %s, want the new file's %s", r.Version, want)
				}
			},
			disk: map[string]string{"f.txt": strings.Replace(text, "four", "FOUR", 1)},
		},
		{
			name: "an edit with context 0 shows its lines alone",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Edit(ctx, &engine.EditRequest{Path: "f.txt", Context: &zero, Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref(text, 4), Text: "FOUR"}}})
			},
			check: func(t *testing.T, res any) {
				if w := res.(*engine.EditResult).Windows; len(w) != 1 || w[0].Start != 4 || w[0].End != 4 {
					t.Errorf("windows %+v, want line 4 alone", w)
				}
			},
			disk: map[string]string{"f.txt": strings.Replace(text, "four", "FOUR", 1)},
		},
		{
			name: "a dry run writes nothing and names the version it would write",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Edit(ctx, &engine.EditRequest{Path: "f.txt", DryRun: true, Full: true, Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "nine"}}})
			},
			check: func(t *testing.T, res any) {
				r := res.(*engine.EditResult)
				if !r.DryRun || r.Version != workspace.Version([]byte(text+"nine\n")) || len(r.Lines) != 9 {
					t.Errorf("result %+v", r)
				}
			},
			disk: map[string]string{"f.txt": text},
		},
		{
			name: "a negative context is refused",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				n := -1
				return e.Edit(ctx, &engine.EditRequest{Path: "f.txt", Context: &n, Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "x"}}})
			},
			err:  "context -1 is negative",
			disk: map[string]string{"f.txt": text},
		},
		{
			name: "a write creates a file",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Write(ctx, &engine.WriteRequest{Path: "d/new.txt", Content: "a\nb\n", Mode: engine.WriteCreate})
			},
			check: func(t *testing.T, res any) {
				if r := res.(*engine.WriteResult); r.Path != "d/new.txt" || !r.Created || r.TotalLines != 2 || r.Version != workspace.Version([]byte("a\nb\n")) {
					t.Errorf("result %+v", r)
				}
			},
			disk: map[string]string{"f.txt": text, "d/new.txt": "a\nb\n"},
		},
		{
			name: "a write that creates only finds a file there",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Write(ctx, &engine.WriteRequest{Path: "f.txt", Content: "x\n", Mode: engine.WriteCreate})
			},
			err:  "already",
			disk: map[string]string{"f.txt": text},
		},
		{
			name: "a write mode the engine does not know is refused by its number",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Write(ctx, &engine.WriteRequest{Path: "f.txt", Content: "x\n", Mode: engine.WriteMode(7)})
			},
			err:  "unknown write mode 7",
			disk: map[string]string{"f.txt": text},
		},
		{
			name: "a delete removes the file and names its version",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Delete(ctx, &engine.DeleteRequest{Path: "f.txt"})
			},
			check: func(t *testing.T, res any) {
				if r := res.(*engine.DeleteResult); r.Path != "f.txt" || r.Version != workspace.Version([]byte(text)) || r.Directory {
					t.Errorf("result %+v", r)
				}
			},
			disk: map[string]string{"f.txt": "<open " + "f.txt: no such file or directory>"},
		},
		{
			name: "a move onto a file without overwrite is refused",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Move(ctx, &engine.MoveRequest{From: "f.txt", To: "g.txt"})
			},
			err:  "g.txt: a file is already there",
			disk: map[string]string{"f.txt": text, "g.txt": "g\n"},
		},
		{
			name: "a move with overwrite replaces the file and names its version",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Move(ctx, &engine.MoveRequest{From: "f.txt", To: "g.txt", Overwrite: true})
			},
			check: func(t *testing.T, res any) {
				if r := res.(*engine.MoveResult); r.From != "f.txt" || r.To != "g.txt" || r.Version != workspace.Version([]byte(text)) || r.ReplacedVersion != workspace.Version([]byte("g\n")) {
					t.Errorf("result %+v", r)
				}
			},
			disk: map[string]string{"g.txt": text},
		},
		{
			name: "a set of an edit and a write is written whole, under one change set id",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Apply(ctx, &engine.ApplyRequest{Changes: []engine.Change{
					&engine.EditRequest{Path: "f.txt", Edits: []hashline.Edit{{Op: hashline.OpPrepend, Text: "zero"}}},
					&engine.WriteRequest{Path: "h.txt", Content: "h\n"},
				}})
			},
			check: func(t *testing.T, res any) {
				r := res.(*engine.ApplyResult)
				if r.ChangeSet == "" || len(r.Results) != 2 {
					t.Fatalf("result %+v", r)
				}
				if e, ok := r.Results[0].(*engine.EditResult); !ok || e.Version != workspace.Version([]byte("zero\n"+text)) {
					t.Errorf("result 0 %+v", r.Results[0])
				}
				if w, ok := r.Results[1].(*engine.WriteResult); !ok || !w.Created {
					t.Errorf("result 1 %+v", r.Results[1])
				}
			},
			disk: map[string]string{"f.txt": "zero\n" + text, "h.txt": "h\n"},
		},
		{
			name: "a set with a change of no kind is refused",
			call: func(ctx context.Context, e *engine.Engine) (any, error) {
				return e.Apply(ctx, &engine.ApplyRequest{Changes: []engine.Change{&engine.WriteRequest{Path: "h.txt", Content: "h\n"}, nil}})
			},
			err:  "change 1 has none of edit, write, delete or move",
			disk: map[string]string{"f.txt": text, "h.txt": "<open h.txt: no such file or directory>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := changeEngine(t, map[string]string{"f.txt": text, "g.txt": "g\n"})
			res, err := tt.call(engine.WithAgent(context.Background(), "agent"), e)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("error %v, want one saying %q", err, tt.err)
			case tt.check != nil:
				tt.check(t, res)
			}
			for p, want := range tt.disk {
				got := readFile(t, root, p)
				if strings.HasPrefix(want, "<") {
					if !strings.HasPrefix(got, "<") {
						t.Errorf("%s = %q, want it gone", p, got)
					}
				} else if got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
		})
	}
}

// TestAFailureNamesThePathItIsAbout checks that a change of a set that
// fails over another path than the one it names (a move's target) names
// that path, and one that fails over its own names it as given.
func TestAFailureNamesThePathItIsAbout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		move *engine.MoveRequest
		path string // the failure's
		err  error
	}{
		{"a target that is a file", &engine.MoveRequest{From: "./f.txt", To: "./g.txt"}, "g.txt", workspace.ErrExists},
		{"a target that is a directory", &engine.MoveRequest{From: "./f.txt", To: "d"}, "d", workspace.ErrNotRegular},
		{"a target outside the workspace", &engine.MoveRequest{From: "f.txt", To: "../out.txt"}, "../out.txt", workspace.ErrOutsideRoot},
		{"a source that is not there", &engine.MoveRequest{From: "./none.txt", To: "new.txt"}, "./none.txt", workspace.ErrNotFound},
		{"a source of another version", &engine.MoveRequest{From: "./f.txt", To: "new.txt", ExpectedVersion: "v0"}, "./f.txt", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := changeEngine(t, map[string]string{"f.txt": "f\n", "g.txt": "g\n", "d/x.txt": "x\n"})
			_, err := e.Apply(context.Background(), &engine.ApplyRequest{Changes: []engine.Change{
				tt.move,
				&engine.WriteRequest{Path: "h.txt", Content: "h\n"},
			}})
			var set *engine.ChangeSetError
			if !errors.As(err, &set) || len(set.Failures) != 1 {
				t.Fatalf("error %v, want a refused set with one failure", err)
			}
			f := set.Failures[0]
			if f.Index != 0 || f.Path != tt.path {
				t.Errorf("failure of change %d names %q, want change 0 naming %q", f.Index, f.Path, tt.path)
			}
			if tt.err != nil && !errors.Is(f.Err, tt.err) {
				t.Errorf("failure %v, want %v", f.Err, tt.err)
			}
			if got := readFile(t, root, "h.txt"); !strings.HasPrefix(got, "<") {
				t.Errorf("h.txt was written (%q) by a refused set", got)
			}
		})
	}
}

// TestTheResponseSizeIsTheFacesMeasure checks that an edit's result is
// measured by the function the face gives (WithResponseSize), before
// anything is written, and that without one no size is checked.
func TestTheResponseSizeIsTheFacesMeasure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		size    func(any) int
		refused bool
	}{
		{"no measure", nil, false},
		{"under the limit", func(r any) int {
			if _, ok := r.(*engine.EditResult); !ok {
				panic("not an edit result")
			}
			return engine.DefaultMaxResponseBytes
		}, false},
		{"over the limit", func(any) int { return engine.DefaultMaxResponseBytes + 1 }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, root := changeEngine(t, map[string]string{"f.txt": "f\n"}, engine.WithResponseSize(tt.size))
			_, err := e.Edit(context.Background(), &engine.EditRequest{Path: "f.txt", Edits: []hashline.Edit{{Op: hashline.OpAppend, Text: "g"}}})
			if tt.refused != (err != nil) {
				t.Fatalf("error %v, want refused %v", err, tt.refused)
			}
			want := "f\ng\n"
			if tt.refused {
				want = "f\n"
				if !errors.Is(err, workspace.ErrTooLarge) || !strings.Contains(err.Error(), "nothing was written") {
					t.Errorf("error %v, want TOO_LARGE saying nothing was written", err)
				}
			}
			if got := readFile(t, root, "f.txt"); got != want {
				t.Errorf("f.txt = %q, want %q", got, want)
			}
		})
	}
}
