package client_test

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
	"github.com/hashline/hashline/internal/testpki"
)

func TestMain(m *testing.M) {
	code := m.Run()
	binarytest.Cleanup()
	os.Exit(code)
}

// startHashlined runs the real hashlined on a workspace holding a.txt with
// args after serve, and returns its host:port.
func startHashlined(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	p, err := binarytest.Start(bin, binarytest.Options{
		Args: append([]string{"--root", root, "--listen", "127.0.0.1:0", "--log-level", "error"}, args...),
		Env:  []string{"XDG_STATE_HOME=" + state},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p.Addr
}

// readA reads a.txt once, without retries, and returns the error.
func readA(t *testing.T, addr string, opts ...client.Option) error {
	t.Helper()
	c, err := client.Dial(addr, append([]client.Option{client.WithRetry(client.RetryPolicy{}), client.WithTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := c.Read(context.Background(), &hashlinev1.ReadRequest{Path: "a.txt"})
	if err == nil && resp.GetText() == "" && len(resp.GetLines()) == 0 {
		t.Errorf("read over %s: empty response", addr)
	}
	return err
}

func TestTLS(t *testing.T) {
	p := testpki.New(t)
	plain := startHashlined(t)
	tlsAddr := startHashlined(t, "--tls-cert", p.ServerCert, "--tls-key", p.ServerKey)
	mtls := startHashlined(t, "--tls-cert", p.ServerCert, "--tls-key", p.ServerKey, "--tls-client-ca", p.CA)
	expired := startHashlined(t, "--tls-cert", p.ExpiredCert, "--tls-key", p.ExpiredKey)
	trust := client.WithTLSFiles(p.CA, "", "", "")
	tests := []struct {
		name string
		addr string
		opts []client.Option
		want client.TLSProblem // NoTLSProblem: the read succeeds
	}{
		{"an https:// address with the CA reads", "https://" + tlsAddr, []client.Option{trust}, client.NoTLSProblem},
		{"a bare address with WithTLSFiles reads", tlsAddr, []client.Option{trust}, client.NoTLSProblem},
		{"WithTLS with a tls.Config reads", tlsAddr, []client.Option{client.WithTLS(&tls.Config{RootCAs: p.Pool()})}, client.NoTLSProblem},
		{"a localhost name is checked against the certificate and reads", "https://" + strings.Replace(tlsAddr, "127.0.0.1", "localhost", 1), []client.Option{trust}, client.NoTLSProblem},
		{"an http:// address reaches a plaintext server", "http://" + plain, nil, client.NoTLSProblem},
		{"mutual TLS with the client certificate reads", "https://" + mtls, []client.Option{client.WithTLSFiles(p.CA, p.ClientCert, p.ClientKey, "")}, client.NoTLSProblem},
		{"plaintext against a TLS server says the server speaks TLS", tlsAddr, nil, client.ServerSpeaksTLS},
		{"http:// against a TLS server says the server speaks TLS", "http://" + tlsAddr, nil, client.ServerSpeaksTLS},
		{"https:// against a plaintext server says it does not speak TLS", "https://" + plain, []client.Option{trust}, client.ServerSpeaksPlaintext},
		{"the system roots do not know a private CA", "https://" + tlsAddr, nil, client.UnknownAuthority},
		{"the wrong CA is an unknown authority", "https://" + tlsAddr, []client.Option{client.WithTLSFiles(p.OtherCA, "", "", "")}, client.UnknownAuthority},
		{"an expired server certificate says so", "https://" + expired, []client.Option{trust}, client.CertificateExpired},
		{"a server name the certificate does not hold is a mismatch", "https://" + tlsAddr, []client.Option{client.WithTLSFiles(p.CA, "", "", "hashlined.example")}, client.NameMismatch},
		{"mutual TLS without a client certificate says one is needed", "https://" + mtls, []client.Option{trust}, client.ClientCertificateRequired},
		{"mutual TLS with a certificate from another CA is refused", "https://" + mtls, []client.Option{client.WithTLSFiles(p.CA, p.StrangerCert, p.StrangerKey, "")}, client.ClientCertificateRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := readA(t, tt.addr, tt.opts...)
			if got := client.DiagnoseTLS(err); got != tt.want {
				t.Fatalf("DiagnoseTLS = %d (%s), want %d (%s); error: %v", got, got, tt.want, tt.want, err)
			}
			if tt.want == client.NoTLSProblem && err != nil {
				t.Fatalf("read: %v", err)
			}
			if tt.want != client.NoTLSProblem && err == nil {
				t.Fatal("read succeeded")
			}
		})
	}
}

func TestDialRefusesBadTLSSettings(t *testing.T) {
	p := testpki.New(t)
	tests := []struct {
		name, addr string
		opts       []client.Option
		want       string
	}{
		{"http:// with WithTLS contradicts itself", "http://127.0.0.1:1", []client.Option{client.WithTLS(nil)}, "http:// is plaintext but TLS was asked for"},
		{"a CA file that does not exist is named", "https://127.0.0.1:1", []client.Option{client.WithTLSFiles(filepath.Join(t.TempDir(), "nope.pem"), "", "", "")}, "nope.pem"},
		{"a CA file without certificates says so", "https://127.0.0.1:1", []client.Option{client.WithTLSFiles(p.ClientKey, "", "", "")}, "no PEM certificate"},
		{"a certificate without its key is refused", "https://127.0.0.1:1", []client.Option{client.WithTLSFiles(p.CA, p.ClientCert, "", "")}, "go together"},
		{"a key that does not match the certificate is refused", "https://127.0.0.1:1", []client.Option{client.WithTLSFiles(p.CA, p.ClientCert, p.StrangerKey, "")}, "private key does not match public key"},
		{"an https:// address with a path is refused", "https://127.0.0.1:1/x", nil, "want http(s)://host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := client.Dial(tt.addr, tt.opts...)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Dial: %v, want it to say %q", err, tt.want)
			}
		})
	}
}
