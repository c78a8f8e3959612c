package local_test

import (
	"context"
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
