package binarytest_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/binarytest"
)

var bin string

func TestMain(m *testing.M) {
	var err error
	if bin, err = binarytest.Build(binarytest.Hashlined); err != nil {
		binarytest.Cleanup()
		panic(err)
	}
	code := m.Run()
	binarytest.Cleanup()
	os.Exit(code)
}

func TestStartFindsTheAddressAndTheLinesBefore(t *testing.T) {
	// A root whose path contains " on " must not confuse the parser.
	root := filepath.Join(t.TempDir(), "served on purpose")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := binarytest.Start(bin, binarytest.Options{Args: []string{"--root", root, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log-level", "error"}})
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
	_, err := binarytest.Start(bin, binarytest.Options{Args: []string{"--root", filepath.Join(t.TempDir(), "missing"), "--listen", "127.0.0.1:0"}})
	if err == nil || !strings.Contains(err.Error(), "exited before serving") || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v, want the exit and the server's complaint about the missing root", err)
	}
}

// A package is built once per process: asking again returns the same
// file, untouched, and other flags make another binary.
func TestBuildBuildsEachBinaryOnce(t *testing.T) {
	before, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	again, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(again)
	if err != nil {
		t.Fatal(err)
	}
	if again != bin || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("second Build gave %s (modified %v), want %s untouched (%v)", again, after.ModTime(), bin, before.ModTime())
	}
	if filepath.Base(again) != "hashlined" {
		t.Errorf("binary named %q, want the command's name", filepath.Base(again))
	}
	other, err := binarytest.Build(binarytest.Hashlined, "-ldflags=-s")
	if err != nil {
		t.Fatal(err)
	}
	if other == bin {
		t.Errorf("other flags gave the same binary %s", other)
	}
}

// A failed build says which package and carries the go command's own words,
// every time it is asked for.
func TestBuildErrorCarriesTheOutput(t *testing.T) {
	for range 2 {
		_, err := binarytest.Build("./no-such-package")
		if err == nil || (!strings.Contains(err.Error(), "go build ./no-such-package") && !strings.Contains(err.Error(), "go run ./no-such-package")) || !strings.Contains(err.Error(), "directory not found") {
			t.Fatalf("err = %v", err)
		}
	}
}
