package server_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

func editChange(path string, edits ...*hashlinev1.FileEdit) *hashlinev1.Change {
	return &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{Path: path, Edits: edits}}}
}

func writeChange(path, content string) *hashlinev1.Change {
	return &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{Path: path, Content: content}}}
}

func deleteChange(path string) *hashlinev1.Change {
	return &hashlinev1.Change{Change: &hashlinev1.Change_Delete{Delete: &hashlinev1.DeleteRequest{Path: path}}}
}

func moveChange(from, to string) *hashlinev1.Change {
	return &hashlinev1.Change{Change: &hashlinev1.Change_Move{Move: &hashlinev1.MoveRequest{From: from, To: to}}}
}

// intentEnv is a server with an intent log in a state directory of its own.
func intentEnv(t *testing.T, opts ...engine.Option) (*env, *state.Intents) {
	t.Helper()
	root := t.TempDir()
	sd, err := state.Open(t.TempDir(), root)
	if err != nil {
		t.Fatal(err)
	}
	log, err := sd.Intents(true)
	if err != nil {
		t.Fatal(err)
	}
	return newEnvIn(t, root, server.GRPCConfig{}, nil, append(opts, engine.WithIntentLog(log))...), log
}

func TestApplyMakesEveryChangeOrNone(t *testing.T) {
	const a, b = "a1\na2\na3\n", "b1\nb2\n"
	t.Run("edits, a write, a delete and a move land together", func(t *testing.T) {
		e, log := intentEnv(t)
		e.seed("a.txt", a)
		e.seed("b.txt", b)
		e.write("old.txt", "old\n")
		e.write("gone.txt", "gone\n")
		resp, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
			editChange("a.txt", client.Replace(tag(a, 2), "", "A2")),
			editChange("b.txt", client.InsertAfter(tag(b, 2), "b3")),
			writeChange("new/c.txt", "c\n"),
			deleteChange("gone.txt"),
			moveChange("old.txt", "moved/old.txt"),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetResults()) != 5 || resp.GetChangeSet() == "" || resp.GetDryRun() {
			t.Fatalf("response %v", resp)
		}
		want := map[string]string{"a.txt": "a1\nA2\na3\n", "b.txt": "b1\nb2\nb3\n", "new/c.txt": "c\n", "moved/old.txt": "old\n"}
		for p, w := range want {
			if got := e.read(p); got != w {
				t.Errorf("%s = %q, want %q", p, got, w)
			}
		}
		for _, p := range []string{"gone.txt", "old.txt"} {
			if exists(t, filepath.Join(e.root, p)) {
				t.Errorf("%s is still there", p)
			}
		}
		if v := resp.GetResults()[0].GetEdit().GetVersion(); v != workspace.Version([]byte(want["a.txt"])) {
			t.Errorf("edit version %s", v)
		}
		if left, _ := os.ReadDir(log.Dir()); len(left) != 0 {
			t.Errorf("intent log holds %d entries after the set", len(left))
		}
	})
	t.Run("every failing change is reported and nothing is written", func(t *testing.T) {
		e, _ := intentEnv(t)
		e.seed("a.txt", a)
		e.seed("b.txt", b)
		// Another agent changes line 2 of a.txt: change 1's reference is
		// stale. Change 2 edits a file that does not exist.
		other := client.New(e.conn, client.WithAgentID("other"))
		if _, err := other.Write(e.ctx, &hashlinev1.WriteRequest{Path: "a.txt", Content: "a1\nX\na3\n"}); err != nil {
			t.Fatal(err)
		}
		before := e.snapshot()
		_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
			writeChange("new.txt", "new\n"),
			editChange("a.txt", client.Replace(tag(a, 2), "", "A2")),
			editChange("missing.txt", client.Append("x")),
			editChange("b.txt", client.Append("b3")),
		}})
		if codeOf(err) != codes.Aborted || reasonOf(err) != hashlinev1.ErrorReason_ERROR_REASON_STALE_REF {
			t.Fatalf("got %v, want the first failure's STALE_REF", err)
		}
		var changeErrs []*hashlinev1.ChangeError
		var stale []*hashlinev1.StaleRef
		for _, d := range status.Convert(errors.Unwrap(err)).Details() {
			switch d := d.(type) {
			case *hashlinev1.ChangeError:
				changeErrs = append(changeErrs, d)
			case *hashlinev1.StaleRef:
				stale = append(stale, d)
			}
		}
		if len(changeErrs) != 2 || changeErrs[0].GetChangeIndex() != 1 || changeErrs[1].GetChangeIndex() != 2 ||
			changeErrs[0].GetReason() != "STALE_REF" || changeErrs[1].GetReason() != "NOT_FOUND" || changeErrs[1].GetPath() != "missing.txt" {
			t.Errorf("change errors %v", changeErrs)
		}
		if len(stale) != 1 || stale[0].GetChangeIndex() != 1 {
			t.Errorf("stale refs %v", stale)
		}
		e.assertUnchanged(before)
	})
	t.Run("a dry run writes nothing and says what it would write", func(t *testing.T) {
		e, _ := intentEnv(t)
		e.seed("a.txt", a)
		before := e.snapshot()
		resp, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{DryRun: true, Changes: []*hashlinev1.Change{
			editChange("a.txt", client.Replace(tag(a, 1), "", "A1")),
			writeChange("c.txt", "c\n"),
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !resp.GetDryRun() || resp.GetChangeSet() != "" || resp.GetResults()[1].GetWrite().GetVersion() != workspace.Version([]byte("c\n")) ||
			resp.GetResults()[0].GetEdit().GetVersion() != workspace.Version([]byte("A1\na2\na3\n")) {
			t.Errorf("response %v", resp)
		}
		e.assertUnchanged(before)
	})
	t.Run("a set over the byte limit is refused whole", func(t *testing.T) {
		e, _ := intentEnv(t, engine.WithMaxSetBytes(10))
		before := e.snapshot()
		_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{writeChange("x.txt", "123456"), writeChange("y.txt", "123456")}})
		if reasonOf(err) != hashlinev1.ErrorReason_ERROR_REASON_TOO_LARGE {
			t.Fatalf("got %v", err)
		}
		e.assertUnchanged(before)
	})
}

