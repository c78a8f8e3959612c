package engine

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashline/hashline/internal/workspace"
)

// A set whose commit fails past its commit point with a step that still
// fails on the second try keeps its record, for the steps left. The steps
// it did must not be redone over later changes that put back what they
// changed: a later change to one of the set's paths first finishes the
// set (or is refused while it cannot), and the next start finds nothing to
// redo.
func TestAnUnfinishedSetIsFinishedBeforeALaterChangeToItsPaths(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	const c = "c's old content\n"
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, content := range map[string]string{"d/a.txt": "old a\n", "c.txt": c} {
		if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Another process puts a file where the directory of a staged content
	// was, for the first set only: its rename fails now and on the second
	// try.
	var first atomic.Bool
	first.Store(true)
	s, log := intentService(t, root, withRecorded(func(string) {
		if !first.Swap(false) {
			return
		}
		d := filepath.Join(root, "d")
		os.RemoveAll(d)
		os.WriteFile(d, []byte("not a directory\n"), 0o644)
	}))
	ctx := context.Background()
	_, err := s.Apply(ctx, &ApplyRequest{Changes: []Change{
		&WriteRequest{Path: "d/a.txt", Content: "new a\n"},
		&DeleteRequest{Path: "c.txt"},
	}})
	if err == nil || !strings.Contains(err.Error(), "Applied: 1 (delete c.txt)") {
		t.Fatalf("the set answered %v, want it applied in part", err)
	}
	if left, _ := os.ReadDir(log.Dir()); len(left) != 1 {
		t.Fatalf("the intent log holds %d entries, want the set's record", len(left))
	}

	// c.txt again, with its old content: refused while the set's other
	// step still fails, since the set is not finished.
	write := func() error {
		_, err := s.Write(ctx, &WriteRequest{Path: "c.txt", Content: c})
		return err
	}
	if err := write(); err == nil || !errors.Is(err, workspace.ErrIO) || !strings.Contains(err.Error(), "applied only in part") {
		t.Fatalf("a write of c.txt while the set is unfinished: %v, want IO_ERROR saying the set is unfinished", err)
	}
	// The cause is fixed: the write finishes the set (its step over d/a.txt
	// finds the file gone, and is not done) and is made.
	if err := os.Remove(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	if err := write(); err != nil {
		t.Fatalf("a write of c.txt once the set can be finished: %v", err)
	}
	if left, _ := os.ReadDir(log.Dir()); len(left) != 0 {
		t.Fatalf("the intent log holds %d entries after the set was finished", len(left))
	}

	// The restart.
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if r, err := Recover(ws, log, slog.New(slog.DiscardHandler)); err != nil || r.Sets != 0 {
		t.Fatalf("Recover = %+v, %v; want nothing to finish", r, err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "c.txt")); err != nil || string(got) != c {
		t.Errorf("c.txt = %q, %v; want the later write's content", got, err)
	}
}
