package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
)

// Every change the engine commits is one history entry, with its agent,
// its request_id, its files' versions and lines; Blame attributes each
// line to the change that wrote it; Watch events carry the entry's id.
func TestCommittedChangesAreRecorded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	e, _, _ := withHistory(t, map[string]string{"f.txt": b.String(), "g.txt": "g\n"})
	alice := engine.WithRequestID(engine.WithAgent(context.Background(), "alice"), "req-a")
	bob := engine.WithAgent(context.Background(), "bob")
	sub, err := e.Subscribe("")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Unsubscribe(sub)

	text := read(t, e, alice, "f.txt").Lines
	a, err := e.Edit(alice, &engine.EditRequest{Path: "f.txt", Edits: []hashline.Edit{
		{Op: hashline.OpReplace, Start: text[9].Tag(), End: text[11].Tag(), Text: "ten\neleven\ntwelve"}}})
	if err != nil {
		t.Fatal(err)
	}
	text = read(t, e, bob, "f.txt").Lines
	if _, err := e.Edit(bob, &engine.EditRequest{Path: "f.txt", Edits: []hashline.Edit{
		{Op: hashline.OpReplace, Start: text[39].Tag(), Text: "forty"}}}); err != nil {
		t.Fatal(err)
	}

	got := entries(t, e, engine.HistoryRequest{Path: "f.txt"})
	if len(got) != 2 {
		t.Fatalf("history of f.txt = %+v, want 2 entries", got)
	}
	newest, oldest := got[0], got[1]
	if newest.Agent != "bob" || newest.Kind != history.KindEdit || newest.Files[0].Removed != 1 || newest.Files[0].Added != 1 {
		t.Errorf("bob's entry = %+v", newest)
	}
	if f := oldest.Files[0]; oldest.Agent != "alice" || oldest.RequestID != "req-a" || f.Path != "f.txt" ||
		f.Removed != 3 || f.Added != 3 || f.After != a.Version || f.Before == "" {
		t.Errorf("alice's entry = %+v", oldest)
	}
	blame, err := e.Blame(bob, engine.BlameRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range blame.Lines {
		want := ""
		switch {
		case l.Number >= 10 && l.Number <= 12:
			want = oldest.ID
		case l.Number == 40:
			want = newest.ID
		}
		if l.ChangeID != want || (want == "") != l.BeforeHistory {
			t.Errorf("line %d blamed on %q (before history %v), want %q", l.Number, l.ChangeID, l.BeforeHistory, want)
		}
	}

	// A set is one entry with its files; a delete removes every line.
	if _, err := e.Apply(bob, &engine.ApplyRequest{Changes: []engine.Change{
		&engine.WriteRequest{Path: "new.txt", Content: "x\ny\n"},
		&engine.MoveRequest{From: "g.txt", To: "h.txt"},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Delete(bob, &engine.DeleteRequest{Path: "new.txt"}); err != nil {
		t.Fatal(err)
	}
	all := entries(t, e, engine.HistoryRequest{})
	if len(all) != 4 {
		t.Fatalf("the workspace's history has %d entries, want 4: %+v", len(all), all)
	}
	del, set := all[0], all[1]
	if del.Kind != history.KindDelete || del.Files[0].Path != "new.txt" || del.Files[0].Removed != 2 {
		t.Errorf("the delete's entry = %+v", del)
	}
	if set.Kind != history.KindSet || len(set.Files) != 2 {
		t.Fatalf("the set's entry = %+v", set)
	}
	for _, f := range set.Files {
		switch f.Path {
		case "new.txt":
			if f.Before != "" || f.Added != 2 {
				t.Errorf("the created file = %+v", f)
			}
		case "h.txt":
			if f.From != "g.txt" || f.Before != f.After || f.Added+f.Removed != 0 {
				t.Errorf("the moved file = %+v", f)
			}
		default:
			t.Errorf("unexpected file %+v", f)
		}
	}

	// Every Watch event names the entry of its change.
	want := []string{oldest.ID, newest.ID, set.ID, set.ID, del.ID}
	for i, id := range want {
		ev, ok := sub.Next()
		if !ok {
			t.Fatalf("event %d missing", i)
		}
		if ev.ChangeID != id || ev.External {
			t.Errorf("event %d (%s %s) carries change %q, want %q", i, ev.Kind, ev.Path, ev.ChangeID, id)
		}
	}
}

// A file changed outside the server and then edited through it is two
// entries: the external change with its own lines, then the edit with its.
func TestAnExternalChangeBeforeAnEditIsItsOwnEntry(t *testing.T) {
	t.Parallel()
	e, _, root := withHistory(t, map[string]string{"f.txt": "one\ntwo\nthree\n"})
	alice := engine.WithAgent(context.Background(), "alice")
	lines := read(t, e, alice, "f.txt").Lines
	writeFile(t, root, "f.txt", "one\ntwo\nthree\nfour\n") // outside the server
	if _, err := e.Edit(alice, &engine.EditRequest{Path: "f.txt", Edits: []hashline.Edit{
		{Op: hashline.OpReplace, Start: lines[0].Tag(), Text: "ONE"}}}); err != nil {
		t.Fatal(err)
	}
	got := entries(t, e, engine.HistoryRequest{Path: "f.txt"})
	if len(got) != 2 {
		t.Fatalf("history = %+v, want the external change and the edit", got)
	}
	if edit, ext := got[0], got[1]; edit.Agent != "alice" || edit.Files[0].Added != 1 || edit.Files[0].Removed != 1 ||
		ext.Agent != history.External || ext.Files[0].Added != 1 || ext.Files[0].Removed != 0 || ext.Files[0].After != edit.Files[0].Before {
		t.Fatalf("entries = %+v", got)
	}
	blame, err := e.Blame(alice, engine.BlameRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"alice", "", "", history.External}
	for i, l := range blame.Lines {
		if l.Agent != want[i] {
			t.Errorf("line %d blamed on %q, want %q", l.Number, l.Agent, want[i])
		}
	}
}
