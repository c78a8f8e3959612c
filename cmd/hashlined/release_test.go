package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// TestPortTakenFailsLoudly: a second server on a taken port must exit 1
// at once, naming the address and how to pick another, not hang or serve.
func TestPortTakenFailsLoudly(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, tt := range []struct{ name, flag string }{
		{"the gRPC address in use is named with the way out", "--listen"},
		{"the metrics address in use is named with the way out", "--metrics-listen"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"serve", "--root", t.TempDir(), "--listen", "127.0.0.1:0", tt.flag, addr}
			cmd := exec.Command(binary, args...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("exit %v, want 1; stderr %q", err, stderr.String())
			}
			for _, want := range []string{tt.flag + " " + addr, "already in use", tt.flag + " 127.0.0.1:0"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q lacks %q", stderr.String(), want)
				}
			}
			if strings.Contains(stdout.String(), "serving") {
				t.Errorf("stdout says it serves: %q", stdout.String())
			}
		})
	}
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(binary, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary is built from this checkout: a vcs.revision (or the
	// Makefile's -X) gives a commit, and the Go version is the toolchain's.
	s := string(out)
	if !strings.HasPrefix(s, "hashlined ") || !strings.Contains(s, "(commit ") || !strings.Contains(s, ", go1.") {
		t.Errorf("--version printed %q", s)
	}
}

// TestServerTellsItsVersionAndRoot: the start log, the metrics and the
// Status RPC all say which build serves which root.
func TestServerTellsItsVersionAndRoot(t *testing.T) {
	root := newRoot(t)
	_, addr, lines := startLines(t, nil, "--root", root, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--hash-len", "3")
	var url string
	for _, l := range lines {
		if _, u, ok := strings.Cut(l, "metrics on "); ok {
			url = u
		}
	}
	c, ctx := dial(t, addr)
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.GetRoot() != root || st.GetHashLen() != 3 || !st.GetRequireRead() || st.GetVersion() == "" {
		t.Errorf("Status = %v, want root %s, hash_len 3, require_read, a version", st, root)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	want := `hashline_build_info{commit="`
	if !strings.Contains(string(body), want) || !strings.Contains(string(body), `version="`+st.GetVersion()+`"} 1`) {
		t.Errorf("metrics lack hashline_build_info with version %q", st.GetVersion())
	}
}
