// Package proxytest stands in, in tests, for a stock proxy that answers
// what it cannot route with an HTTP error page, not gRPC.
package proxytest

import (
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// ServeHTTPStatus starts a plaintext HTTP/2 server (h2c, as a gRPC client
// speaks to a proxy without TLS) that answers every request as a stock
// proxy (an Ingress controller's default backend) answers a host it routes
// nowhere (404) or a backend that is down (503): an HTTP error page, not
// gRPC. It returns the address and the count of requests it answered.
func ServeHTTPStatus(t testing.TB, code int) (string, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Protocols: &protocols,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(code)
			w.Write([]byte("default backend - " + http.StatusText(code)))
		}),
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().String(), &hits
}
