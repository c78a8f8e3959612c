// Package local runs the hashline service in-process: the same engine and
// rules as hashlined, served over an in-memory gRPC connection with no
// network. The CLI's --local mode and the embedded MCP bridge use it, so
// that they behave exactly like a client of a real server.
package local

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// Config says what to serve.
type Config struct {
	// Root is the workspace directory; empty means the current directory.
	Root string
	// Workspace and Server options, as hashlined would pass them. One
	// difference: read-before-edit is off unless Server turns it on with
	// server.WithRequireRead(true), because the engine lives for one CLI
	// command, and the Read a model made came from an earlier one.
	Workspace []workspace.Option
	Server    []server.Option
	// Client options, e.g. client.WithAgentID.
	Client []client.Option
}

// Engine is a running in-process service and a client connected to it.
type Engine struct {
	Client *client.Client
	ws     *workspace.Workspace
	gs     *grpc.Server
	conn   *grpc.ClientConn
	served chan error
}

// Start opens the workspace and serves it in-process.
func Start(cfg Config) (*Engine, error) {
	root := cfg.Root
	if root == "" {
		root = "."
	}
	ws, err := workspace.Open(root, cfg.Workspace...)
	if err != nil {
		return nil, err
	}
	opts := append([]server.Option{server.WithRequireRead(false)}, cfg.Server...)
	gs, _ := server.NewGRPCServer(server.New(ws, opts...), server.GRPCConfig{})
	lis := bufconn.Listen(1 << 20)
	e := &Engine{ws: ws, gs: gs, served: make(chan error, 1)}
	go func() { e.served <- gs.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///local",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	)
	if err != nil {
		gs.Stop()
		ws.Close()
		return nil, fmt.Errorf("hashline: in-process connection: %w", err)
	}
	e.conn = conn
	e.Client = client.New(conn, cfg.Client...)
	return e, nil
}

// Root is the absolute workspace directory.
func (e *Engine) Root() string { return e.ws.Dir() }

// Close waits for calls in flight, then stops the service and closes the
// workspace.
func (e *Engine) Close() error {
	err := e.conn.Close()
	e.gs.GracefulStop()
	if serr := <-e.served; serr != nil && !errors.Is(serr, grpc.ErrServerStopped) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, e.ws.Close())
}
