package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// WithTLS makes Dial speak TLS with cfg (nil: the system's roots and the
// address's host as the server name), also for a plain "host:port"
// address; an "https://" address needs no option. A "http://" address
// with WithTLS is an error. cfg is cloned, and TLS 1.2 is the least
// accepted, as hashlined serves.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) {
		if cfg == nil {
			cfg = &tls.Config{}
		}
		o.tls = cfg.Clone()
		if o.tls.MinVersion < tls.VersionTLS12 {
			o.tls.MinVersion = tls.VersionTLS12
		}
	}
}

// WithTLSFiles is WithTLS from PEM files, as the CLI's --tls-* flags give
// them: caFile ("" = the system's roots) holds the CAs to trust instead of
// the system's, certFile and keyFile (both or neither) the client
// certificate a server with mutual TLS asks for, and serverName ("" = the
// address's host) the name the server's certificate must be valid for.
// Dial returns the error of a file that cannot be read or parsed.
func WithTLSFiles(caFile, certFile, keyFile, serverName string) Option {
	cfg, err := TLSConfig(caFile, certFile, keyFile, serverName)
	if err != nil {
		return func(o *options) { o.err = err }
	}
	return WithTLS(cfg)
}

// TLSConfig builds the tls.Config of WithTLSFiles.
func TLSConfig(caFile, certFile, keyFile, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("hashline: TLS CA: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("hashline: TLS CA %s: no PEM certificate in it", caFile)
		}
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("hashline: a TLS client certificate and its key go together: give both, or neither")
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("hashline: TLS client certificate %s and key %s: %w", certFile, keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// splitScheme returns target without an "https://" or "http://" scheme,
// and whether that scheme asks for TLS (tls) or plaintext (plain).
func splitScheme(target string) (rest string, tls, plain bool) {
	lower := strings.ToLower(target)
	switch {
	case strings.HasPrefix(lower, "https://"):
		return strings.TrimSuffix(target[len("https://"):], "/"), true, false
	case strings.HasPrefix(lower, "http://"):
		return strings.TrimSuffix(target[len("http://"):], "/"), false, true
	}
	return target, false, false
}

// TLSProblem is what went wrong in setting up a connection's security, as
// DiagnoseTLS finds it in a call's error.
type TLSProblem int

const (
	// NoTLSProblem: the error is not about TLS (the server may be down).
	NoTLSProblem TLSProblem = iota
	// ServerSpeaksTLS: a plaintext client reached a TLS server.
	ServerSpeaksTLS
	// ServerSpeaksPlaintext: a TLS client reached a plaintext server.
	ServerSpeaksPlaintext
	// UnknownAuthority: the server's certificate is signed by a CA the
	// client does not trust.
	UnknownAuthority
	// CertificateExpired: the server's certificate has expired or is not
	// valid yet.
	CertificateExpired
	// NameMismatch: the server's certificate is not valid for the name the
	// client dialled (or the server name it was given).
	NameMismatch
	// ClientCertificateRequired: the server asks for a client certificate
	// (mutual TLS) and the client sent none.
	ClientCertificateRequired
	// ClientCertificateRejected: the server refused the client's
	// certificate (signed by a CA it does not trust, expired, or not for
	// client authentication).
	ClientCertificateRejected
	// OtherTLSProblem: the TLS handshake failed otherwise.
	OtherTLSProblem
)

// String names the mismatch.
func (p TLSProblem) String() string {
	switch p {
	case ServerSpeaksTLS:
		return "the server speaks TLS but the client does not (use an https:// address or WithTLS)"
	case ServerSpeaksPlaintext:
		return "the server does not speak TLS but the client does (use an http:// address, without WithTLS)"
	case UnknownAuthority:
		return "the server's certificate is signed by an unknown authority (trust its CA)"
	case CertificateExpired:
		return "the server's certificate has expired or is not valid yet"
	case NameMismatch:
		return "the server's certificate is not valid for the name dialled (or the server name given)"
	case ClientCertificateRequired:
		return "the server asks for a client certificate (mutual TLS) and the client has none"
	case ClientCertificateRejected:
		return "the server refused the client certificate"
	case OtherTLSProblem:
		return "the TLS handshake failed"
	}
	return ""
}

// FlagHint says what is wrong and what to do in the words of the flags
// of the hashline CLI and of hashline mcp --server, which share them.
func (p TLSProblem) FlagHint() string {
	switch p {
	case ServerSpeaksTLS:
		return "the server speaks TLS: use https://HOST:PORT or --tls (and --tls-ca FILE for a private CA)"
	case ServerSpeaksPlaintext:
		return "the server does not speak TLS: use http://HOST:PORT or drop --tls"
	case UnknownAuthority:
		return "the server's certificate is signed by an unknown authority: pass --tls-ca FILE with the CA that signed it (env HASHLINE_TLS_CA)"
	case CertificateExpired:
		return "the server's certificate has expired or is not valid yet: hashlined needs a new --tls-cert (or this machine's clock is wrong)"
	case NameMismatch:
		return "the server's certificate is not valid for the host in --server: use a name or address it holds, or pass --tls-server-name NAME"
	case ClientCertificateRequired:
		return "the server asks for a client certificate (mutual TLS): pass --tls-cert FILE and --tls-key FILE (env HASHLINE_TLS_CERT, HASHLINE_TLS_KEY)"
	case ClientCertificateRejected:
		return "the server refused the client certificate: --tls-cert must be signed by a CA in hashlined's --tls-client-ca, valid now, and made for client authentication"
	case OtherTLSProblem:
		return "the TLS handshake failed: check --tls-ca, --tls-cert, --tls-key and --tls-server-name against hashlined's TLS set-up"
	}
	return ""
}

// DiagnoseTLS finds in err, a call's error, whether the connection failed
// for a TLS set-up that does not match the server's, from the words of the
// transport: grpc reports every such failure as UNAVAILABLE with them in
// the message. The calls of a Client made by Dial do more (Error.TLS):
// the words are not always there, since which end notices first is a
// race, so they ask the server.
func DiagnoseTLS(err error) TLSProblem {
	var e *Error
	if errors.As(err, &e) && e.TLS != NoTLSProblem {
		return e.TLS
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return NoTLSProblem
	}
	return classifyTLS(st.Message())
}

func classifyTLS(m string) TLSProblem {
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(m, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("first record does not look like a TLS handshake"):
		return ServerSpeaksPlaintext
	case has("certificate signed by unknown authority"):
		return UnknownAuthority
	case has("certificate has expired or is not yet valid"):
		return CertificateExpired
	case has("x509: certificate is valid for", "x509: cannot validate certificate", "doesn't contain any IP SANs", "certificate is not valid for any names"):
		return NameMismatch
	case has("tls: certificate required", "remote error: tls: handshake failure"):
		return ClientCertificateRequired
	case has("remote error: tls: unknown certificate authority", "remote error: tls: bad certificate", "remote error: tls: expired certificate", "remote error: tls: unsupported certificate", "remote error: tls: certificate revoked"):
		return ClientCertificateRejected
	case has("remote error: tls:", "x509:"):
		return OtherTLSProblem
	case has("error reading server preface"):
		// A TLS server closes a connection that opens with the plaintext
		// HTTP/2 preface; a plaintext hashlined sends its settings first.
		return ServerSpeaksTLS
	}
	return NoTLSProblem
}

// probeTimeout bounds probeTLS: it runs after a call has failed, to say
// why, and must not hold the caller long.
const probeTimeout = 3 * time.Second

// probeTLS opens a connection of its own to network/addr to find out
// whether a failed call's TLS set-up, cfg (nil: plaintext), matches the
// server's. A plaintext client tries a TLS handshake: a server that
// completes one speaks TLS. A TLS client makes cfg's handshake and then
// reads the server's first frame, since under TLS 1.3 a server judges the
// client's certificate only after the client has finished, and says so in
// an alert on that read.
func probeTLS(network, addr, serverName string, cfg *tls.Config) TLSProblem {
	raw, err := net.DialTimeout(network, addr, probeTimeout)
	if err != nil {
		return NoTLSProblem
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(probeTimeout))
	if cfg == nil {
		// Only "does it speak TLS at all" is asked: nothing is sent.
		c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, ServerName: serverName, NextProtos: []string{"h2"}})
		if c.Handshake() == nil {
			return ServerSpeaksTLS
		}
		return NoTLSProblem
	}
	cfg = cfg.Clone()
	cfg.NextProtos = []string{"h2"}
	if cfg.ServerName == "" {
		cfg.ServerName = serverName
	}
	c := tls.Client(raw, cfg)
	if err := c.Handshake(); err != nil {
		return classifyTLS(err.Error())
	}
	// The server's verdict on the client's certificate, or its first
	// frame, comes without being asked; writing first could meet the
	// closed connection (a broken pipe) instead of the alert.
	if _, err := c.Read(make([]byte, 1)); err != nil {
		return classifyTLS(err.Error())
	}
	return NoTLSProblem
}

