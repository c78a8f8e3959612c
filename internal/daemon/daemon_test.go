package daemon_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/daemon"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hashline-daemon-test")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "hashlined")
	if err := daemon.Build(bin, "../../cmd/hashlined"); err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	// The servers these tests start keep their state (internal/state)
	// under $XDG_STATE_HOME: here, not in the user's.
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestStartFindsTheAddressAndTheLinesBefore(t *testing.T) {
	// A root whose path contains " on " must not confuse the parser.
	root := filepath.Join(t.TempDir(), "served on purpose")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := daemon.Start(bin, daemon.Options{Args: []string{"--root", root, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log-level", "error"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	conn, err := net.DialTimeout("tcp", p.Addr, 5*time.Second)
	if err != nil {
		t.Fatalf("Addr %q: %v", p.Addr, err)
	}
	conn.Close()
	if len(p.Before) != 1 || !strings.Contains(p.Before[0], "metrics on http://127.0.0.1:") {
		t.Errorf("Before = %q, want the metrics line", p.Before)
	}
	p.Stop(10 * time.Second)
	if p.Cmd.ProcessState == nil || !p.Cmd.ProcessState.Exited() {
		t.Errorf("after Stop the server has not exited: %v", p.Cmd.ProcessState)
	}
}

func TestStartReportsWhyItDidNotServe(t *testing.T) {
	_, err := daemon.Start(bin, daemon.Options{Args: []string{"--root", filepath.Join(t.TempDir(), "missing"), "--listen", "127.0.0.1:0"}})
	if err == nil || !strings.Contains(err.Error(), "exited before serving") || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v, want the exit and the server's complaint about the missing root", err)
	}
}

// A failed build says which package and carries go build's own words.
func TestBuildErrorCarriesTheOutput(t *testing.T) {
	err := daemon.Build(filepath.Join(t.TempDir(), "x"), "./no-such-package")
	if err == nil || !strings.Contains(err.Error(), "go build ./no-such-package") || !strings.Contains(err.Error(), "directory not found") {
		t.Fatalf("err = %v", err)
	}
}
