package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession runs hashline mcp on root as an MCP client would, as the
// agent named agent.
func mcpSession(t *testing.T, root, agent string) *sdk.ClientSession {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(hashlineBin, "mcp", "--root", root, "--agent", agent)
	cmd.Env = cleanEnv()
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "one-engine-test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to hashline mcp: %v\nstderr: %s", err, &stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolCall(cs *sdk.ClientSession, tool string, args map[string]any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, err
	}
	return res.Content[0].(*sdk.TextContent).Text, res.IsError, nil
}

// Two MCP sessions and a CLI with --local on one root are one editor: 200
// appends from each at once, every one acknowledged, and the file holds
// all 600. With an engine per process, each kept its own locks and
// views, and the file held a fraction of them.
func TestTwoMCPSessionsAndTheCLIOnOneRootLoseNoAppend(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"log.txt": ""})
	const n = 200
	sessions := []*sdk.ClientSession{mcpSession(t, root, "mcp-a"), mcpSession(t, root, "mcp-b")}
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for si, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				text, isErr, err := toolCall(cs, "edit_file", map[string]any{"path": "log.txt", "edits": []map[string]any{{"append": map[string]any{"text": fmt.Sprintf("mcp%d %d", si, i)}}}})
				if err != nil || isErr {
					errs <- fmt.Errorf("session %d append %d: %v %s", si, i, err, text)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		run := binary(t, root, nil, nil)
		for i := range n {
			if _, stderr, code := run([]string{"edit", "log.txt", "--local", "--agent", "cli", "--append", "--text", fmt.Sprintf("cli %d", i)}, ""); code != 0 {
				errs <- fmt.Errorf("cli append %d: exit %d: %s", i, code, stderr)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		seen[l]++
	}
	for _, who := range []string{"mcp0", "mcp1", "cli"} {
		for i := range n {
			if l := fmt.Sprintf("%s %d", who, i); seen[l] != 1 {
				t.Errorf("%q is in the file %d times, want once", l, seen[l])
			}
		}
	}
	if len(seen) != 3*n {
		t.Errorf("the file has %d distinct lines, want %d", len(seen), 3*n)
	}
}

// Overlapping edits across processes are stale references, never lost
// updates: each later writer of line 2 is refused with the fresh tags,
// and the file holds the one acknowledged change.
func TestOverlappingEditsAcrossProcessesAreStale(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"f.txt": "one\ntwo\nthree\n"})
	a, b := mcpSession(t, root, "mcp-a"), mcpSession(t, root, "mcp-b")
	run := binary(t, root, nil, nil)
	readTag := func(cs *sdk.ClientSession) string {
		text, isErr, err := toolCall(cs, "read_file", map[string]any{"path": "f.txt"})
		if err != nil || isErr {
			t.Fatalf("read_file: %v %s", err, text)
		}
		for _, l := range strings.Split(text, "\n") {
			if tag, rest, ok := strings.Cut(l, "|"); ok && rest == "two" {
				return tag
			}
		}
		t.Fatalf("no line two in:\n%s", text)
		return ""
	}
	tagA, tagB := readTag(a), readTag(b)
	stdout, stderr, code := run([]string{"read", "f.txt", "--local", "--agent", "cli"}, "")
	if code != 0 || !strings.Contains(stdout, tagA+"|two") {
		t.Fatalf("cli read: exit %d %s %s", code, stdout, stderr)
	}
	// A changes line 2 first.
	if text, isErr, err := toolCall(a, "edit_file", map[string]any{"path": "f.txt", "edits": []map[string]any{{"set_line": map[string]any{"anchor": tagA, "new_text": "TWO by a"}}}}); err != nil || isErr {
		t.Fatalf("a's edit: %v %s", err, text)
	}
	// B, in another process, still points at the line as it read it.
	text, isErr, err := toolCall(b, "edit_file", map[string]any{"path": "f.txt", "edits": []map[string]any{{"set_line": map[string]any{"anchor": tagB, "new_text": "TWO by b"}}}})
	if err != nil || !isErr || !strings.Contains(text, ">>>") || !strings.Contains(text, "TWO by a") {
		t.Errorf("b's stale edit: error %v, tool error %v:\n%s", err, isErr, text)
	}
	// So does the CLI.
	if _, stderr, code := run([]string{"edit", "f.txt", "--local", "--agent", "cli", "--replace", tagA, "--text", "TWO by cli"}, ""); code != exitStale || !strings.Contains(stderr, "TWO by a") {
		t.Errorf("the cli's stale edit: exit %d, want %d:\n%s", code, exitStale, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(got) != "one\nTWO by a\nthree\n" {
		t.Errorf("the file holds %q, want only a's acknowledged change", got)
	}
}
