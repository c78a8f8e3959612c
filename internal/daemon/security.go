package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/hashline/hashline/server"
)

// tlsOption returns the grpc credentials for --tls-cert/--tls-key (and
// --tls-client-ca for mutual TLS), or nil when TLS is off.
func tlsOption(c *config) (grpc.ServerOption, error) {
	if c.tlsCert == "" && c.tlsKey == "" {
		if c.tlsClientCA != "" {
			return nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key: client certificates are checked inside a TLS connection")
		}
		return nil, nil
	}
	if c.tlsCert == "" || c.tlsKey == "" {
		return nil, errors.New("--tls-cert and --tls-key go together: give both, or neither for plaintext")
	}
	cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.tlsClientCA != "" {
		pem, err := os.ReadFile(c.tlsClientCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-client-ca %s: no PEM certificate in it", c.tlsClientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return grpc.Creds(credentials.NewTLS(cfg)), nil
}

// isLoopback reports whether a TCP listen address only accepts local
// connections: a loopback IP or "localhost". An empty host, 0.0.0.0, ::
// and any other name are treated as reachable from the network.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkExposure refuses to serve the network without tokens, and warns
// about tokens that would cross it in cleartext.
func checkExposure(c *config, logger *slog.Logger) error {
	if c.listen == "" || strings.HasPrefix(c.listen, "unix://") || isLoopback(c.listen) {
		return nil
	}
	if c.tokens == "" && !c.insecureNoAuth {
		return fmt.Errorf("--listen %s is reachable from the network and no --tokens file is set: anyone who can connect could read and change the workspace. Give --tokens FILE (see SECURITY.md), listen on 127.0.0.1 or a unix socket, or pass --insecure-no-auth if the network itself is trusted", c.listen)
	}
	if c.tokens == "" {
		logger.Warn("serving the network without authentication (--insecure-no-auth): anyone who can connect can read and change the workspace", "listen", c.listen)
	} else if c.tlsCert == "" {
		logger.Warn("tokens are sent in cleartext over the network; give --tls-cert and --tls-key", "listen", c.listen)
	}
	return nil
}

// loadAuth reads --tokens; reload reads it again, keeping the tokens in
// force when the file no longer parses. Both are nil when no token file is
// set.
func loadAuth(c *config, logger *slog.Logger) (a *server.Authenticator, reload func(), err error) {
	if c.tokens == "" {
		return nil, nil, nil
	}
	toks, err := server.LoadTokens(c.tokens)
	if err != nil {
		return nil, nil, fmt.Errorf("--tokens: %w", err)
	}
	if fi, err := os.Stat(c.tokens); err == nil && fi.Mode().Perm()&0o077 != 0 {
		logger.Warn("the token file is readable by other users; chmod 600 it", "file", c.tokens, "mode", fi.Mode().Perm().String())
	}
	a = server.NewAuthenticator(toks, logger)
	logger.Info("tokens loaded", "file", c.tokens, "tokens", toks.Len())
	return a, func() {
		t, err := server.LoadTokens(c.tokens)
		if err != nil {
			logger.Error("SIGHUP: token file not reloaded; the previous tokens stay in force", "file", c.tokens, "err", err)
			return
		}
		a.Replace(t)
		logger.Info("SIGHUP: tokens reloaded", "file", c.tokens, "tokens", t.Len())
	}, nil
}
