//go:build unix

package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/hashline/hashline/internal/binarytest"
)

// startLogged starts hashlined with args and returns it with a channel of
// the lines it logs from then on.
func startLogged(t *testing.T, env []string, args ...string) (*binarytest.Process, <-chan string) {
	t.Helper()
	pr, pw := io.Pipe()
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(pr)
		for s.Scan() {
			select {
			case lines <- s.Text():
			default: // a test that stopped reading does not block the server
			}
		}
	}()
	p, err := binarytest.Start(binary, binarytest.Options{Args: args, Env: env, Stderr: pw, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); pw.Close() })
	return p, lines
}

// awaitLog waits for a logged line containing want; it fails the test
// when the server exits (its log ends) or the line does not come.
func awaitLog(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("hashlined's log ended (it exited) before a line with %q", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("no line with %q was logged", want)
		}
	}
}

// systemctl reload sends SIGHUP (examples/systemd/hashlined.service).
// A hashlined without a token file has nothing to reload: it must say so
// and serve on, not end, which systemd takes for a clean stop and does not
// restart. With a token file, SIGHUP reloads it and says so.
func TestSIGHUPReloadsWhatItCanAndServesOn(t *testing.T) {
	cases := []struct {
		name    string
		tokens  bool
		wantLog string
	}{
		{name: "without --tokens it logs that nothing is reloaded", wantLog: "SIGHUP: nothing to reload"},
		{name: "with --tokens it logs the tokens reloaded", tokens: true, wantLog: "SIGHUP: tokens reloaded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t)
			args := []string{"--root", root, "--listen", "127.0.0.1:0"}
			const token = "sighup-token-0123456789"
			if tc.tokens {
				file := filepath.Join(t.TempDir(), "tokens.yaml")
				if err := os.WriteFile(file, []byte("tokens:\n  - token: "+token+"\n    agent: a\n    permission: read\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--tokens", file)
			}
			p, lines := startLogged(t, nil, args...)
			for i := range 2 {
				if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
					t.Fatal(err)
				}
				if l := awaitLog(t, lines, tc.wantLog); !strings.Contains(l, "level=INFO") {
					t.Errorf("SIGHUP %d logged %q, want it at INFO", i+1, l)
				}
				var err error
				if tc.tokens {
					err = readOnce(t, p.Addr, grpc.WithPerRPCCredentials(bearer(token)))
				} else {
					err = readOnce(t, p.Addr)
				}
				if err != nil {
					t.Fatalf("a Read after SIGHUP %d: %v (log: %s)", i+1, err, p.Stderr())
				}
			}
		})
	}
}
