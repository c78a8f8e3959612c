package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStatusSaysWhichRootTheServerServes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	addr := startServer(t, dir, "--hash-len", "3", "--require-read=false")
	run := binary(t, t.TempDir(), []string{"HASHLINE_SERVER=" + addr}, nil)

	t.Run("the text names the server, its root and its settings", func(t *testing.T) {
		out, errOut, code := run([]string{"status"}, "")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, want := range []string{"server:       " + addr, "root:         " + dir, "hash length:  3", "require read: false", "version:      "} {
			if !strings.Contains(out, want) {
				t.Errorf("status lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("--json prints the StatusResponse", func(t *testing.T) {
		out, errOut, code := run([]string{"status", "--json"}, "")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var st struct {
			Root    string `json:"root"`
			Version string `json:"version"`
			HashLen int    `json:"hashLen"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil || st.Root != dir || st.HashLen != 3 || st.Version == "" {
			t.Errorf("status --json = %s (%v)", out, err)
		}
	})
	t.Run("status takes no arguments", func(t *testing.T) {
		if _, _, code := run([]string{"status", "extra"}, ""); code != exitUsage {
			t.Errorf("exit %d, want %d", code, exitUsage)
		}
	})
}

func TestVersionFlag(t *testing.T) {
	out, errOut, code := binary(t, t.TempDir(), nil, nil)([]string{"--version"}, "")
	if code != exitOK || !strings.HasPrefix(out, "hashline ") || !strings.Contains(out, "(commit ") || !strings.Contains(out, ", go1.") {
		t.Errorf("hashline --version: exit %d, %q %q", code, out, errOut)
	}
}
