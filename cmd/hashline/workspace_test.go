package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --workspace names the workspace: before the command or after it, from
// the environment too; a server serving another refuses, and a name that
// is not one is refused before anything is sent.
func TestWorkspaceFlag(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	addr := startServer(t, dir, "--workspace", "alpha")
	run := binary(t, t.TempDir(), []string{"HASHLINE_SERVER=" + addr}, nil)

	for _, args := range [][]string{
		{"status", "--workspace", "alpha"},
		{"--workspace", "alpha", "status"},
	} {
		out, errOut, code := run(args, "")
		if code != exitOK || !strings.Contains(out, "workspace:    alpha\n") {
			t.Errorf("hashline %v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	_, errOut, code := run([]string{"write", "--workspace", "beta", "f.txt"}, "two\n")
	if code != exitError || !strings.Contains(errOut, "WRONG_WORKSPACE") || !strings.Contains(errOut, `serves workspace "alpha", not "beta"`) {
		t.Errorf("a write meant for beta: exit %d\n%s", code, errOut)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "--workspace", "../alpha", "f.txt"}, `--workspace: workspace name "../alpha" has path syntax`},
		{[]string{"read", "--workspace", "alpha.hashline.test", "f.txt"}, "has host syntax"},
		{[]string{"read", "--workspace-domain", "hashline.test", "f.txt"}, "give --workspace NAME too"},
	} {
		_, errOut, code := run(tt.args, "")
		if code != exitError || !strings.Contains(errOut, tt.want) {
			t.Errorf("hashline %v: exit %d, want %q in\n%s", tt.args, code, tt.want, errOut)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("f.txt = %q, %v", b, err)
	}
}
