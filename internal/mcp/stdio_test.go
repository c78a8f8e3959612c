package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/daemon"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// hashlineBinary builds cmd/hashline once per test run.
func hashlineBinary(t *testing.T) string {
	t.Helper()
	bin, err := binarytest.Build(binarytest.Hashline)
	if err != nil {
		t.Fatalf("building cmd/hashline: %v", err)
	}
	return bin
}

func TestMain(m *testing.M) {
	// The engines these tests start keep their state (internal/state)
	// under $XDG_STATE_HOME: here, not in the user's.
	state, err := os.MkdirTemp("", "hashline-mcp-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	binarytest.StopEngines(state)
	binarytest.Cleanup()
	os.RemoveAll(state)
	os.Exit(code)
}

// stdioSession runs `hashline mcp args...` as a subprocess and connects an
// MCP client to its stdin/stdout, as Claude Desktop or Cursor would.
func stdioSession(t *testing.T, stderr *bytes.Buffer, args ...string) (*sdk.ClientSession, *exec.Cmd) {
	t.Helper()
	return stdioSessionEnv(t, stderr, nil, args...)
}

func callText(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res.Content[0].(*sdk.TextContent).Text, res.IsError
}

func TestStdioSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, mode := range backends {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, "f.go"), []byte("package f\n\nvar x = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			logs := &syncBuffer{}
			args := []string{"--root", root}
			if mode == "server" {
				args = []string{"--server", startServer(t, root, logs), "--agent", "bob"}
			}
			var stderr bytes.Buffer
			cs, cmd := stdioSession(t, &stderr, args...)

			if info := cs.InitializeResult().ServerInfo; info.Name != "hashline" {
				t.Errorf("server name %q", info.Name)
			}
			text, isErr := callText(t, cs, "read_file", map[string]any{"path": "f.go"})
			if isErr || !strings.Contains(text, "3:") {
				t.Fatalf("read: %v %s", isErr, text)
			}
			lines := tagged(t, text)
			// A long page, with quotes and characters JSON escapes or not.
			var big strings.Builder
			for i := range 2500 {
				fmt.Fprintf(&big, "s%d := \"<\\\"%d\\\">\" // 世界\n", i, i)
			}
			if err := os.WriteFile(filepath.Join(root, "big.go"), []byte(big.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			text, isErr = callText(t, cs, "read_file", map[string]any{"path": "big.go"})
			if page := tagged(t, text); isErr || len(page) != 2000 || !strings.HasSuffix(page[1999], `|s1999 := "<\"1999\">" // 世界`) {
				t.Fatalf("long read: %v, %d lines, last %q", isErr, len(page), page[len(page)-1])
			}
			text, isErr = callText(t, cs, "edit_file", map[string]any{"path": "f.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": ref(lines[2]), "new_text": "var x = 2"}},
			}})
			if isErr || !strings.HasPrefix(text, "Updated f.go (3 lines)") {
				t.Fatalf("edit: %v %s", isErr, text)
			}
			// The same ref again is stale now.
			text, isErr = callText(t, cs, "edit_file", map[string]any{"path": "f.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": ref(lines[2]), "new_text": "var x = 3"}},
			}})
			if !isErr || !strings.Contains(text, ">>> 3:") || !strings.HasPrefix(text, "1 line(s) changed since last read") {
				t.Fatalf("stale edit: %v %s", isErr, text)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "f.go")); string(b) != "package f\n\nvar x = 2\n" {
				t.Fatalf("file = %q", b)
			}

			// Closing stdin ends the server cleanly and quietly.
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d, stderr: %s", code, &stderr)
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr not empty: %s", &stderr)
			}
			if mode == "server" && !strings.Contains(logs.String(), "agent=bob") {
				t.Errorf("server log has no agent=bob:\n%s", logs)
			}
		})
	}
}

func TestStdioServerDown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	var stderr bytes.Buffer
	cs, cmd := stdioSession(t, &stderr, "--server", addr)
	text, isErr := callText(t, cs, "read_file", map[string]any{"path": "f.go"})
	if !isErr || !strings.Contains(text, "(UNAVAILABLE)") || !strings.Contains(text, "hashlined is running") {
		t.Errorf("read with the server down: %v %s", isErr, text)
	}
	// A refused connection sent nothing: the edit was not applied, and
	// saying it may have been would make a model re-read and doubt.
	text, isErr = callText(t, cs, "edit_file", map[string]any{"path": "f.go", "edits": []any{map[string]any{"append": map[string]any{"text": "x"}}}})
	if !isErr || !strings.Contains(text, "nothing was sent") || strings.Contains(text, "may or may not have been applied") {
		t.Errorf("edit with the server down: %v %s", isErr, text)
	}
	if err := cs.Close(); err != nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("close: %v, exit %d, stderr: %s", err, cmd.ProcessState.ExitCode(), &stderr)
	}
}

func TestStdioCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root := t.TempDir()
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{"state-dir with server", []string{"--state-dir", t.TempDir(), "--server", "127.0.0.1:1"}, 2, "", "--state-dir and --server exclude each other"},
		{"a state directory inside the root", []string{"--root", root, "--state-dir", filepath.Join(root, "state")}, 1, "", "--state-dir: "},
		{"a negative state budget", []string{"--root", root, "--state-bytes", "-1"}, 2, "", "--state-bytes"},
		{"help", []string{"--help"}, 0, "--server ADDR", ""},
		{"root and server together", []string{"--root", ".", "--server", "127.0.0.1:1"}, 2, "", "--root and --server exclude each other"},
		{"fsync with server", []string{"--fsync=false", "--server", "127.0.0.1:1"}, 2, "", "--fsync and --server exclude each other"},
		{"a missing root", []string{"--root", "/does/not/exist"}, 1, "", "--root"},
		{"a stray argument", []string{"extra"}, 2, "", `unexpected argument "extra"`},
		{"an unknown flag", []string{"--nope"}, 2, "", "hashline mcp: unknown flag --nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(hashlineBinary(t), append([]string{"mcp"}, tc.args...)...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Stdin = strings.NewReader("")
			err := cmd.Run()
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(stdout.String(), tc.inStdout) || !strings.Contains(stderr.String(), tc.inStderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, &stdout, &stderr)
			}
		})
	}
}

// TestStdioServerWithTokens proxies to a hashlined started with --tokens:
// the bridge must send its token (--token, or HASHLINE_TOKEN), and a
// missing one must be an error that says how to give it.
func TestStdioServerWithTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const token = "0123456789abcdef-mcp-test"
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.go"), []byte("package f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	toks, err := server.ParseTokens([]byte("tokens:\n  - token: " + token + "\n    agent: desk\n    permission: write\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{Auth: server.NewAuthenticator(toks, nil)})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	addr := lis.Addr().String()

	for _, tc := range []struct {
		name string
		args []string
		env  string
	}{
		{"flag", []string{"--token", token}, ""},
		{"environment", nil, token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cs, _ := stdioSessionEnv(t, &stderr, []string{"HASHLINE_TOKEN=" + tc.env}, append([]string{"--server", addr}, tc.args...)...)
			defer cs.Close()
			if text, isErr := callText(t, cs, "read_file", map[string]any{"path": "f.go"}); isErr || !strings.Contains(text, "1:") {
				t.Errorf("read with the token: %v %s", isErr, text)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		var stderr bytes.Buffer
		cs, _ := stdioSessionEnv(t, &stderr, []string{"HASHLINE_TOKEN="}, "--server", addr)
		defer cs.Close()
		text, isErr := callText(t, cs, "read_file", map[string]any{"path": "f.go"})
		if !isErr || !strings.Contains(text, "--token") {
			t.Errorf("read without a token: %v %s", isErr, text)

		}
	})
	// The root's own engine (hashline mcp without --server attaches to
	// it) may have tokens too: the session sends its token there.
	t.Run("the root's engine", func(t *testing.T) {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "f.go"), []byte("package f\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "tokens.yaml")
		if err := os.WriteFile(file, []byte("tokens:\n  - token: "+token+"\n    agent: desk\n    permission: write\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		wait, err := daemon.Embed(ctx, "test engine", []string{"--root", root, "--listen", "", "--tokens", file, "--log-level", "error"}, io.Discard)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		defer func() { cancel(); wait() }()
		var stderr bytes.Buffer
		cs, _ := stdioSessionEnv(t, &stderr, []string{"HASHLINE_TOKEN="}, "--root", root, "--token", token)
		if text, isErr := callText(t, cs, "read_file", map[string]any{"path": "f.go"}); isErr || !strings.Contains(text, "1:") {
			t.Errorf("read with the token: %v %s", isErr, text)
		}
		cs.Close()
		var out bytes.Buffer
		cmd := exec.Command(hashlineBinary(t), "mcp", "--root", root)
		cmd.Env = append(os.Environ(), "HASHLINE_TOKEN=")
		cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &out, strings.NewReader("")
		var ee *exec.ExitError
		if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), "pass --token or set HASHLINE_TOKEN") {
			t.Errorf("without a token: %v\n%s", err, &out)
		}
	})
}

// stdioSessionEnv is stdioSession with extra environment variables.
func stdioSessionEnv(t *testing.T, stderr *bytes.Buffer, env []string, args ...string) (*sdk.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(hashlineBinary(t), append([]string{"mcp"}, args...)...)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "stdio-test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to hashline mcp: %v\nstderr: %s", err, stderr)
	}
	return cs, cmd
}
