package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/internal/testpki"
)

// tlsServers are real hashlined servers on one workspace holding f.txt:
// plaintext, TLS, mutual TLS, and TLS with an expired certificate.
type tlsServers struct {
	dir                       string
	pki                       *testpki.PKI
	plain, tls, mtls, expired string
}

func startTLSServers(t *testing.T) *tlsServers {
	t.Helper()
	s := &tlsServers{dir: t.TempDir(), pki: testpki.New(t)}
	// One engine per workspace: each server serves a copy of its own.
	root := func() string {
		d := t.TempDir()
		writeFiles(t, d, map[string]string{"f.txt": "secure\n"})
		return d
	}
	p := s.pki
	s.plain = startServer(t, root())
	s.tls = startServer(t, root(), "--tls-cert", p.ServerCert, "--tls-key", p.ServerKey)
	s.mtls = startServer(t, root(), "--tls-cert", p.ServerCert, "--tls-key", p.ServerKey, "--tls-client-ca", p.CA)
	s.expired = startServer(t, root(), "--tls-cert", p.ExpiredCert, "--tls-key", p.ExpiredKey)
	return s
}

func TestTLSClients(t *testing.T) {
	s := startTLSServers(t)
	p := s.pki
	const hint = "Is hashlined running there?"
	tests := []struct {
		name string
		env  []string
		args []string // after "read f.txt"
		code int
		want string // in stdout for exit 0, else in stderr
	}{
		{"https:// with --tls-ca reads over TLS", nil, []string{"--server", "https://" + s.tls, "--tls-ca", p.CA}, exitOK, "1:"},
		{"--tls with a bare address reads over TLS", nil, []string{"--server", s.tls, "--tls", "--tls-ca", p.CA}, exitOK, "1:"},
		{"--tls-ca alone turns TLS on for a bare address", nil, []string{"--server", s.tls, "--tls-ca", p.CA}, exitOK, "1:"},
		{"HASHLINE_SERVER and HASHLINE_TLS_CA read over TLS", []string{"HASHLINE_SERVER=https://" + s.tls, "HASHLINE_TLS_CA=" + p.CA}, nil, exitOK, "1:"},
		{"mutual TLS with --tls-cert and --tls-key reads", nil, []string{"--server", "https://" + s.mtls, "--tls-ca", p.CA, "--tls-cert", p.ClientCert, "--tls-key", p.ClientKey}, exitOK, "1:"},
		{"mutual TLS from the environment reads", []string{"HASHLINE_SERVER=https://" + s.mtls, "HASHLINE_TLS_CA=" + p.CA, "HASHLINE_TLS_CERT=" + p.ClientCert, "HASHLINE_TLS_KEY=" + p.ClientKey}, nil, exitOK, "1:"},
		{"--tls-server-name names a name the certificate holds", nil, []string{"--server", "https://" + s.tls, "--tls-ca", p.CA, "--tls-server-name", "localhost"}, exitOK, "1:"},
		{"http:// reaches a plaintext server", nil, []string{"--server", "http://" + s.plain}, exitOK, "1:"},
		{"the TLS variables are ignored for a plaintext address", []string{"HASHLINE_TLS_CA=/nonexistent.pem", "HASHLINE_TLS_CERT=/nonexistent.pem"}, []string{"--server", s.plain}, exitOK, "1:"},

		{"plaintext against a TLS server says to use https:// or --tls", nil, []string{"--server", s.tls}, exitError, "the server speaks TLS: use https://HOST:PORT or --tls"},
		{"http:// against a TLS server says the same", nil, []string{"--server", "http://" + s.tls}, exitError, "the server speaks TLS: use https://HOST:PORT or --tls"},
		{"https:// against a plaintext server says to use http:// or drop --tls", nil, []string{"--server", "https://" + s.plain, "--tls-ca", p.CA}, exitError, "the server does not speak TLS: use http://HOST:PORT or drop --tls"},
		{"--tls against a plaintext server says the same", nil, []string{"--server", s.plain, "--tls"}, exitError, "the server does not speak TLS: use http://HOST:PORT or drop --tls"},
		{"no --tls-ca for a private CA says to pass --tls-ca", nil, []string{"--server", "https://" + s.tls}, exitError, "signed by an unknown authority: pass --tls-ca"},
		{"the wrong CA says to pass --tls-ca", nil, []string{"--server", "https://" + s.tls, "--tls-ca", p.OtherCA}, exitError, "signed by an unknown authority: pass --tls-ca"},
		{"an expired server certificate says so", nil, []string{"--server", "https://" + s.expired, "--tls-ca", p.CA}, exitError, "has expired or is not valid yet"},
		{"a server name the certificate lacks says to pass --tls-server-name", nil, []string{"--server", "https://" + s.tls, "--tls-ca", p.CA, "--tls-server-name", "hashlined.example"}, exitError, "pass --tls-server-name"},
		{"mutual TLS without a certificate says to pass --tls-cert and --tls-key", nil, []string{"--server", "https://" + s.mtls, "--tls-ca", p.CA}, exitError, "the server asks for a client certificate (mutual TLS): pass --tls-cert FILE and --tls-key FILE"},
		{"mutual TLS with a certificate of another CA says it was refused", nil, []string{"--server", "https://" + s.mtls, "--tls-ca", p.CA, "--tls-cert", p.StrangerCert, "--tls-key", p.StrangerKey}, exitError, "the server refused the client certificate"},

		{"http:// with --tls contradicts itself", nil, []string{"--server", "http://" + s.tls, "--tls"}, exitError, "--tls asks for TLS but http://"},
		{"--tls-cert without --tls-key is refused", nil, []string{"--server", "https://" + s.mtls, "--tls-cert", p.ClientCert}, exitError, "--tls-cert and --tls-key go together"},
		{"a --tls-ca that does not exist is named", nil, []string{"--server", "https://" + s.tls, "--tls-ca", filepath.Join(s.dir, "nope.pem")}, exitError, "nope.pem"},
		{"--local with --tls is refused", nil, []string{"--local", "--tls"}, exitError, "--tls: --local uses the workspace's engine on this machine, over a private socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"HASHLINE_SERVER=127.0.0.1:1"}, tt.env...)
			stdout, stderr, code := binary(t, s.dir, env, nil)(append([]string{"read", "f.txt"}, tt.args...), "")
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			out := stdout
			if code != exitOK {
				out = stderr
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("want %q in:\n%s", tt.want, out)
			}
			if strings.Contains(stderr, hint) {
				t.Errorf("a TLS mismatch must not be reported as a server that is not running:\n%s", stderr)
			}
		})
	}
}