// probeTarget returns the network, address and server name probeTLS
// dials for a Dial target (after splitScheme), or ok false for a target
// it cannot follow (a resolver scheme other than passthrough and unix).
func probeTarget(target string) (network, addr, serverName string, ok bool) {
	switch {
	case strings.HasPrefix(target, "unix://"):
		return "unix", strings.TrimPrefix(target, "unix://"), "localhost", true
	case strings.HasPrefix(target, "unix:"):
		return "unix", strings.TrimPrefix(target, "unix:"), "localhost", true
	case strings.Contains(target, "://"):
		return "", "", "", false
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return "", "", "", false
	}
	return "tcp", target, host, true
}

// fromStatus is FromStatus, the one place a Client's calls decode their
// errors. A proxy's HTTP error page in place of the server's answer is
// said in the words of the workspace (fromProxy). For a call that could
// not reach the server (UNAVAILABLE without a reason) it says in
// Error.TLS whether the client's TLS set-up does not match the server's;
// an HTTP answer proves the connection's set-up right, so it is not
// probed.
func (c *Client) fromStatus(err error) error {
	err = FromStatus(err)
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c.fromProxy(e)
	if e.Code == codes.Unavailable && e.Reason == "" && e.HTTPStatus == 0 {
		e.TLS = classifyTLS(e.Message)
		if e.TLS == ServerSpeaksTLS {
			// A closed connection is no proof (nor is it, for a client that
			// speaks TLS, about plaintext at all): ask the server.
			e.TLS = NoTLSProblem
		}
		if e.TLS == NoTLSProblem && c.probe.network != "" {
			e.TLS = probeTLS(c.probe.network, c.probe.addr, c.probe.serverName, c.probe.tls)
		}
		// Go's TLS client sends no certificate that the server's list of
		// acceptable CAs does not name: the server then finds none.
		if e.TLS == ClientCertificateRequired && c.probe.tls != nil && (len(c.probe.tls.Certificates) > 0 || c.probe.tls.GetClientCertificate != nil) {
			e.TLS = ClientCertificateRejected
		}
	}
	return err
}
