package client

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTLSFailuresAndRetries: a handshake that failed on a named mismatch
// is not retried (it would fail the same way), while anything a server
// restart can also cause is.
func TestTLSFailuresAndRetries(t *testing.T) {
	tests := []struct {
		name  string
		msg   string
		want  TLSProblem
		retry bool
	}{
		{"an unknown authority is named and not retried", `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`, UnknownAuthority, false},
		{"an expired certificate is named and not retried", `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2026-11-26T07:00:00Z is after 2026-11-26T06:00:00Z"`, CertificateExpired, false},
		{"a name mismatch is named and not retried", `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate is valid for localhost, not hashlined.example"`, NameMismatch, false},
		{"a plaintext server is named and not retried", `connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`, ServerSpeaksPlaintext, false},
		{"a certificate-required alert is named and not retried", `connection error: desc = "error reading server preface: remote error: tls: certificate required"`, ClientCertificateRequired, false},
		{"a closed connection after the preface may be a restart and is retried", `connection error: desc = "error reading server preface: EOF"`, ServerSpeaksTLS, true},
		{"a handshake cut off by a restart is retried", `connection error: desc = "transport: authentication handshake failed: EOF"`, NoTLSProblem, true},
		{"a refused connection is no TLS problem and is retried", `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`, NoTLSProblem, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := status.Error(codes.Unavailable, tt.msg)
			if got := DiagnoseTLS(err); got != tt.want {
				t.Errorf("DiagnoseTLS = %d (%s), want %d (%s)", got, got, tt.want, tt.want)
			}
			if got := unavailable(err); got != tt.retry {
				t.Errorf("retried = %v, want %v", got, tt.retry)
			}
			if got := keyed(err); got != tt.retry {
				t.Errorf("an edit retried = %v, want %v", got, tt.retry)
			}
		})
	}
}
