//go:build unix

package main

import (
	"bufio"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMCPEmbeddedEndsOnHangUp: hashline mcp --embedded runs the engine in
// its own process, but SIGHUP is the hashlined daemon's reload signal, not
// this program's: a hang-up (its terminal closed, a supervisor's SIGHUP)
// ends the bridge as it ends any program that does not catch it.
func TestMCPEmbeddedEndsOnHangUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(hashlineBin, "mcp", "--embedded", "--state-dir", t.TempDir())
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<16), 1<<22)
		if sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	// The engine serves once the session answers a call.
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	select {
	case l := <-lines:
		if !strings.Contains(l, `"id":1`) {
			t.Fatalf("initialize answered %s", l)
		}
	case err := <-done:
		t.Fatalf("hashline mcp --embedded ended before answering: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no answer to initialize\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("after SIGHUP: %v, want ended by the signal", err)
		}
		if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGHUP {
			t.Errorf("after SIGHUP: %v, want ended by SIGHUP", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("hashline mcp --embedded still runs 30 s after SIGHUP (the embedded engine caught it)\n%s", stderr.String())
	}
}
