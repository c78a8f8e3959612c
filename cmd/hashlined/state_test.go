package main

import (
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/state"
)

// TestStateDirInsideTheRootIsRefused: the server writes nothing into the
// workspace but its files, so a state directory inside the root, however
// it is named, stops it at start, before anything is created.
func TestStateDirInsideTheRootIsRefused(t *testing.T) {
	root := newRoot(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		env  []string
	}{
		{"the flag naming a directory of the root", []string{"--state-dir", filepath.Join(root, ".state")}, nil},
		{"the flag naming the root", []string{"--state-dir", root}, nil},
		{"the flag reaching the root through a symlink", []string{"--state-dir", filepath.Join(link, "state")}, nil},
		{"the environment", nil, []string{"HASHLINED_STATE_DIR=" + filepath.Join(root, "state")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binary, append([]string{"serve", "--root", root, "--listen", "127.0.0.1:0"}, tt.args...)...)
			cmd.Env = append(os.Environ(), tt.env...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "--state-dir") || !strings.Contains(string(out), "inside") {
				t.Errorf("exit %v, output %q; want exit 1 saying the state directory is inside the root", err, out)
			}
			entries, err := os.ReadDir(root)
			if err != nil || len(entries) != 1 || entries[0].Name() != "a.txt" {
				t.Errorf("the workspace holds %v (%v), want only a.txt", entries, err)
			}
		})
	}
}

// TestRestartRebasesFromTheStateDir: a real server stops (SIGTERM) and a
// new one starts over the same root; an agent's edit made from tags of a
// version the first server showed is rebased from the snapshot the first
// one left in the default state directory.
func TestRestartRebasesFromTheStateDir(t *testing.T) {
	const tenLines = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"
	tag := func(n int) string {
		return client.FormatRef(n, hashline.Hasher{}.Sum(strings.Split(tenLines, "\n")[n-1]))
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte(tenLines), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, addr := start(t, nil, "--root", root, "--listen", "127.0.0.1:0")
	alice, ctx := dial(t, addr, client.WithAgentID("alice"))
	bob, _ := dial(t, addr, client.WithAgentID("bob"))
	r, err := alice.Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	base := r.GetVersion()
	if _, err := bob.Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Edit(ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(5), "", "bob was here")}}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, 20*time.Second, "after SIGTERM")

	dir, err := state.DefaultDir(root) // under the XDG_STATE_HOME TestMain set
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := os.ReadDir(filepath.Join(dir, "snapshots"))
	if err != nil || len(snaps) == 0 {
		t.Fatalf("the default state directory %s holds no snapshots (%v)", dir, err)
	}

	_, addr, lines := startLines(t, nil, "--root", root, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	alice, ctx = dial(t, addr, client.WithAgentID("alice"))
	// A new server has no record of what alice read: she looks at the file
	// again (one line will do), and names her tags' version explicitly.
	if _, err := alice.Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.Edit(ctx, &hashlinev1.EditRequest{Path: "f.txt", BaseVersion: base,
		Edits: []*hashlinev1.FileEdit{client.Replace(tag(3), tag(7), "alice's block")}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) || len(stale.Refs) != 1 || stale.Refs[0].GetReason() != "CONFLICT" {
		t.Fatalf("alice's range over bob's line: %v, want the rebase's CONFLICT", err)
	}
	resp, err := alice.Edit(ctx, &hashlinev1.EditRequest{Path: "f.txt", BaseVersion: base,
		Edits: []*hashlinev1.FileEdit{client.Replace(tag(9), "", "alice's nine")}})
	if err != nil || resp.GetRebasedFrom() != base {
		t.Fatalf("alice's edit of line 9: %v, %v; want it rebased from %s", resp, err, base)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "f.txt")); string(b) != "l1\nl2\nl3\nl4\nbob was here\nl6\nl7\nl8\nalice's nine\nl10\n" {
		t.Errorf("file = %q", b)
	}
	var url string
	for _, l := range lines {
		if _, u, ok := strings.Cut(l, "metrics on "); ok {
			url = u
		}
	}
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(body), "hashline_cache_disk_hits_total 1\n") {
		t.Errorf("the metrics do not count the one disk hit:\n%s", grepLines(string(body), "hashline_cache"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
