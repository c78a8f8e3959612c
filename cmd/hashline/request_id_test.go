package main

import (
	"strings"
	"testing"
)

// TestRequestIDFlag re-runs edits and writes with --request-id against one
// real hashlined, as a harness re-runs a command that timed out: the same
// key and command answer with the first run's result and change nothing
// more; the same key with another command is refused. (With --local every
// run is a new engine with no memory, so this transcript is server-only.)
func TestRequestIDFlag(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	env := []string{"HASHLINE_SERVER=" + startServer(t, dir), "HASHLINE_AGENT=harness"}
	got := transcript(t, dir, env, nil, []step{
		cli("write", "new.txt", "--create", "--content", "x\n", "--request-id", "w1"),
		cli("write", "new.txt", "--create", "--content", "x\n", "--request-id", "w1"),
		cli("edit", "f.txt", "--append", "--text", "two", "--request-id", "e1"),
		cli("edit", "f.txt", "--append", "--text", "two", "--request-id", "e1"),
		cli("edit", "f.txt", "--append", "--text", "three", "--request-id", "e1"),
		cli("edit", "f.txt", "--append", "--text", "three", "--request-id", strings.Repeat("k", 129)),
		cli("edit", "f.txt", "--append", "--text", "three", "--timeout", "1ns", "--request-id", "e2"),
		cli("edit", "f.txt", "--append", "--text", "three", "--request-id", "e2"),
		cli("edit", "f.txt", "--append", "--text", "three", "--request-id", "e2"),
		cli("edit", "f.txt").in(`{"edits":[{"append":{"text":"four"}}],"requestId":"e3"}`),
		cli("edit", "f.txt").in(`{"edits":[{"append":{"text":"four"}}],"requestId":"e3"}`),
		dump("f.txt"),
		dump("new.txt"),
	})
	golden(t, "request_id", got)
}
