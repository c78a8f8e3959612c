package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// A hashlined that finds the intent log held by another engine of the
// workspace (a hashline mcp, another hashlined) must not sweep temp files:
// they may be that engine's staged contents of a committed change set,
// which it is renaming into place, or keeps to finish at its next start.
func TestServerThatDoesNotHoldTheLogLeavesTempFiles(t *testing.T) {
	root, stateDir := t.TempDir(), t.TempDir()
	sd, err := state.Open(stateDir, root)
	if err != nil {
		t.Fatal(err)
	}
	log, err := sd.Intents(true)
	if err != nil {
		t.Fatal(err)
	}
	release, err := log.Lock() // the other engine
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	staged := filepath.Join(root, ".hashline-"+strings.Repeat("A", 26)+".tmp")
	if !workspace.IsTempName(staged) {
		t.Fatalf("%s is not a temp file's name", staged)
	}
	if err := os.WriteFile(staged, []byte("another engine's staged content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(staged, old, old); err != nil {
		t.Fatal(err)
	}
	p, err := binarytest.Start(binary, binarytest.Options{Args: []string{"--root", root, "--listen", "127.0.0.1:0", "--state-dir", stateDir}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	// The sweep runs in the background: wait until the server says what
	// it did about it (the deadline only bounds a hang).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out := p.Stderr()
		if strings.Contains(out, "removed temporary files") {
			t.Fatalf("the server swept temp files while another engine holds the intent log:\n%s", out)
		}
		if strings.Contains(out, "temporary files not swept") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server said nothing of the sweep:\n%s", out)
		}
	}
	if _, err := os.Stat(staged); err != nil {
		t.Errorf("the staged file is gone: %v", err)
	}
}
