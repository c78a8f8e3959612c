package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// One engine per workspace: a second hashlined on a root that an engine
// already serves (here another hashlined) is refused before it touches
// anything, with a message naming the one that holds it and where it
// listens. In particular it sweeps no temp file: those may be the staged
// contents of a change set the first engine is committing.
func TestASecondEngineOnARootIsRefusedAndTouchesNothing(t *testing.T) {
	root := t.TempDir()
	first, err := binarytest.Start(binary, binarytest.Options{Args: []string{"--root", root, "--listen", "127.0.0.1:0", "--state-dir", t.TempDir()}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Kill()
	staged := filepath.Join(root, ".hashline-"+strings.Repeat("A", 26)+".tmp")
	if !workspace.IsTempName(staged) {
		t.Fatalf("%s is not a temp file's name", staged)
	}
	if err := os.WriteFile(staged, []byte("another engine's staged content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Written after the first server started, so its own sweep leaves it;
	// older than the second, whose sweep would take it.
	time.Sleep(10 * time.Millisecond)
	// Another state directory does not make it another workspace.
	out, err := exec.Command(binary, "serve", "--root", root, "--listen", "127.0.0.1:0", "--state-dir", t.TempDir()).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("the second server: %v, want exit 1\n%s", err, out)
	}
	for _, want := range []string{"already served by hashlined (pid " + strconv.Itoa(first.Cmd.Process.Pid), "listening on " + first.Addr, "--server " + first.Addr} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(staged); err != nil {
		t.Errorf("the staged file is gone: %v", err)
	}
	c, err := client.Dial(first.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Status(t.Context()); err != nil {
		t.Errorf("the first server no longer answers: %v", err)
	}
}

// A --state-dir whose intent log another engine holds (the same directory
// given to the servers of two roots) is refused: replaying that engine's
// log would finish its change sets under its feet.
func TestAStateDirectoryInUseIsRefused(t *testing.T) {
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
	out, err := exec.Command(binary, "serve", "--root", root, "--listen", "127.0.0.1:0", "--state-dir", stateDir).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "--state-dir: the intent log is in use") {
		t.Errorf("a held intent log: %v\n%s", err, out)
	}
}
