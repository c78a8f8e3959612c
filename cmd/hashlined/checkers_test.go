package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

// TestFormatAndCheckFlags: hashlined --format and --check (here from a
// --config file) format a Write through gofmt and report a check's
// finding over gRPC with its line's fresh tag.
func TestFormatAndCheckFlags(t *testing.T) {
	if _, err := exec.LookPath("gofmt"); err != nil {
		t.Fatalf("gofmt is not on PATH (it comes with Go): %v", err)
	}
	root := t.TempDir()
	conf := filepath.Join(t.TempDir(), "hashlined.yaml")
	if err := os.WriteFile(conf, []byte("check:\n  - \"*.go=awk '/TODO/ { print FILENAME \\\":\\\" FNR \\\": a TODO\\\" }' {}\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, addr := start(t, nil, "--root", root, "--listen", "127.0.0.1:0", "--format", "*.go=gofmt", "--config", conf)
	c, ctx := dial(t, addr, client.WithAgentID("fmt"))
	r, err := c.Write(ctx, &hashlinev1.WriteRequest{Path: "a.go", Content: "package a\nvar X=1 // TODO\n"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "package a\n\nvar X = 1 // TODO\n"
	got, _ := os.ReadFile(filepath.Join(root, "a.go"))
	if string(got) != want || r.GetVersion() != workspace.Version(got) || r.GetTotalLines() != 3 {
		t.Errorf("wrote %q (version %s, %d lines), want gofmt's %q", got, r.GetVersion(), r.GetTotalLines(), want)
	}
	if len(r.GetWarnings()) != 1 || !strings.Contains(r.GetWarnings()[0], "formatted with gofmt") {
		t.Errorf("warnings %q", r.GetWarnings())
	}
	ds := r.GetDiagnostics()
	if len(ds) != 1 || ds[0].GetLine() != 3 || ds[0].GetSource() != "check" || ds[0].GetChecker() != "awk" || ds[0].GetMessage() != "a TODO" || !strings.HasPrefix(ds[0].GetRef(), "3:") {
		t.Errorf("diagnostics %v", ds)
	}
}

// TestCommandFlagsRefusedAtStart: a rule that does not parse is a usage
// error; a program that is not there stops the start, naming the flag.
func TestCommandFlagsRefusedAtStart(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--format", "*.go"}, 2, "GLOB=COMMAND"},
		{[]string{"--check", "*.go=hashline-no-such-checker {}"}, 1, "--check:"},
		{[]string{"--check-timeout", "0s"}, 1, "--check-timeout"},
	} {
		out, err := exec.Command(binary, append([]string{"serve", "--root", t.TempDir(), "--listen", "127.0.0.1:0"}, tt.args...)...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tt.code || !strings.Contains(string(out), tt.want) {
			t.Errorf("%v: exit %v, want %d; output %q", tt.args, err, tt.code, out)
		}
	}
	// Run as root, the commands run as nobody, who cannot enter a
	// temporary directory private to root: refused at start, not at the
	// first edit.
	if os.Geteuid() == 0 {
		cmd := exec.Command(binary, "serve", "--root", t.TempDir(), "--listen", "127.0.0.1:0", "--format", "*.go=gofmt")
		cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "who cannot enter") {
			t.Errorf("a private TMPDIR: exit %v, output %q", err, out)
		}
	}
}
