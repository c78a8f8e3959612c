package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// The bounds on Grep patterns and on streams per agent come from the
// command line or the environment.
func TestBoundsFlags(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("abcd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, addr := start(t, []string{"HASHLINED_MAX_PATTERN_BYTES=4"}, "--root", root, "--listen", "127.0.0.1:0", "--streams-per-agent", "1")
	c, ctx := dial(t, addr, client.WithAgentID("bounded"))
	var ce *client.Error
	if _, err := c.Grep(ctx, &hashlinev1.GrepRequest{Pattern: "abcd"}, func(*hashlinev1.GrepFile) error { return nil }); err != nil {
		t.Fatalf("a pattern of the limit: %v", err)
	}
	_, err := c.Grep(ctx, &hashlinev1.GrepRequest{Pattern: "abcde"}, func(*hashlinev1.GrepFile) error { return nil })
	if !errors.As(err, &ce) || ce.Reason != "INVALID_ARGUMENT" || ce.Metadata["limit"] != "4" {
		t.Errorf("a pattern over the limit: %v, want INVALID_ARGUMENT with limit 4", err)
	}
	// Raw stubs: one agent ("anonymous") for both streams.
	w, err := c.RPC().Watch(ctx, &hashlinev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Header(); err != nil {
		t.Fatal(err)
	}
	g, err := c.RPC().Grep(ctx, &hashlinev1.GrepRequest{Pattern: "a"})
	if err == nil {
		_, err = g.Recv()
	}
	if !errors.As(client.FromStatus(err), &ce) || ce.Reason != "TOO_MANY_STREAMS" {
		t.Errorf("a second stream: %v, want TOO_MANY_STREAMS", err)
	}
}
