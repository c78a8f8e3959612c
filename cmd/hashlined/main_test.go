package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/hashline"
)

var binary string

// TestMain builds the real hashlined once; the tests run it as a
// subprocess and talk to it over real sockets.
func TestMain(m *testing.M) {
	var err error
	if binary, err = binarytest.Build(binarytest.Hashlined, "-race"); err != nil {
		binarytest.Cleanup()
		panic(err)
	}
	// The servers these tests start keep their state (internal/state)
	// under $XDG_STATE_HOME: here, not in the user's.
	state, err := os.MkdirTemp("", "hashlined-test-state-")
	if err != nil {
		binarytest.Cleanup()
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	binarytest.StopEngines(state)
	binarytest.Cleanup()
	os.RemoveAll(state)
	os.Exit(code)
}

// start runs hashlined serve with args and returns the address it prints.
func start(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addr, _ := startLines(t, env, args...)
	return cmd, addr
}

// startLines is start that also returns the lines printed before the
// serving line (e.g. the metrics address).
func startLines(t *testing.T, env []string, args ...string) (*exec.Cmd, string, []string) {
	t.Helper()
	return startBinary(t, binary, env, args...)
}

// startBinary is startLines with another build of hashlined.
func startBinary(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, string, []string) {
	t.Helper()
	p, err := binarytest.Start(bin, binarytest.Options{Args: args, Env: env, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p.Cmd, p.Addr, p.Before
}

// dial connects a client to addr; both it and the context end with the test.
func dial(t *testing.T, addr string, opts ...client.Option) (*client.Client, context.Context) {
	t.Helper()
	c, err := client.Dial(addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c, ctx
}

func TestServeOverLoopbackWithRealBinary(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, addr := start(t, nil, "--root", root, "--listen", "127.0.0.1:0")
	c, ctx := dial(t, addr, client.WithAgentID("e2e"))

	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	beta := client.Ref(r.GetLines()[1])
	if _, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Replace(beta, "", "gamma")}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Replace(beta, "", "delta")}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) || len(stale.Refs) != 1 || !strings.HasSuffix(stale.Refs[0].GetCurrentLine(), "|gamma") {
		t.Fatalf("second edit with the old ref: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "alpha\ngamma\n" {
		t.Errorf("file = %q", b)
	}

	// SIGTERM: health goes away, the process exits 0.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, 20*time.Second, "after SIGTERM")
}

// waitExit waits for cmd to exit 0, failing the test if it exits otherwise
// or is still running after d.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration, when string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit %s: %v", when, err)
		}
	case <-time.After(d):
		t.Fatalf("hashlined still running %v %s", d, when)
	}
}

func TestServeOnUnixSocketWithEnvConfig(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "h.sock")
	_, addr := start(t, []string{"HASHLINED_ROOT=" + root, "HASHLINED_LISTEN=unix://" + sock, "HASHLINED_HASH_LEN=6"})
	if addr != "unix://"+sock {
		t.Fatalf("addr = %q", addr)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode: %v %v", fi, err)
	}
	c, ctx := dial(t, addr)
	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if h := r.GetLines()[0].GetHash(); len(h) != 6 {
		t.Errorf("HASHLINED_HASH_LEN=6 gave hash %q", h)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "hashline.v1.FileService"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health = %v %v", h, err)
	}
}

func TestBadCommandLinesExitTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  []string
	}{
		{name: "no command", args: nil},
		{name: "unknown command", args: []string{"run"}},
		{name: "unknown flag", args: []string{"serve", "--nope"}},
		{name: "stray argument", args: []string{"serve", "dir"}},
		{name: "bad env value", args: []string{"serve"}, env: []string{"HASHLINED_HASH_LEN=abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, tt.args...)
			// Should a bad line ever be accepted, the server must not take
			// the default port or outlive the test.
			cmd.Env = append(os.Environ(), append(tt.env, "HASHLINED_LISTEN=127.0.0.1:0")...)
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Errorf("exit = %v, want 2", err)
			}
		})
	}
}

