package client_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// seen records the :authority and x-hashline-workspace of each call.
type seen struct {
	mu                    sync.Mutex
	authority, workspaces []string
}

func (s *seen) intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	s.authority = append(s.authority, md.Get(":authority")...)
	s.workspaces = append(s.workspaces, strings.Join(md.Get(client.WorkspaceMetadataKey), ","))
	s.mu.Unlock()
	return handler(ctx, req)
}

func serveWorkspace(t *testing.T, name string) (string, *seen) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &seen{}
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{Workspace: name, ServerOptions: []grpc.ServerOption{grpc.ChainUnaryInterceptor(s.intercept)}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(func() { gs.Stop(); ws.Close() })
	return lis.Addr().String(), s
}

func TestWithWorkspaceNamesTheWorkspaceOfEveryCall(t *testing.T) {
	addr, s := serveWorkspace(t, "alpha")
	ctx := t.Context()

	c, err := client.Dial(addr, client.WithWorkspace("alpha"), client.WithWorkspaceDomain("hashline.test:443"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Status(ctx)
	if err != nil || st.GetWorkspace() != "alpha" {
		t.Fatalf("Status = %v, %v", st, err)
	}
	s.mu.Lock()
	if s.workspaces[0] != "alpha" || s.authority[0] != "alpha.hashline.test:443" {
		t.Errorf("the server saw workspace %q and :authority %q; want alpha and alpha.hashline.test:443", s.workspaces[0], s.authority[0])
	}
	s.mu.Unlock()

	other, err := client.Dial(addr, client.WithWorkspace("beta"), client.WithRetry(client.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.Write(ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "y\n"})
	var e *client.Error
	if !errors.Is(err, client.ErrWrongWorkspace) || !errors.As(err, &e) || e.Metadata["workspace"] != "beta" || e.Metadata["served"] != "alpha" {
		t.Fatalf("a write meant for beta = %v, want WRONG_WORKSPACE naming beta and alpha", err)
	}
	if !strings.Contains(client.FormatError(err), `serves workspace "alpha", not "beta"`) {
		t.Errorf("FormatError = %q", client.FormatError(err))
	}
}

func TestWorkspaceOptionsRefuseWhatIsNotAName(t *testing.T) {
	for _, tt := range []struct {
		opts []client.Option
		want string
	}{
		{[]client.Option{client.WithWorkspace("../alpha")}, "path syntax"},
		{[]client.Option{client.WithWorkspace("alpha.example.com")}, "host syntax"},
		{[]client.Option{client.WithWorkspace(strings.Repeat("a", 64))}, "at most 63"},
		{[]client.Option{client.WithWorkspaceDomain("example.com")}, "needs WithWorkspace"},
		{[]client.Option{client.WithWorkspace("alpha"), client.WithWorkspaceDomain("example.com/x")}, "want a domain"},
	} {
		c, err := client.Dial("127.0.0.1:1", tt.opts...)
		if err == nil {
			c.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Dial = %v, want an error saying %q", err, tt.want)
		}
	}
}
