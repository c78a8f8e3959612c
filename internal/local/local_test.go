package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/local"
)

func TestEngineEditsFilesUnderRoot(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := local.Start(local.Config{Root: dir, Client: []client.Option{client.WithAgentID("test")}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := e.Client.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{
		client.Replace(client.Ref(r.GetLines()[1]), "", "TWO"),
	}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	if err != nil || string(got) != "one\nTWO\n" {
		t.Fatalf("file = %q, %v; want %q", got, err, "one\nTWO\n")
	}
	if _, err := e.Client.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"}); err == nil {
		t.Fatal("Read after Close succeeded")
	}
}

func TestStartRefusesMissingRoot(t *testing.T) {
	if _, err := local.Start(local.Config{Root: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("Start on a missing root succeeded")
	}
}

// TestEngineWithAStateStore: an engine given a state directory saves its
// snapshots there on Close, and the next engine rebases from them; a state
// directory inside the root is refused with a StateError before anything
// is created.
func TestEngineWithAStateStore(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	const text = "one\ntwo\nthree\n"
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := local.Config{Root: root, StateDir: state, StateBytes: 1 << 20, Client: []client.Option{client.WithAgentID("test")}}
	e, err := local.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := e.Client.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Prepend("zero")}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, err = local.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	resp, err := e.Client.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", BaseVersion: r.GetVersion(), Edits: []*hashlinev1.FileEdit{
		client.Replace(client.Ref(r.GetLines()[2]), "", "THREE"),
	}})
	if err != nil || resp.GetRebasedFrom() != r.GetVersion() {
		t.Fatalf("edit from the first engine's tags: %v, %v; want it rebased", resp, err)
	}

	inside := local.Config{Root: root, StateDir: filepath.Join(root, "state"), StateBytes: 1 << 20}
	if _, err := local.Start(inside); !errors.As(err, new(*local.StateError)) {
		t.Fatalf("Start with the state directory inside the root = %v, want a StateError", err)
	}
	if _, err := os.Stat(filepath.Join(root, "state")); !os.IsNotExist(err) {
		t.Errorf("the refused state directory was created in the workspace (%v)", err)
	}
}