func TestTokensGateDeleteMoveAndApply(t *testing.T) {
	e := newAuthEnv(t, server.GRPCConfig{})
	tests := []struct {
		name   string
		tok    string
		call   func(ctx context.Context) error
		reason hashlinev1.ErrorReason
	}{
		{"a read-only token may not delete", readerToken, func(ctx context.Context) error {
			_, err := e.c.Delete(ctx, &hashlinev1.DeleteRequest{Path: "src/a.go"})
			return err
		}, hashlinev1.ErrorReason_ERROR_REASON_READ_ONLY},
		{"a read-only token may not move", readerToken, func(ctx context.Context) error {
			_, err := e.c.Move(ctx, &hashlinev1.MoveRequest{From: "src/a.go", To: "src/b.go"})
			return err
		}, hashlinev1.ErrorReason_ERROR_REASON_READ_ONLY},
		{"a read-only token may not apply", readerToken, func(ctx context.Context) error {
			_, err := e.c.Apply(ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{writeChange("src/n.go", "x\n")}})
			return err
		}, hashlinev1.ErrorReason_ERROR_REASON_READ_ONLY},
		{"a scoped token may not move a file out of its prefixes", scopedToken, func(ctx context.Context) error {
			_, err := e.c.Move(ctx, &hashlinev1.MoveRequest{From: "src/a.go", To: "docs/a.go"})
			return err
		}, hashlinev1.ErrorReason_ERROR_REASON_PATH_NOT_ALLOWED},
		{"a scoped token may not move a file into its prefixes", scopedToken, func(ctx context.Context) error {
			_, err := e.c.Move(ctx, &hashlinev1.MoveRequest{From: "secret/key.txt", To: "src/key.txt"})
			return err
		}, hashlinev1.ErrorReason_ERROR_REASON_PATH_NOT_ALLOWED},
		{"a scoped token may not delete through a link out of its prefixes", scopedToken, func(ctx context.Context) error {
			_, err := e.c.Delete(ctx, &hashlinev1.DeleteRequest{Path: "src/outdir/key.txt"})
			return err
		}, hashlinev1.ErrorReason_ERROR_REASON_PATH_NOT_ALLOWED},
		{"a scoped token may not slip one change out of its prefixes into a set", scopedToken, func(ctx context.Context) error {
			_, err := e.c.Apply(ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{writeChange("src/n.go", "x\n"), deleteChange("docs/other.md")}})
			return err
		}, hashlinev1.ErrorReason_ERROR_REASON_PATH_NOT_ALLOWED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.snapshot()
			err := tt.call(withToken(e.ctx, tt.tok))
			if reasonOf(err) != tt.reason {
				t.Fatalf("got %v, want %v", err, tt.reason)
			}
			e.assertUnchanged(before)
		})
	}
	t.Run("a scoped token moves a file inside its prefixes", func(t *testing.T) {
		if _, err := e.c.Move(withToken(e.ctx, scopedToken), &hashlinev1.MoveRequest{From: "src/a.go", To: "docs/api/a.go"}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRecoverFinishesACommittedSet stages a set, records it and stops
// there, as a crash right after the commit point does (and with one step
// done, as a crash in the middle does): Recover finishes it.
func TestRecoverFinishesACommittedSet(t *testing.T) {
	for _, done := range []int{0, 1, 3} {
		t.Run(map[int]string{0: "no step done", 1: "one step done", 3: "every step done"}[done], func(t *testing.T) {
			root := t.TempDir()
			ws, err := workspace.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			os.WriteFile(filepath.Join(root, "a.txt"), []byte("old a\n"), 0o644)
			os.WriteFile(filepath.Join(root, "del.txt"), []byte("del\n"), 0o644)
			sd, _ := state.Open(t.TempDir(), root)
			log, err := sd.Intents(true)
			if err != nil {
				t.Fatal(err)
			}
			sa, err := ws.Stage("a.txt", []byte("new a\n"), workspace.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := ws.Stage("d/b.txt", []byte("new b\n"), workspace.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			steps := []workspace.Step{sa.Step(workspace.Version([]byte("old a\n"))), sb.Step(""), {Kind: workspace.StepRemove, Path: "del.txt", To: "del.txt", Version: workspace.Version([]byte("del\n"))}}
			record(t, log, "set1", steps)
			if err := ws.Commit(steps[:done]); err != nil {
				t.Fatal(err)
			}
			r, err := engine.Recover(ws, log, slog.New(slog.DiscardHandler))
			if err != nil || r != (engine.Recovered{Sets: 1}) {
				t.Fatalf("Recover = %+v, %v", r, err)
			}
			for p, want := range map[string]string{"a.txt": "new a\n", "d/b.txt": "new b\n"} {
				if got, _ := os.ReadFile(filepath.Join(root, p)); string(got) != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			for _, p := range []string{"del.txt", sa.Temp, sb.Temp} {
				if exists(t, filepath.Join(root, p)) {
					t.Errorf("%s is still there", p)
				}
			}
			if left, _ := os.ReadDir(log.Dir()); len(left) != 0 {
				t.Errorf("the record is still there")
			}
		})
	}
	t.Run("a damaged record stops the start with nothing replayed", func(t *testing.T) {
		root := t.TempDir()
		ws, _ := workspace.Open(root)
		defer ws.Close()
		os.WriteFile(filepath.Join(root, "del.txt"), []byte("del\n"), 0o644)
		sd, _ := state.Open(t.TempDir(), root)
		log, _ := sd.Intents(true)
		good := state.Intent{ID: "good", Steps: []state.IntentStep{{Op: "remove", Path: "del.txt", To: "del.txt"}}}
		if _, err := log.Record(good); err != nil {
			t.Fatal(err)
		}
		data, _ := state.EncodeIntent(state.Intent{ID: "bad", Steps: []state.IntentStep{{Op: "remove", To: "x"}}})
		data[len(data)-3] ^= 1
		os.WriteFile(filepath.Join(log.Dir(), "bad.intent"), data, 0o600)
		if _, err := engine.Recover(ws, log, slog.New(slog.DiscardHandler)); err == nil {
			t.Fatal("Recover replayed a damaged log")
		}
		if !exists(t, filepath.Join(root, "del.txt")) {
			t.Error("a step of the good record was done before the damaged one was found")
		}
	})
}