// mcpCall starts hashline mcp with args, calls read_file on f.txt and
// returns whether the result is an error and its text.
func mcpCall(t *testing.T, dir string, args ...string) (bool, string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(hashlineBin, append([]string{"mcp"}, args...)...)
	cmd.Env = cleanEnv()
	cmd.Dir = dir
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "tls-test"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to hashline mcp: %v\nstderr: %s", err, &stderr)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "f.txt"}})
	if err != nil {
		t.Fatalf("%v\nstderr: %s", err, &stderr)
	}
	return res.IsError, res.Content[0].(*sdk.TextContent).Text
}

func TestMCPServerOverTLS(t *testing.T) {
	s := startTLSServers(t)
	p := s.pki
	tests := []struct {
		name    string
		args    []string
		isError bool
		want    string
	}{
		{"https:// with --tls-ca reads", []string{"--server", "https://" + s.tls, "--tls-ca", p.CA}, false, "1:"},
		{"mutual TLS with --tls-cert and --tls-key reads", []string{"--server", "https://" + s.mtls, "--tls-ca", p.CA, "--tls-cert", p.ClientCert, "--tls-key", p.ClientKey}, false, "1:"},
		{"mutual TLS without a certificate names the flags to add", []string{"--server", "https://" + s.mtls, "--tls-ca", p.CA}, true, "pass --tls-cert FILE and --tls-key FILE"},
		{"plaintext against a TLS server says to use https://", []string{"--server", s.tls}, true, "the server speaks TLS: use https://HOST:PORT or --tls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isError, text := mcpCall(t, s.dir, tt.args...)
			if isError != tt.isError || !strings.Contains(text, tt.want) {
				t.Fatalf("read_file: error %v, %q; want error %v and %q", isError, text, tt.isError, tt.want)
			}
			if strings.Contains(text, "check that hashlined is running") {
				t.Errorf("a TLS mismatch must not be reported as a server that is not running: %q", text)
			}
		})
	}
}

func TestMCPTLSFlagsNeedServer(t *testing.T) {
	_, stderr, code := binary(t, t.TempDir(), nil, nil)([]string{"mcp", "--tls-ca", "ca.pem"}, "")
	if code != exitUsage || !strings.Contains(stderr, "--tls-ca needs --server") {
		t.Fatalf("exit %d, stderr %q; want exit %d and --tls-ca needs --server", code, stderr, exitUsage)
	}
}
