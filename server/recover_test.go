package server_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// record writes the intent record of steps, as commitSet does.
func record(t *testing.T, log *state.Intents, id string, steps []workspace.Step) {
	t.Helper()
	rec := state.Intent{ID: id}
	for _, s := range steps {
		op := "rename"
		if s.Kind == workspace.StepRemove {
			op = "remove"
		}
		rec.Steps = append(rec.Steps, state.IntentStep{Op: op, Path: s.Path, From: s.From, To: s.To, Version: s.Version, New: s.New, Replaces: s.Replaces})
	}
	if _, err := log.Record(rec); err != nil {
		t.Fatal(err)
	}
}

func recoverEnv(t *testing.T) (root string, ws *workspace.Workspace, log *state.Intents) {
	t.Helper()
	root = t.TempDir()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	sd, err := state.Open(t.TempDir(), root)
	if err != nil {
		t.Fatal(err)
	}
	if log, err = sd.Intents(true); err != nil {
		t.Fatal(err)
	}
	return root, ws, log
}

func put(t *testing.T, root, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(root, p string) string {
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// A set whose commit failed keeps its record while the server runs on;
// agents then change its files. The next start must not put the set's
// old staged content over their changes: each step is redone only over
// what the set replaced.
func TestRecoverNeverOverwritesAChangeMadeAfterTheSet(t *testing.T) {
	v := func(s string) string { return workspace.Version([]byte(s)) }
	cases := []struct {
		name    string
		setup   func(t *testing.T, root string, ws *workspace.Workspace) workspace.Step
		later   func(t *testing.T, root string)
		path    string
		want    string
		skipped int
	}{
		{
			name: "an edited file keeps the edit made after the set",
			setup: func(t *testing.T, root string, ws *workspace.Workspace) workspace.Step {
				put(t, root, "a.txt", "old\n")
				st, err := ws.Stage("a.txt", []byte("set's\n"), workspace.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return st.Step(v("old\n"))
			},
			later:   func(t *testing.T, root string) { put(t, root, "a.txt", "agent's edit\n") },
			path:    "a.txt",
			want:    "agent's edit\n",
			skipped: 1,
		},
		{
			name: "a file the set created, created by someone else since, keeps their content",
			setup: func(t *testing.T, root string, ws *workspace.Workspace) workspace.Step {
				st, err := ws.Stage("n.txt", []byte("set's\n"), workspace.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return st.Step("")
			},
			later:   func(t *testing.T, root string) { put(t, root, "n.txt", "theirs\n") },
			path:    "n.txt",
			want:    "theirs\n",
			skipped: 1,
		},
		{
			name: "a move's target, created since, is not replaced",
			setup: func(t *testing.T, root string, ws *workspace.Workspace) workspace.Step {
				put(t, root, "m.txt", "moved\n")
				return workspace.Step{Kind: workspace.StepRename, Path: "m.txt", From: "m.txt", To: "m2.txt", Version: v("moved\n"), New: v("moved\n")}
			},
			later:   func(t *testing.T, root string) { put(t, root, "m2.txt", "theirs\n") },
			path:    "m2.txt",
			want:    "theirs\n",
			skipped: 1,
		},
		{
			name: "an untouched file still gets the set's content",
			setup: func(t *testing.T, root string, ws *workspace.Workspace) workspace.Step {
				put(t, root, "a.txt", "old\n")
				st, err := ws.Stage("a.txt", []byte("set's\n"), workspace.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return st.Step(v("old\n"))
			},
			later: func(*testing.T, string) {},
			path:  "a.txt",
			want:  "set's\n",
		},
		{
			name: "a file put where the set removed an empty directory is kept",
			setup: func(t *testing.T, root string, ws *workspace.Workspace) workspace.Step {
				os.Mkdir(filepath.Join(root, "d"), 0o755)
				return workspace.Step{Kind: workspace.StepRemove, Path: "d", To: "d"}
			},
			later: func(t *testing.T, root string) {
				os.Remove(filepath.Join(root, "d"))
				put(t, root, "d", "a file now\n")
			},
			path:    "d",
			want:    "a file now\n",
			skipped: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, ws, log := recoverEnv(t)
			record(t, log, "set1", []workspace.Step{tc.setup(t, root, ws)})
			tc.later(t, root)
			r, err := engine.Recover(ws, log, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if got := get(root, tc.path); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.path, got, tc.want)
			}
			if r.Sets != 1 || r.Skipped != tc.skipped {
				t.Errorf("Recover = %+v, want 1 set and %d skipped", r, tc.skipped)
			}
			if left, _ := os.ReadDir(log.Dir()); len(left) != 0 {
				t.Errorf("the record is still there")
			}
		})
	}
}

// A staged content whose temp file was removed (swept) before its rename
// cannot be told from one renamed by its temp file alone: with the new
// version recorded, Recover sees the target does not hold it, leaves the
// target as it is, and counts the set as unfinished.
func TestRecoverCountsASetWhoseStagedContentWasSweptAsUnfinished(t *testing.T) {
	root, ws, log := recoverEnv(t)
	put(t, root, "a.txt", "old a\n")
	put(t, root, "b.txt", "old b\n")
	sa, err := ws.Stage("a.txt", []byte("new a\n"), workspace.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := ws.Stage("b.txt", []byte("new b\n"), workspace.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	record(t, log, "set1", []workspace.Step{
		sa.Step(workspace.Version([]byte("old a\n"))),
		sb.Step(workspace.Version([]byte("old b\n"))),
	})
	if err := os.Remove(filepath.Join(root, sa.Temp)); err != nil {
		t.Fatal(err)
	}
	r, err := engine.Recover(ws, log, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if r != (engine.Recovered{Sets: 1, Unfinished: 1}) {
		t.Errorf("Recover = %+v, want 1 set, unfinished", r)
	}
	if got := get(root, "a.txt"); got != "old a\n" {
		t.Errorf("a.txt = %q, want it as it was", got)
	}
	// The set's other file is finished: its content was committed.
	if got := get(root, "b.txt"); got != "new b\n" {
		t.Errorf("b.txt = %q, want the set's content", got)
	}
}

// A move with overwrite onto a file that already holds the same content
// leaves the target at the version the move puts there before the rename
// is done. Replay must still do the rename: the source is still there,
// with the version moved, so the move was not done.
func TestRecoverFinishesAMoveOntoAnIdenticalFile(t *testing.T) {
	root, ws, log := recoverEnv(t)
	put(t, root, "a.txt", "same\n")
	put(t, root, "b.txt", "same\n")
	v := workspace.Version([]byte("same\n"))
	record(t, log, "set1", []workspace.Step{{Kind: workspace.StepRename, Path: "a.txt", From: "a.txt", To: "b.txt", Version: v, New: v, Replaces: v}})
	r, err := engine.Recover(ws, log, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if r.Sets != 1 || r.Skipped != 0 || r.Unfinished != 0 {
		t.Errorf("Recover = %+v, want 1 set finished", r)
	}
	if _, err := os.Lstat(filepath.Join(root, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt is still there after its move was replayed (err %v)", err)
	}
	if got := get(root, "b.txt"); got != "same\n" {
		t.Errorf("b.txt = %q, want the moved content", got)
	}
}
