package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/workspace"
)

// recordingService is intentService with a change history.
func recordingService(t *testing.T, root string, opts ...Option) *Engine {
	t.Helper()
	log, err := history.Open(filepath.Join(t.TempDir(), "history"), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	s, _ := intentService(t, root, append([]Option{WithHistory(log)}, opts...)...)
	return s
}

// A set committed under recordAs is recorded as the kind it names,
// reverting the change it names: how a revert is recorded.
func TestASetIsRecordedAsTheKindItIsCommittedAs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := recordingService(t, root)
	ctx := WithAgent(context.Background(), "agent")
	if _, err := s.Write(ctx, &WriteRequest{Path: "a.txt", Content: "b\n"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.History(ctx, HistoryRequest{})
	if err != nil || len(res.Entries) != 1 {
		t.Fatalf("history: %+v, %v", res, err)
	}
	first, err := history.ParseID(res.Entries[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(recordAs(ctx, history.KindRevert, first), &WriteRequest{Path: "a.txt", Content: "a\n"}); err != nil {
		t.Fatal(err)
	}
	res, err = s.History(ctx, HistoryRequest{})
	if err != nil || len(res.Entries) != 2 {
		t.Fatalf("history: %+v, %v", res, err)
	}
	if e := res.Entries[0]; e.Kind != history.KindRevert || e.Reverts != first.String() || len(e.Files) != 1 || e.Files[0].After != workspace.Version([]byte("a\n")) {
		t.Fatalf("the revert is recorded as %+v", e)
	}
}

// A set applied only in part (a step found its staged content gone) is
// recorded with the files of the steps done alone, under an id of its
// own; the entry prepared for the whole set is never shown.
func TestASetAppliedInPartIsRecordedWithTheFilesItChanged(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for p, c := range map[string]string{"a.txt": "a\n", "c.txt": "c\n"} {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := recordingService(t, root, withRecorded(func(string) {
		// Another process removes the staged content of a.txt after the
		// commit point.
		tmps, _ := filepath.Glob(filepath.Join(root, ".hashline-*.tmp"))
		for _, p := range tmps {
			os.Remove(p)
		}
	}))
	ctx := WithRequestID(WithAgent(context.Background(), "agent"), "req-set")
	_, err := s.Apply(ctx, &ApplyRequest{Changes: []Change{
		&WriteRequest{Path: "a.txt", Content: "new a\n"},
		&DeleteRequest{Path: "c.txt"},
	}})
	if err == nil || !strings.Contains(err.Error(), "applied only in part") {
		t.Fatalf("the set answered %v, want it applied in part", err)
	}
	res, err := s.History(ctx, HistoryRequest{})
	if err != nil || len(res.Entries) != 1 {
		t.Fatalf("history: %+v, %v", res, err)
	}
	e := res.Entries[0]
	if len(e.Files) != 1 || e.Files[0].Path != "c.txt" || e.Files[0].After != "" || e.Kind != history.KindSet || e.RequestID != "req-set" {
		t.Fatalf("the set is recorded as %+v, want the delete of c.txt alone", e)
	}
	if id, _ := history.ParseID(e.ID); id.Seq() == 1 {
		t.Fatalf("the part applied took the set's prepared id %s", e.ID)
	}
}
