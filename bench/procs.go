package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/binarytest"
)

// server is a hashlined process and a connection to it.
type server struct {
	proc *binarytest.Process
	conn *grpc.ClientConn
	c    *client.Client
}

// startDaemon runs `hashlined serve` on root at a free loopback port, with
// read limits raised so one Read returns a whole 100k-line file.
func startDaemon(bin, root string, extra ...string) (*server, error) {
	d, err := startServer(bin, append([]string{"--root", root, "--listen", "127.0.0.1:0", "--log-level", "warn",
		"--read-limit", "1000000", "--read-bytes", "268435456", "--max-response-bytes", "268435456"}, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("hashlined %v: %w", extra, err)
	}
	return d, nil
}

// startServer runs `bin serve args...` (hashlined, or a server that prints
// the same serving line) and connects to it as client.Dial does, with a
// larger message limit.
func startServer(bin string, args ...string) (*server, error) {
	p, err := binarytest.Start(bin, binarytest.Options{Stderr: os.Stderr, Timeout: 30 * time.Second, Args: args})
	if err != nil {
		return nil, err
	}
	d := &server{proc: p}
	d.conn, err = grpc.NewClient("passthrough:///"+p.Addr, append(client.TransportOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))...)
	if err != nil {
		d.close()
		return nil, err
	}
	d.c = client.New(d.conn, client.WithAgentID("bench"))
	return d, nil
}

func (d *server) close() {
	if d.conn != nil {
		d.conn.Close()
	}
	d.proc.Stop(10 * time.Second)
}

// mcpServer is an MCP server subprocess and a client session with it.
type mcpServer struct {
	name string
	cs   *sdk.ClientSession
	dir  string // the root it serves (env.roots)
}

// startMCP runs an MCP server command in dir and connects to it over stdio.
func startMCP(name, dir string, argv ...string) (*mcpServer, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	return startMCPCmd(name, cmd)
}

func startMCPCmd(name string, cmd *exec.Cmd) (*mcpServer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "hashline-bench"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return &mcpServer{name: name, cs: cs}, nil
}

// call invokes a tool; a tool error is an error here, since every call the
// benchmark makes must succeed.
func (m *mcpServer) call(tool string, args map[string]any) (string, error) {
	res, err := m.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", m.name, tool, err)
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			text = tc.Text
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s %s: tool error: %.300s", m.name, tool, text)
	}
	return text, nil
}

// ping makes one MCP ping request: a round trip with no tool behind it.
func (m *mcpServer) ping() error {
	if err := m.cs.Ping(context.Background(), nil); err != nil {
		return fmt.Errorf("%s ping: %w", m.name, err)
	}
	return nil
}

func (m *mcpServer) close() { m.cs.Close() }
