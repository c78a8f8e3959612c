package main

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/testpki"
)

// readOnce reads a.txt through a fresh connection with opts and returns the
// error.
func readOnce(t *testing.T, addr string, opts ...grpc.DialOption) error {
	t.Helper()
	c, ctx := dial(t, addr, client.WithDialOptions(opts...))
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := c.RPC().Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"}, grpc.WaitForReady(false))
	return err
}

func newRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestTLS(t *testing.T) {
	p := testpki.New(t)
	root := newRoot(t)
	_, addr := start(t, nil, "--root", root, "--listen", "127.0.0.1:0", "--tls-cert", p.ServerCert, "--tls-key", p.ServerKey)
	trusting := credentials.NewTLS(&tls.Config{RootCAs: p.Pool()})
	if err := readOnce(t, addr, grpc.WithTransportCredentials(trusting)); err != nil {
		t.Errorf("TLS client: %v", err)
	}
	if err := readOnce(t, addr, grpc.WithTransportCredentials(insecure.NewCredentials())); status.Code(err) != codes.Unavailable {
		t.Errorf("plaintext client against a TLS server: %v, want UNAVAILABLE", err)
	}
	if err := readOnce(t, addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{}))); status.Code(err) != codes.Unavailable {
		t.Errorf("client that does not trust the server's CA: %v, want UNAVAILABLE", err)
	}
}

func TestMutualTLS(t *testing.T) {
	p := testpki.New(t)
	root := newRoot(t)
	_, addr := start(t, nil, "--root", root, "--listen", "127.0.0.1:0", "--tls-cert", p.ServerCert, "--tls-key", p.ServerKey, "--tls-client-ca", p.CA)
	stranger, err := tls.LoadX509KeyPair(p.StrangerCert, p.StrangerKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{name: "client with a certificate from the CA", certs: []tls.Certificate{p.Client()}, ok: true},
		{name: "client without a certificate", certs: nil},
		{name: "client with a certificate from another CA", certs: []tls.Certificate{stranger}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			creds := credentials.NewTLS(&tls.Config{RootCAs: p.Pool(), Certificates: tt.certs})
			err := readOnce(t, addr, grpc.WithTransportCredentials(creds))
			if tt.ok && err != nil {
				t.Errorf("refused: %v", err)
			}
			if !tt.ok && status.Code(err) != codes.Unavailable {
				t.Errorf("err = %v, want the handshake refused (UNAVAILABLE)", err)
			}
		})
	}
}

// bearer sends a token with every call, over plaintext too.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}
func (bearer) RequireTransportSecurity() bool { return false }

