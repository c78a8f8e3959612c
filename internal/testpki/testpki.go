// Package testpki makes throwaway certificates for tests of TLS and mutual
// TLS: a CA, a server certificate for 127.0.0.1 and localhost, a client
// certificate, and the wrong ones a careless set-up meets (a client
// certificate from another CA, an expired server certificate), written as
// PEM files. Tests call New; the TS client's tests run cmd/testpki, which
// writes the same files into a directory.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// PKI holds the paths of the PEM files Write made.
type PKI struct {
	// CA signed the server and client certificates.
	CA string
	// OtherCA signed StrangerCert: a CA the server does not trust.
	OtherCA string
	// ServerCert and ServerKey are valid for 127.0.0.1, ::1 and localhost.
	ServerCert, ServerKey string
	// ExpiredCert and ExpiredKey are a server certificate from CA that
	// expired an hour ago.
	ExpiredCert, ExpiredKey string
	// ClientCert and ClientKey are a client certificate from CA.
	ClientCert, ClientKey string
	// StrangerCert and StrangerKey are a client certificate from OtherCA.
	StrangerCert, StrangerKey string
}

// Pool returns a pool holding CA.
func (p *PKI) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	b, err := os.ReadFile(p.CA)
	if err != nil || !pool.AppendCertsFromPEM(b) {
		panic(fmt.Sprintf("testpki: %s: %v", p.CA, err))
	}
	return pool
}

// Client returns the client certificate from CA.
func (p *PKI) Client() tls.Certificate {
	c, err := tls.LoadX509KeyPair(p.ClientCert, p.ClientKey)
	if err != nil {
		panic(err)
	}
	return c
}

// TB is the part of testing.TB that New uses.
type TB interface {
	Helper()
	TempDir() string
	Fatal(args ...any)
}

// New writes a fresh PKI into a temporary directory of t.
func New(t TB) *PKI {
	t.Helper()
	p, err := Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var serial atomic.Int64

// Write makes a fresh PKI and writes its files into dir.
func Write(dir string) (*PKI, error) {
	p := &PKI{}
	now := time.Now()
	ca, caKey, err := newCA("hashline test CA")
	if err != nil {
		return nil, err
	}
	other, otherKey, err := newCA("someone else's CA")
	if err != nil {
		return nil, err
	}
	server := func() *x509.Certificate {
		return &x509.Certificate{
			Subject:     pkix.Name{CommonName: "hashlined"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
			DNSNames:    []string{"localhost"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			NotBefore:   now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		}
	}
	client := func() *x509.Certificate {
		return &x509.Certificate{
			Subject:     pkix.Name{CommonName: "agent"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			NotBefore:   now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		}
	}
	expired := server()
	expired.NotBefore, expired.NotAfter = now.Add(-2*time.Hour), now.Add(-time.Hour)
	files := []struct {
		cert, key *string
		name      string
		tmpl      *x509.Certificate
		ca        *x509.Certificate
		caKey     *ecdsa.PrivateKey
	}{
		{&p.ServerCert, &p.ServerKey, "server", server(), ca, caKey},
		{&p.ExpiredCert, &p.ExpiredKey, "expired", expired, ca, caKey},
		{&p.ClientCert, &p.ClientKey, "client", client(), ca, caKey},
		{&p.StrangerCert, &p.StrangerKey, "stranger", client(), other, otherKey},
	}
	p.CA, p.OtherCA = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "other-ca.pem")
	if err := writePEM(p.CA, "CERTIFICATE", ca.Raw); err != nil {
		return nil, err
	}
	if err := writePEM(p.OtherCA, "CERTIFICATE", other.Raw); err != nil {
		return nil, err
	}
	for _, f := range files {
		der, key, err := leaf(f.tmpl, f.ca, f.caKey)
		if err != nil {
			return nil, err
		}
		*f.cert, *f.key = filepath.Join(dir, f.name+".pem"), filepath.Join(dir, f.name+".key")
		if err := writePEM(*f.cert, "CERTIFICATE", der); err != nil {
			return nil, err
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, err
		}
		if err := writePEM(*f.key, "EC PRIVATE KEY", keyDER); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func newCA(name string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-3 * time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func leaf(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = big.NewInt(serial.Add(1))
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	return der, key, err
}

func writePEM(file, typ string, der []byte) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
