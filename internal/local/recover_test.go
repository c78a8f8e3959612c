package local_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/local"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// leaveSet leaves in stateDir the record of a committed change set that
// writes content to p in root, as a crash right after its commit point
// does, and returns the log.
func leaveSet(t *testing.T, root, stateDir, p, content string) *state.Intents {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	sd, err := state.Open(stateDir, root)
	if err != nil {
		t.Fatal(err)
	}
	log, err := sd.Intents(true)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ws.Stage(p, []byte(content), workspace.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	step := st.Step("")
	if _, err := log.Record(state.Intent{ID: "crashed", Steps: []state.IntentStep{{Op: "rename", Path: step.Path, From: step.From, To: step.To, New: step.New}}}); err != nil {
		t.Fatal(err)
	}
	return log
}

func TestTheInProcessEngineFinishesACrashedSetAndHoldsItsLogAlone(t *testing.T) {
	t.Run("a set a crash left committed is finished at start", func(t *testing.T) {
		root, stateDir := t.TempDir(), t.TempDir()
		log := leaveSet(t, root, stateDir, "a.txt", "from the set\n")
		e, err := local.Start(local.Config{Root: root, StateDir: stateDir, StateBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "from the set\n" {
			t.Errorf("a.txt = %q, want the crashed set's content", got)
		}
		if p, err := log.Pending(); err != nil || len(p) != 0 {
			t.Errorf("records left: %v, %v", p, err)
		}
	})
	t.Run("a second engine of the workspace runs without the log, says why, and replays nothing", func(t *testing.T) {
		root, stateDir := t.TempDir(), t.TempDir()
		first, err := local.Start(local.Config{Root: root, StateDir: stateDir, StateBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close()
		// A set the first engine is committing: its record is written,
		// its step not done yet.
		log := leaveSet(t, root, stateDir, "b.txt", "first engine's set\n")
		var logged bytes.Buffer
		second, err := local.Start(local.Config{Root: root, StateDir: stateDir, StateBytes: 1 << 20,
			Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := second.Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(logged.String(), "in use by another hashline engine") {
			t.Errorf("no warning naming the reason: %q", logged.String())
		}
		if _, err := os.Stat(filepath.Join(root, "b.txt")); !os.IsNotExist(err) {
			t.Errorf("the second engine replayed the first one's set (%v)", err)
		}
		if p, err := log.Pending(); err != nil || len(p) != 1 {
			t.Errorf("the first engine's record: %v, %v; want it left for its engine", p, err)
		}
	})
}
