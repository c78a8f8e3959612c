package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// A set whose commit fails past its commit point (here: another process
// puts a directory where a staged content goes) must not leave its record
// for the next start to replay over later edits, nor answer as if nothing
// or everything was written: the steps are tried again under the set's
// locks, the record goes once none is left to do, and the error names what
// was applied and what was not.
func TestASetWhoseCommitFailsSaysWhatWasAppliedAndLeavesNoRecord(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for p, c := range map[string]string{"a.txt": "old a\n", "b.txt": "old b\n"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, log := intentService(t, root, withRecorded(func(string) {
		a := filepath.Join(root, "a.txt")
		os.Remove(a)
		os.Mkdir(a, 0o755)
		os.WriteFile(filepath.Join(a, "x"), []byte("x\n"), 0o644)
	}))

	_, err := s.Apply(context.Background(), &ApplyRequest{Changes: []Change{
		&WriteRequest{Path: "a.txt", Content: "new a\n"},
		&WriteRequest{Path: "b.txt", Content: "new b\n"},
	}})
	if err == nil {
		t.Fatal("the set succeeded, though a.txt could not be written")
	}
	if !errors.Is(err, workspace.ErrIO) {
		t.Errorf("reason %v, want IO_ERROR: %v", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "Applied: 1 (write b.txt)") || !strings.Contains(msg, "Not applied: 0 (write a.txt)") {
		t.Errorf("the error does not say which changes were applied: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(got) != "new b\n" {
		t.Errorf("b.txt = %q", got)
	}
	if left, _ := os.ReadDir(log.Dir()); len(left) != 0 {
		t.Errorf("the record is still there, for a replay over later edits: %v", left)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if workspace.IsTempName(e.Name()) {
			t.Errorf("the staged content that was not applied is left: %s", e.Name())
		}
	}
}

// intentService is a service over root with an intent log in a state
// directory of its own, closed with the test.
func intentService(t *testing.T, root string, opts ...Option) (*Engine, *state.Intents) {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	sd, err := state.Open(t.TempDir(), root)
	if err != nil {
		t.Fatal(err)
	}
	log, err := sd.Intents(true)
	if err != nil {
		t.Fatal(err)
	}
	return New(ws, append([]Option{WithIntentLog(log)}, opts...)...), log
}
