package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/internal/hashline"
)

// repoDir is a workspace holding a git repository's metadata and a link
// into it.
func repoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{".git/config": "[core]\n", "f.txt": "one\n"})
	if err := os.Symlink(".git", filepath.Join(dir, "g")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tree describes every file under dir, to show that nothing changed.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		b.WriteString(p + "\n")
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLocalRefusesVCSMetadata: the CLI's --local engine is hashlined's
// server code, so it refuses version-control metadata the same way.
func TestLocalRefusesVCSMetadata(t *testing.T) {
	dir := repoDir(t)
	run := binary(t, dir, []string{"HASHLINE_SERVER=127.0.0.1:1"}, []string{"--local"})
	before := tree(t, dir)
	for _, args := range [][]string{
		{"write", ".git/hooks/pre-commit", "--content", "#!/bin/sh\ntouch pwned\n"},
		{"edit", "g/config", "--append", "--text", "\tfsmonitor = touch pwned"},
		{"read", ".git/config"},
	} {
		stdout, stderr, code := run(args, "")
		if code != exitError || !strings.Contains(stderr, "VCS_METADATA") {
			t.Errorf("hashline %s --local: exit %d, stdout %q, stderr %q; want exit %d and VCS_METADATA", strings.Join(args, " "), code, stdout, stderr, exitError)
		}
	}
	if after := tree(t, dir); after != before {
		t.Errorf("the workspace changed:\n%s\nwas\n%s", after, before)
	}
}

// TestMCPEmbeddedRefusesVCSMetadata: so does the engine hashline mcp
// embeds.
func TestMCPEmbeddedRefusesVCSMetadata(t *testing.T) {
	dir := repoDir(t)
	before := tree(t, dir)
	var stderr bytes.Buffer
	cmd := exec.Command(hashlineBin, "mcp", "--root", dir)
	cmd.Env = cleanEnv()
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "vcs-test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to hashline mcp: %v\nstderr: %s", err, &stderr)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "write_file", Arguments: map[string]any{
		"path": "g/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, "VCS_METADATA") {
		t.Errorf("write_file into .git through a link: error %v, %q; want a VCS_METADATA error", res.IsError, text)
	}
	if after := tree(t, dir); after != before {
		t.Errorf("the workspace changed:\n%s\nwas\n%s", after, before)
	}
}

// TestMCPEmbeddedRequiresARead: the engine hashline mcp embeds serves one
// agent for the whole session, and remembers what it was shown: an edit
// of lines of a file the session never read is NOT_READ, and nothing is
// written; after a read_file the same edit lands. (The CLI's --local runs
// one command per engine and keeps read-before-edit off.)
func TestMCPEmbeddedRequiresARead(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\ntwo\n"})
	var stderr bytes.Buffer
	cmd := exec.Command(hashlineBin, "mcp", "--root", dir)
	cmd.Env = cleanEnv()
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "read-test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to hashline mcp: %v\nstderr: %s", err, &stderr)
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*sdk.TextContent).Text, res.IsError
	}
	ref := hashline.Ref{Line: 1, Hash: hashline.Hasher{}.Sum("one")}.String()
	edit := map[string]any{"path": "f.txt", "edits": []map[string]any{{"set_line": map[string]any{"anchor": ref, "new_text": "ONE"}}}}
	if text, isErr := call("edit_file", edit); !isErr || !strings.Contains(text, "NOT_READ") {
		t.Fatalf("edit_file before any read: error %v, %q; want NOT_READ", isErr, text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "one\ntwo\n" {
		t.Fatalf("the refused edit wrote %q", b)
	}
	if text, isErr := call("read_file", map[string]any{"path": "f.txt"}); isErr {
		t.Fatalf("read_file: %s", text)
	}
	if text, isErr := call("edit_file", edit); isErr {
		t.Fatalf("edit_file after read_file: %s", text)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "ONE\ntwo\n" {
		t.Errorf("file = %q", b)
	}
}
