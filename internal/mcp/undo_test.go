package mcp_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/mcp"
)

// withHistory is an embedded session whose engine keeps a change history,
// and a second session, the agent "bob", on the same server.
func withHistory(t *testing.T) (*session, *session) {
	t.Helper()
	log, err := history.Open(filepath.Join(t.TempDir(), "history"), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	s := newSessionWith(t, engineConfig{srv: []engine.Option{engine.WithHistory(log)}})
	bob := *s
	bob.cs = s.memorySession(mcp.WithAgent("bob"))
	return s, &bob
}

// editLine has the session replace line n (1-based) of p with text.
func (s *session) editLine(p string, n int, text string) {
	s.t.Helper()
	lines := tagged(s.t, s.ok("read_file", map[string]any{"path": p}))
	s.ok("edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"set_line": map[string]any{"anchor": ref(lines[n-1]), "new_text": text}}}})
}

var undoIDRE = regexp.MustCompile(`This undo is change (c[0-9]+-[0-9a-f]{8})`)

// TestUndo: undo undoes the caller's own last change, keeping another
// agent's later one, returns the diff, goes further back when called
// again, redoes with the change_id its reply names, and is refused, with
// the lines, when a later change touched them.
func TestUndo(t *testing.T) {
	t.Parallel()
	s, bob := withHistory(t)
	s.write("f.txt", "one\ntwo\nthree\nfour\nfive\n")
	s.editLine("f.txt", 2, "TWO")
	bob.editLine("f.txt", 5, "FIVE")

	got := s.ok("undo", nil)
	if s.read("f.txt") != "one\ntwo\nthree\nfour\nFIVE\n" {
		t.Fatalf("after undo: %q", s.read("f.txt"))
	}
	if !strings.Contains(got, "-TWO") || !strings.Contains(got, "|two") || !strings.HasPrefix(got, "Updated f.txt") || strings.Contains(got, "rebased") {
		t.Errorf("undo's reply:\n%s", got)
	}
	redo := undoIDRE.FindStringSubmatch(got)
	if redo == nil {
		t.Fatalf("the reply names no id to redo with:\n%s", got)
	}
	if msg := s.fail("undo", nil); !strings.Contains(msg, "Nothing to undo") {
		t.Errorf("a second undo with nothing left: %s", msg)
	}
	s.ok("undo", map[string]any{"change_id": redo[1]})
	if s.read("f.txt") != "one\nTWO\nthree\nfour\nFIVE\n" {
		t.Fatalf("after redo: %q", s.read("f.txt"))
	}
	// The redo stands, so the change it brought back is the last one again.
	s.ok("undo", nil)
	if s.read("f.txt") != "one\ntwo\nthree\nfour\nFIVE\n" {
		t.Fatalf("after undoing again: %q", s.read("f.txt"))
	}

	// Two changes: undo takes the newest, then the one before.
	s.editLine("f.txt", 1, "ONE")
	s.editLine("f.txt", 4, "FOUR")
	s.ok("undo", nil)
	s.ok("undo", nil)
	if s.read("f.txt") != "one\ntwo\nthree\nfour\nFIVE\n" {
		t.Fatalf("after two undos: %q", s.read("f.txt"))
	}

	// bob rewrote the line since: refused, naming bob, nothing written.
	s.editLine("f.txt", 3, "THREE")
	bob.editLine("f.txt", 3, "bob's three")
	msg := s.fail("undo", nil)
	if !strings.Contains(msg, "REVERT_CONFLICT") || !strings.Contains(msg, "(agent bob)") || !strings.Contains(msg, ">>> 3:") || !strings.Contains(msg, "bob's three") {
		t.Errorf("undo over bob's change:\n%s", msg)
	}
	if s.read("f.txt") != "one\ntwo\nbob's three\nfour\nFIVE\n" {
		t.Fatalf("a refused undo wrote: %q", s.read("f.txt"))
	}
	if msg := s.fail("undo", map[string]any{"change_id": "nope"}); !strings.Contains(msg, "MALFORMED_CHANGE_ID") {
		t.Errorf("undo of a bad id: %s", msg)
	}
}

// TestUndoOfEveryKindOfChange: write, delete, move and a files set are
// undone as they were made.
func TestUndoOfEveryKindOfChange(t *testing.T) {
	t.Parallel()
	s, _ := withHistory(t)
	s.write("a.txt", "a\n")
	s.write("b.txt", "b\n")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "new.txt", "content": "new\n"}},
		{"delete_file", map[string]any{"path": "a.txt"}},
		{"move_file", map[string]any{"from": "b.txt", "to": "d/b.txt"}},
		{"edit_file", map[string]any{"files": []any{
			map[string]any{"path": "a.txt", "edits": []any{map[string]any{"append": map[string]any{"text": "more"}}}},
			map[string]any{"path": "b.txt", "edits": []any{map[string]any{"prepend": map[string]any{"text": "first"}}}},
		}}},
	} {
		before := snapshotFiles(s)
		s.ok(c.tool, c.args)
		reply := s.ok("undo", nil)
		if after := snapshotFiles(s); after != before {
			t.Errorf("%s undone: %s, want %s\n%s", c.tool, after, before, reply)
		}
	}
}

// snapshotFiles is the workspace's files and contents, in one string.
func snapshotFiles(s *session) string {
	var b strings.Builder
	for _, p := range []string{"a.txt", "b.txt", "d/b.txt", "new.txt"} {
		if text, isErr := s.call("read_file", map[string]any{"path": p, "plain": true}); !isErr {
			b.WriteString(p + ":" + text + ";")
		}
	}
	return b.String()
}
