package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateListAndPrune: hashlined state list names each state directory's
// root, and prune removes the state of a root that is gone, never that of
// a running server's root.
func TestStateListAndPrune(t *testing.T) {
	xdg := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + xdg}
	live, gone := t.TempDir(), filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	start(t, env, "--root", live, "--listen", "127.0.0.1:0")
	stopped, _ := start(t, env, "--root", gone, "--listen", "127.0.0.1:0")
	stopped.Process.Kill()
	stopped.Wait()
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	realLive, err := filepath.EvalSymlinks(live)
	if err != nil {
		t.Fatal(err)
	}
	state := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, append([]string{"state"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hashlined state %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	list := state("list")
	if !strings.Contains(list, "root "+realLive+" (in use by a running engine)\n") || !strings.Contains(list, "gone (gone)\n") {
		t.Fatalf("hashlined state list:\n%s", list)
	}
	dry := state("prune", "--dry-run")
	if strings.Count(dry, "\n") != 1 || !strings.HasPrefix(dry, "would remove ") || !strings.Contains(dry, "gone (gone)") {
		t.Errorf("hashlined state prune --dry-run:\n%s", dry)
	}
	if state("list") != list {
		t.Errorf("a dry run changed the list")
	}
	pruned := state("prune")
	if !strings.Contains(pruned, "removed ") || !strings.Contains(pruned, "gone (gone)") {
		t.Errorf("hashlined state prune:\n%s", pruned)
	}
	after := state("list")
	if strings.Contains(after, "gone") || !strings.Contains(after, realLive) {
		t.Errorf("after prune:\n%s", after)
	}
}
