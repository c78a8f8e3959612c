package server_test

import (
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
	"github.com/hashline/hashline/server/reflection"
)

// env is one server over bufconn on a fresh temp workspace.
type env struct {
	t    testing.TB
	root string
	c    *client.Client
	svc  *server.Service // for calls that must bypass the client
	ctx  context.Context
	conn *grpc.ClientConn  // for clients with other credentials
	lis  *bufconn.Listener // for connections with other transport options
	// health is the server's health service.
	health *health.Server
}

// newEnv starts the full gRPC server (interceptors, health, reflection) on
// an in-memory listener and returns a client for it. Everything is closed
// with t.Cleanup.
func newEnv(t testing.TB, opts ...engine.Option) *env {
	t.Helper()
	return newEnvWS(t, nil, opts...)
}

// newEnvWS is newEnv with workspace options too.
func newEnvWS(t testing.TB, wsOpts []workspace.Option, opts ...engine.Option) *env {
	t.Helper()
	return newEnvConfig(t, server.GRPCConfig{DefaultTimeout: 30 * time.Second}, wsOpts, opts...)
}

// newEnvConfig is newEnvWS with the gRPC server's configuration too (auth,
// limits, metrics).
func newEnvConfig(t testing.TB, cfg server.GRPCConfig, wsOpts []workspace.Option, opts ...engine.Option) *env {
	t.Helper()
	return newEnvIn(t, t.TempDir(), cfg, wsOpts, opts...)
}

// newEnvAt is newEnv serving an existing directory: a second server over
// another's files, with none of its memory.
func newEnvAt(t testing.TB, root string) *env {
	t.Helper()
	return newEnvIn(t, root, server.GRPCConfig{DefaultTimeout: 30 * time.Second}, nil)
}

func newEnvIn(t testing.TB, root string, cfg server.GRPCConfig, wsOpts []workspace.Option, opts ...engine.Option) *env {
	t.Helper()
	ws, err := workspace.Open(root, wsOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	svc := server.New(ws, opts...)
	e := &env{t: t, root: root, svc: svc}
	gs, hs := server.NewGRPCServer(svc, cfg)
	reflection.Register(gs)
	e.health = hs
	lis := bufconn.Listen(1 << 20)
	e.lis = lis
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	e.c, e.ctx, e.conn = client.New(conn, client.WithAgentID("test")), ctx, conn
	return e
}

// write puts a file into the workspace directly (not through the server).
func (e *env) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// seed writes a file directly and reads it through the server, so the test
// agent has seen it: edits of files an agent has not read are refused with
// NOT_READ.
func (e *env) seed(rel, content string) {
	e.t.Helper()
	e.write(rel, content)
	if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: rel}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(rel)))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// snapshot records every entry under the root (path -> mode and bytes, or
// link target) so a test can assert that nothing on disk changed.
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		val := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			val += " -> " + target
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			val += " " + string(b)
		}
		snap[rel] = val
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return snap
}

func (e *env) assertUnchanged(before map[string]string) {
	e.t.Helper()
	after := e.snapshot()
	for k, v := range before {
		if after[k] != v {
			e.t.Errorf("disk changed at %s:\nbefore %q\nafter  %q", k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			e.t.Errorf("disk gained %s", k)
		}
	}
}

// tag returns the current "LINE:HASH" of line n of content, computed
// independently of the server with the core hasher.
func tag(content string, n int) string {
	d := hashline.ParseDocument([]byte(content))
	return hashline.Ref{Line: n, Hash: hashline.Hasher{}.Sum(d.Line(n))}.String()
}
