package client_test

import (
	"context"
	"errors"
	"github.com/hashline/hashline/internal/proxytest"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// serveHTTPStatus starts a plaintext HTTP/2 server (h2c, as a gRPC
// client speaks to a proxy without TLS) that answers every request as a
// stock proxy answers a host it routes nowhere or a backend that is down:
// an HTTP error page, not gRPC. It returns the address and the count of
// requests it answered.
func serveHTTPStatus(t *testing.T, code int) (string, *atomic.Int32) {
	return proxytest.ServeHTTPStatus(t, code)
}

// Every call of a Client given a workspace that meets a proxy's HTTP 404,
// 502, 503 or 504 fails with NOT_FOUND or UNAVAILABLE naming the
// workspace, with the proxy's answer kept; a 503 is retried as any
// UNAVAILABLE is, a 404 is not. Without a workspace, or for another
// status, the transport's code and words stay, and HTTPStatus says what
// answered.
func TestAProxysHTTPErrorNamesTheWorkspace(t *testing.T) {
	t.Parallel()
	calls := []struct {
		name string
		call func(context.Context, *client.Client) error
	}{
		{"Read", func(ctx context.Context, c *client.Client) error {
			_, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt"})
			return err
		}},
		{"Edit", func(ctx context.Context, c *client.Client) error {
			_, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Append("x\n")}})
			return err
		}},
		{"Grep", func(ctx context.Context, c *client.Client) error {
			_, err := c.Grep(ctx, &hashlinev1.GrepRequest{Pattern: "x"}, nil)
			return err
		}},
		{"Watch", func(ctx context.Context, c *client.Client) error {
			return c.Watch(ctx, &hashlinev1.WatchRequest{}, func(*hashlinev1.WatchResponse) error { return nil })
		}},
		{"Status", func(ctx context.Context, c *client.Client) error {
			_, err := c.Status(ctx)
			return err
		}},
	}
	retryOnce := client.WithRetry(client.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, Multiplier: 1})
	for _, tt := range []struct {
		name      string
		http      int
		workspace string
		code      codes.Code
		says      []string
		attempts  int32 // of a call that Watch, which is never retried, does not make
	}{
		{"an unknown workspace is NOT_FOUND naming it", http.StatusNotFound, "zeta", codes.NotFound,
			[]string{`no workspace "zeta" behind this router`, "the proxy answered HTTP 404 Not Found, not a hashlined", "nothing was done", "Check the workspace name"}, 1},
		{"a backend down is UNAVAILABLE naming its workspace", http.StatusServiceUnavailable, "zeta", codes.Unavailable,
			[]string{`workspace "zeta"'s hashlined is down, restarting or not answering`, "HTTP 503 Service Unavailable", "Retry in a few seconds"}, 2},
		{"a bad gateway is UNAVAILABLE naming the workspace", http.StatusBadGateway, "zeta", codes.Unavailable,
			[]string{`workspace "zeta"'s hashlined`, "HTTP 502 Bad Gateway"}, 2},
		{"a gateway timeout is UNAVAILABLE naming the workspace", http.StatusGatewayTimeout, "zeta", codes.Unavailable,
			[]string{`workspace "zeta"'s hashlined`, "HTTP 504 Gateway Timeout"}, 2},
		{"without a workspace a 404 stays the transport's", http.StatusNotFound, "", codes.Unimplemented, nil, 1},
		{"a status that says nothing of the workspace stays the transport's", http.StatusForbidden, "zeta", codes.PermissionDenied, nil, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr, hits := serveHTTPStatus(t, tt.http)
			opts := []client.Option{retryOnce, client.WithTimeout(30 * time.Second)}
			if tt.workspace != "" {
				opts = append(opts, client.WithWorkspace(tt.workspace))
			}
			c, err := client.Dial(addr, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, call := range calls {
				before := hits.Load()
				err := call.call(t.Context(), c)
				var e *client.Error
				if !errors.As(err, &e) {
					t.Fatalf("%s: %v, want a *client.Error", call.name, err)
				}
				if e.Code != tt.code || status.Code(err) != tt.code || e.HTTPStatus != tt.http || e.Reason != "" || e.TLS != client.NoTLSProblem {
					t.Errorf("%s: code %v (status %v), HTTP %d, reason %q, TLS %v; want %v, HTTP %d", call.name, e.Code, status.Code(err), e.HTTPStatus, e.Reason, e.TLS, tt.code, tt.http)
				}
				for _, s := range append(tt.says, "unexpected HTTP status code received from server: ", "default backend - "+http.StatusText(tt.http)) {
					if !strings.Contains(e.Message, s) || !strings.Contains(err.Error(), s) {
						t.Errorf("%s: %q does not say %q", call.name, e.Message, s)
					}
				}
				if tt.workspace == "" && strings.Contains(e.Message, "behind this router") {
					t.Errorf("%s: a client given no workspace names one: %q", call.name, e.Message)
				}
				want := tt.attempts
				if call.name == "Watch" {
					want = 1
				}
				if got := hits.Load() - before; got != want {
					t.Errorf("%s: %d attempts reached the proxy, want %d", call.name, got, want)
				}
			}
		})
	}
}

// A hashlined that lacks an RPC (an older server) answers UNIMPLEMENTED
// itself, as gRPC: that is not a proxy's 404, and a client given a
// workspace keeps the server's answer.
func TestAServersUnimplementedIsNotAProxys404(t *testing.T) {
	t.Parallel()
	gs := grpc.NewServer() // serves no FileService
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	c, err := client.Dial(lis.Addr().String(), client.WithWorkspace("alpha"), client.WithRetry(client.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Read(t.Context(), &hashlinev1.ReadRequest{Path: "f.txt"})
	var e *client.Error
	if !errors.As(err, &e) || e.Code != codes.Unimplemented || e.HTTPStatus != 0 || strings.Contains(e.Message, "alpha") || !strings.Contains(e.Message, "hashline.v1.FileService") {
		t.Fatalf("Read from a server without the RPC: %#v, want its own UNIMPLEMENTED", err)
	}
}
