package main

import (
	"bytes"
	"context"
	"github.com/hashline/hashline/internal/proxytest"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// --workspace names the workspace: before the command or after it, from
// the environment too; a server serving another refuses, and a name that
// is not one is refused before anything is sent.
func TestWorkspaceFlag(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	addr := startServer(t, dir, "--workspace", "alpha")
	run := binary(t, t.TempDir(), []string{"HASHLINE_SERVER=" + addr}, nil)

	for _, args := range [][]string{
		{"status", "--workspace", "alpha"},
		{"--workspace", "alpha", "status"},
	} {
		out, errOut, code := run(args, "")
		if code != exitOK || !strings.Contains(out, "workspace:    alpha\n") {
			t.Errorf("hashline %v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	_, errOut, code := run([]string{"write", "--workspace", "beta", "f.txt"}, "two\n")
	if code != exitError || !strings.Contains(errOut, "WRONG_WORKSPACE") || !strings.Contains(errOut, `serves workspace "alpha", not "beta"`) {
		t.Errorf("a write meant for beta: exit %d\n%s", code, errOut)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "--workspace", "../alpha", "f.txt"}, `--workspace: workspace name "../alpha" has path syntax`},
		{[]string{"read", "--workspace", "alpha.hashline.test", "f.txt"}, "has host syntax"},
		{[]string{"read", "--workspace-domain", "hashline.test", "f.txt"}, "give --workspace NAME too"},
	} {
		_, errOut, code := run(tt.args, "")
		if code != exitError || !strings.Contains(errOut, tt.want) {
			t.Errorf("hashline %v: exit %d, want %q in\n%s", tt.args, code, tt.want, errOut)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("f.txt = %q, %v", b, err)
	}
}

// mcpWith runs hashline mcp with args and env (over the cleaned
// environment), as an MCP client would.
func mcpWith(t *testing.T, env []string, args ...string) *sdk.ClientSession {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(hashlineBin, append([]string{"mcp"}, args...)...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "workspace-test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to hashline mcp %v: %v\nstderr: %s", args, err, &stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// hashline mcp names the workspace in every call it forwards: a server
// serving another workspace refuses its reads and writes (WRONG_WORKSPACE)
// and nothing is written; the right name, from the flag or the
// environment, is served. The engine serving --root checks it too.
func TestMCPWorkspaceFlag(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "one\n"})
	addr := startServer(t, dir, "--workspace", "alpha")

	for _, tt := range []struct {
		name string
		env  []string
		args []string
		ok   bool
	}{
		{"--workspace alpha", nil, []string{"--server", addr, "--workspace", "alpha"}, true},
		{"HASHLINE_WORKSPACE=alpha", []string{"HASHLINE_WORKSPACE=alpha"}, []string{"--server", addr}, true},
		{"--workspace alpha --workspace-domain", nil, []string{"--server", addr, "--workspace", "alpha", "--workspace-domain", "hashline.test"}, true},
		{"--workspace beta", nil, []string{"--server", addr, "--workspace", "beta"}, false},
		{"HASHLINE_WORKSPACE=beta", []string{"HASHLINE_WORKSPACE=beta"}, []string{"--server", addr}, false},
		{"--workspace beta over HASHLINE_WORKSPACE=alpha", []string{"HASHLINE_WORKSPACE=alpha"}, []string{"--server", addr, "--workspace", "beta"}, false},
		// The session attaches to the hashlined serving the root, which
		// checks the name as it does for calls from the network; the
		// router's domain in the environment does not stop the session.
		{"--root with --workspace alpha", []string{"HASHLINE_WORKSPACE_DOMAIN=hashline.test"}, []string{"--root", dir, "--workspace", "alpha"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := mcpWith(t, tt.env, tt.args...)
			file := strings.NewReplacer(" ", "-", "=", "-").Replace(tt.name) + ".txt"
			for _, call := range []struct {
				tool string
				args map[string]any
				ok   string
			}{
				{"read_file", map[string]any{"path": "f.txt"}, "|one"},
				{"write_file", map[string]any{"path": file, "content": "x\n"}, file},
			} {
				text, isErr, err := toolCall(cs, call.tool, call.args)
				if err != nil {
					t.Fatal(err)
				}
				if tt.ok && (isErr || !strings.Contains(text, call.ok)) {
					t.Errorf("%s: error %v: %s", call.tool, isErr, text)
				}
				if !tt.ok && (!isErr || !strings.Contains(text, "WRONG_WORKSPACE") || !strings.Contains(text, `serves workspace "alpha", not "beta"`)) {
					t.Errorf("%s meant for beta: error %v: %s", call.tool, isErr, text)
				}
			}
			_, err := os.Stat(filepath.Join(dir, file))
			if tt.ok != (err == nil) {
				t.Errorf("after write_file, %s: %v", file, err)
			}
		})
	}

	run := binary(t, t.TempDir(), nil, nil)
	for _, tt := range []struct {
		args []string
		want string
	}{
		// The engine serving the root refuses the session's first call,
		// and the session says so rather than that it did not answer.
		{[]string{"mcp", "--root", dir, "--workspace", "beta"}, `which refused the session: hashline: WRONG_WORKSPACE (FailedPrecondition): this server serves workspace "alpha", not "beta"`},
		{[]string{"mcp", "--server", addr, "--workspace", "../alpha"}, `--workspace: workspace name "../alpha" has path syntax`},
		{[]string{"mcp", "--server", addr, "--workspace-domain", "hashline.test"}, "give --workspace NAME too"},
		{[]string{"mcp", "--workspace", "alpha", "--workspace-domain", "hashline.test"}, "--workspace-domain needs --server"},
	} {
		_, errOut, code := run(tt.args, "")
		want := exitUsage
		if tt.args[1] == "--root" {
			want = exitError
		}
		if code != want || !strings.Contains(errOut, tt.want) {
			t.Errorf("hashline %v: exit %d, want %q in\n%s", tt.args, code, tt.want, errOut)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f.txt")); err != nil || string(b) != "one\n" {
		t.Errorf("f.txt = %q, %v", b, err)
	}
}

// serveHTTPStatus starts a plaintext HTTP/2 server that answers every
// request with an HTTP error page, not gRPC, as a stock proxy (an Ingress
// controller's default backend) answers a host it routes nowhere (404) or
// a backend that is down (503), and returns its address.
func serveHTTPStatus(t *testing.T, code int) string {
	addr, _ := proxytest.ServeHTTPStatus(t, code)
	return addr
}

// Behind a stock proxy, the CLI and hashline mcp given --workspace say
// what the proxy's HTTP error means for the workspace (an unknown one is
// NOT_FOUND, one whose hashlined is down UNAVAILABLE), with no advice to
// start a hashlined at the proxy's address.
func TestAProxysHTTPErrorNamesTheWorkspace(t *testing.T) {
	for _, tt := range []struct {
		http int
		code string
		says string
	}{
		{http.StatusNotFound, "NOT_FOUND", `no workspace "zeta" behind this router (the proxy answered HTTP 404 Not Found, not a hashlined); nothing was done. Check the workspace name`},
		{http.StatusServiceUnavailable, "UNAVAILABLE", `workspace "zeta"'s hashlined is down, restarting or not answering (the proxy answered HTTP 503 Service Unavailable, not a hashlined). Retry in a few seconds`},
	} {
		t.Run(tt.code, func(t *testing.T) {
			addr := serveHTTPStatus(t, tt.http)
			run := binary(t, t.TempDir(), nil, nil)
			for _, args := range [][]string{
				{"read", "--server", addr, "--workspace", "zeta", "f.txt"},
				{"write", "--server", addr, "--workspace", "zeta", "f.txt"},
			} {
				_, errOut, code := run(args, "x\n")
				if code != exitError || !strings.Contains(errOut, tt.code) || !strings.Contains(errOut, tt.says) || !strings.Contains(errOut, "default backend - ") {
					t.Errorf("hashline %v: exit %d, want %s saying %q:\n%s", args, code, tt.code, tt.says, errOut)
				}
				if strings.Contains(errOut, "hashlined serve") {
					t.Errorf("hashline %v: advises starting a hashlined at the proxy's address:\n%s", args, errOut)
				}
			}

			cs := mcpWith(t, nil, "--server", addr, "--workspace", "zeta")
			for _, call := range []struct {
				tool   string
				args   map[string]any
				change bool
			}{
				{"read_file", map[string]any{"path": "f.txt"}, false},
				{"write_file", map[string]any{"path": "f.txt", "content": "x\n"}, true},
			} {
				text, isErr, err := toolCall(cs, call.tool, call.args)
				if err != nil {
					t.Fatal(err)
				}
				if !isErr || !strings.Contains(text, tt.code) || !strings.Contains(text, tt.says) {
					t.Errorf("%s: error %v, want %s saying %q:\n%s", call.tool, isErr, tt.code, tt.says, text)
				}
				if strings.Contains(text, "hashlined is running") || strings.Contains(text, "unreachable") {
					t.Errorf("%s: sends the model to a hashlined at the proxy's address:\n%s", call.tool, text)
				}
				maybe := strings.Contains(text, "may or may not have been applied")
				if want := call.change && tt.http != http.StatusNotFound; maybe != want {
					t.Errorf("%s: says the change may have been applied: %v, want %v:\n%s", call.tool, maybe, want, text)
				}
			}
		})
	}
}