func TestBadSettingsFailWithExitOne(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--hash-len", "9", "--listen", "127.0.0.1:0"},
		{"serve", "--root", "/does/not/exist", "--listen", "127.0.0.1:0"},
		{"serve", "--log-format", "xml", "--listen", "127.0.0.1:0"},
		{"serve", "--cache-bytes", "-1", "--listen", "127.0.0.1:0"},
		{"serve", "--view-entries", "0", "--listen", "127.0.0.1:0"},
		{"serve", "--state-bytes", "-1", "--listen", "127.0.0.1:0"},
		{"serve", "--history-bytes", "100", "--listen", "127.0.0.1:0"},
		{"serve", "--history-age", "0s", "--listen", "127.0.0.1:0"},
		{"serve", "--request-id-ttl", "-1s", "--listen", "127.0.0.1:0"},
		{"serve", "--request-id-bytes", "0", "--listen", "127.0.0.1:0"},
		{"serve", "--view-bytes", "0", "--listen", "127.0.0.1:0"},
		{"serve", "--streams-per-agent", "-1", "--listen", "127.0.0.1:0"},
		{"serve", "--max-pattern-bytes", "0", "--listen", "127.0.0.1:0"},
		{"serve", "--grep-bytes", "0", "--listen", "127.0.0.1:0"},
	} {
		out, err := exec.Command(binary, args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "--") {
			t.Errorf("%v: exit %v, output %q", args, err, out)
		}
	}
}

// TestRequireReadFlag: by default an agent must read a file before editing
// its lines; HASHLINED_REQUIRE_READ=false lifts that.
func TestRequireReadFlag(t *testing.T) {
	for _, tt := range []struct {
		env    []string
		reason string
	}{
		{env: nil, reason: "NOT_READ"},
		{env: []string{"HASHLINED_REQUIRE_READ=false"}, reason: ""},
	} {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, addr := start(t, tt.env, "--root", root, "--listen", "127.0.0.1:0")
		c, ctx := dial(t, addr, client.WithAgentID("e2e"))
		ref := client.FormatRef(1, hashline.Hasher{}.Sum("alpha"))
		_, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Replace(ref, "", "beta")}})
		var ce *client.Error
		switch {
		case tt.reason == "" && err != nil:
			t.Errorf("%v: edit without a read: %v", tt.env, err)
		case tt.reason != "" && (!errors.As(err, &ce) || ce.Reason != tt.reason):
			t.Errorf("%v: edit without a read: %v, want %s", tt.env, err, tt.reason)
		}
	}
}

// TestAllowVCSReadFlag: version-control metadata is refused by default;
// HASHLINED_ALLOW_VCS_READ=true (--allow-vcs-read) lets Read reach it, and
// Write is refused either way.
func TestAllowVCSReadFlag(t *testing.T) {
	for _, tt := range []struct {
		env        []string
		readReason string
	}{
		{env: nil, readReason: "VCS_METADATA"},
		{env: []string{"HASHLINED_ALLOW_VCS_READ=true"}, readReason: ""},
	} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, addr := start(t, tt.env, "--root", root, "--listen", "127.0.0.1:0")
		c, ctx := dial(t, addr)
		_, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: ".git/config"})
		switch {
		case tt.readReason == "" && err != nil:
			t.Errorf("%v: read of .git/config: %v", tt.env, err)
		case tt.readReason != "" && !errors.Is(err, client.ErrVCSMetadata):
			t.Errorf("%v: read of .git/config: %v, want %s", tt.env, err, tt.readReason)
		}
		_, err = c.Write(ctx, &hashlinev1.WriteRequest{Path: ".git/config", Content: "[core]\n\tfsmonitor = touch pwned\n"})
		if !errors.Is(err, client.ErrVCSMetadata) {
			t.Errorf("%v: write of .git/config: %v, want %s", tt.env, err, "VCS_METADATA")
		}
		if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); string(b) != "[core]\n" {
			t.Errorf("%v: .git/config = %q", tt.env, b)
		}
	}
}

// TestRequestIDTTLFlag: by default an Edit sent twice with one request_id
// applies once; HASHLINED_REQUEST_ID_TTL=0 turns the table off.
func TestRequestIDTTLFlag(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{env: nil, want: "alpha\nbeta\n"},
		{env: []string{"HASHLINED_REQUEST_ID_TTL=0"}, want: "alpha\nbeta\nbeta\n"},
	} {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, addr := start(t, tt.env, "--root", root, "--listen", "127.0.0.1:0")
		c, ctx := dial(t, addr, client.WithAgentID("e2e"))
		req := &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Append("beta")}, RequestId: "k1"}
		for range 2 {
			if _, err := c.Edit(ctx, req); err != nil {
				t.Fatalf("%v: %v", tt.env, err)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != tt.want {
			t.Errorf("%v: the file holds %q, want %q", tt.env, b, tt.want)
		}
	}
}
