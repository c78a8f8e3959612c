package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's own client (the one the benchmark uses) connects, pings and
// gets each file's text back, the same on every call.
func TestAnswersTheSDKClient(t *testing.T) {
	dir := t.TempDir()
	texts := map[string]string{"r100.go": "1:ab|<a & b>\n2:cd|\"x\"\n", "sub/r.go": "1:ef|y\n"}
	for p, text := range texts {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(inR, outW, dir); outW.Close() }()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for p, want := range texts {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": p}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*sdk.TextContent).Text; got != want {
				t.Errorf("%s: got %q, want %q", p, got, want)
			}
		}
	}
	// A path it has no reply for ends it with an error.
	_, _ = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "missing.go"}})
	if err := <-done; err == nil {
		t.Error("a call for a file with no reply did not end mcpecho with an error")
	}
	cs.Close()
}
