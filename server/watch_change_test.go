package server_test

import (
	"testing"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// TestWatchReportsDeletesMovesAndChangeSets: a Delete is a DELETED event
// with the agent, a Move a MOVED event with from_path, seen by watchers of
// either end, and the changes of an Apply carry its change_set.
func TestWatchReportsDeletesMovesAndChangeSets(t *testing.T) {
	e := newWatchEnv(t)
	va := e.writeFile("src/a.txt", "a\n")
	e.writeFile("src/gone.txt", "gone\n")
	all, other := e.watch(""), e.watch("lib")

	if _, err := e.c.Delete(e.ctx, &hashlinev1.DeleteRequest{Path: "src/gone.txt"}); err != nil {
		t.Fatal(err)
	}
	ev := all.next()
	if ev.GetKind() != hashlinev1.WatchEventKind_WATCH_EVENT_KIND_DELETED || ev.GetPath() != "src/gone.txt" || ev.GetAgent() != "agent-x" || ev.GetExternal() {
		t.Errorf("delete event %v", ev)
	}
	if _, err := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "src/a.txt", To: "lib/a.txt"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*events{all, other} {
		ev := w.next()
		if ev.GetKind() != hashlinev1.WatchEventKind_WATCH_EVENT_KIND_MOVED || ev.GetPath() != "lib/a.txt" || ev.GetFromPath() != "src/a.txt" ||
			ev.GetOldVersion() != va || ev.GetNewVersion() != va || ev.GetAgent() != "agent-x" || ev.GetChangeSet() != "" {
			t.Errorf("move event %v", ev)
		}
	}
	resp, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
		writeChange("lib/b.txt", "b\n"), moveChange("lib/a.txt", "lib/c.txt"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 2 {
		ev := all.next()
		seen[ev.GetPath()] = true
		if ev.GetChangeSet() != resp.GetChangeSet() || resp.GetChangeSet() == "" {
			t.Errorf("event %v: change set %q, want %q", ev, ev.GetChangeSet(), resp.GetChangeSet())
		}
	}
	if !seen["lib/b.txt"] || !seen["lib/c.txt"] {
		t.Errorf("events for %v", seen)
	}
}