func TestTokensFromFileAndReloadOnSIGHUP(t *testing.T) {
	root := newRoot(t)
	const first, second = "first-token-0123456789", "second-token-0123456789"
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	writeTokens := func(tok string) {
		if err := os.WriteFile(file, []byte("tokens:\n  - token: "+tok+"\n    agent: a\n    permission: read\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeTokens(first)
	cmd, addr := start(t, []string{"HASHLINED_TOKENS=" + file}, "--root", root, "--listen", "127.0.0.1:0")
	if err := readOnce(t, addr, grpc.WithPerRPCCredentials(bearer(first))); err != nil {
		t.Fatalf("with the token: %v", err)
	}
	if err := readOnce(t, addr); status.Code(err) != codes.Unauthenticated {
		t.Errorf("without a token: %v", err)
	}
	// Health needs no token.
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health without a token: %v", err)
	}

	// A broken file is not loaded: the first token keeps working.
	if err := os.WriteFile(file, []byte("tokens: [{token: short}]"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := readOnce(t, addr, grpc.WithPerRPCCredentials(bearer(first))); err != nil {
		t.Errorf("after a bad reload, the old token: %v", err)
	}

	writeTokens(second)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for readOnce(t, addr, grpc.WithPerRPCCredentials(bearer(second))) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the new token never worked after SIGHUP")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := readOnce(t, addr, grpc.WithPerRPCCredentials(bearer(first))); status.Code(err) != codes.Unauthenticated {
		t.Errorf("the old token after reload: %v", err)
	}
}

func TestNetworkAddressNeedsTokensOrAnExplicitOptOut(t *testing.T) {
	root := newRoot(t)
	out, err := exec.Command(binary, "serve", "--root", root, "--listen", "0.0.0.0:0").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "--tokens") || !strings.Contains(string(out), "--insecure-no-auth") {
		t.Errorf("0.0.0.0 without tokens: exit %v, output %q", err, out)
	}
	_, addr := start(t, nil, "--root", root, "--listen", "0.0.0.0:0", "--insecure-no-auth")
	if _, port, _ := net.SplitHostPort(addr); readOnce(t, "127.0.0.1:"+port) != nil {
		t.Error("--insecure-no-auth did not serve")
	}
	file := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(file, []byte(`{"tokens": [{"token": "json-token-0123456789", "agent": "j", "permission": "write"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// One engine per workspace: the first still serves root.
	_, addr = start(t, nil, "--root", newRoot(t), "--listen", "0.0.0.0:0", "--tokens", file)
	if _, port, _ := net.SplitHostPort(addr); readOnce(t, "127.0.0.1:"+port, grpc.WithPerRPCCredentials(bearer("json-token-0123456789"))) != nil {
		t.Error("a network address with --tokens did not serve")
	}
}

func TestBadSecuritySettingsFailWithExitOne(t *testing.T) {
	p := testpki.New(t)
	badTokens := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(badTokens, []byte("tokens: [{token: short, agent: a, permission: read}]"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tokens", "/does/not/exist.yaml"}, "--tokens"},
		{[]string{"--tokens", badTokens}, "at least 16"},
		{[]string{"--tls-cert", p.ServerCert}, "--tls-key"},
		{[]string{"--tls-client-ca", p.CA}, "--tls-client-ca"},
		{[]string{"--tls-cert", p.ServerCert, "--tls-key", p.CA}, "--tls-cert/--tls-key"},
		{[]string{"--tls-cert", p.ServerCert, "--tls-key", p.ServerKey, "--tls-client-ca", p.ServerKey}, "no PEM certificate"},
		{[]string{"--rate", "-1"}, "--rate"},
		{[]string{"--metrics-listen", "nonsense"}, "--metrics-listen"},
	} {
		args := append([]string{"serve", "--root", t.TempDir(), "--listen", "127.0.0.1:0"}, tt.args...)
		out, err := exec.Command(binary, args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), tt.want) {
			t.Errorf("%v: exit %v, output %q, want exit 1 mentioning %q", tt.args, err, out, tt.want)
		}
	}
}

func TestMetricsEndpoint(t *testing.T) {
	root := newRoot(t)
	_, addr, lines := startLines(t, nil, "--root", root, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	var url string
	for _, l := range lines {
		if _, u, ok := strings.Cut(l, "metrics on "); ok {
			url = u
		}
	}
	if url == "" {
		t.Fatalf("no metrics line in %q", lines)
	}
	c, ctx := dial(t, addr)
	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(r.GetLines()[0]), "", "beta")}}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`hashline_edit_outcomes_total{outcome="applied"} 1`,
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Read",grpc_service="hashline.v1.FileService",grpc_type="unary"} 1`,
		`grpc_server_handling_seconds_bucket{grpc_method="Edit"`,
		`go_goroutines`,
		`hashline_cache_bytes `,
		`hashline_cache_hits_total `,
		`hashline_cache_misses_total `,
		`hashline_grep_held_bytes 0`,
		`hashline_grep_budget_bytes 2.68435456e+08`,
		`hashline_intent_remove_failures_total 0`,
		`hashline_intent_records_open 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestHealthTurnsNotServingAtShutdown watches health from a client while
// the server gets SIGTERM: NOT_SERVING must arrive before the server goes.
func TestHealthTurnsNotServingAtShutdown(t *testing.T) {
	root := newRoot(t)
	cmd, addr := start(t, nil, "--root", root, "--listen", "127.0.0.1:0", "--shutdown-grace", "10s")
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w, err := healthpb.NewHealthClient(conn).Watch(ctx, &healthpb.HealthCheckRequest{Service: "hashline.v1.FileService"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first status %v %v", r, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r, err := w.Recv()
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("after SIGTERM: %v %v, want NOT_SERVING", r, err)
	}
	cancel() // let the graceful stop finish
	waitExit(t, cmd, 15*time.Second, "after SIGTERM")
}
