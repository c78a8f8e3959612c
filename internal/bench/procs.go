package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/hashline/hashline/client"
)

// build compiles a command of this module into dir.
func build(dir, pkg string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, "github.com/hashline/hashline/"+pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w", pkg, err)
	}
	return out, nil
}

// daemon is a hashlined process and a connection to it.
type daemon struct {
	cmd  *exec.Cmd
	addr string
	conn *grpc.ClientConn
	c    *client.Client
}

// startDaemon runs `hashlined serve` on root at a free loopback port, with
// read limits raised so one Read returns a whole 100k-line file.
func startDaemon(bin, root string, extra ...string) (*daemon, error) {
	args := append([]string{"serve", "--root", root, "--listen", "127.0.0.1:0", "--log-level", "warn",
		"--read-limit", "1000000", "--read-bytes", "268435456", "--max-response-bytes", "268435456"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &daemon{cmd: cmd}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			// "hashlined: serving ROOT on ADDR"
			if i := strings.LastIndex(sc.Text(), " on "); strings.HasPrefix(sc.Text(), "hashlined: serving") && i >= 0 {
				found <- sc.Text()[i+4:]
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case d.addr = <-found:
	case <-time.After(30 * time.Second):
		d.close()
		return nil, fmt.Errorf("hashlined %v did not report its address", extra)
	}
	d.conn, err = grpc.NewClient("passthrough:///"+d.addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		d.close()
		return nil, err
	}
	d.c = client.New(d.conn, client.WithAgentID("bench"))
	return d, nil
}

func (d *daemon) close() {
	if d.conn != nil {
		d.conn.Close()
	}
	d.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		d.cmd.Process.Kill()
		<-done
	}
}

// mcpServer is an MCP server subprocess and a client session with it.
type mcpServer struct {
	name string
	cs   *sdk.ClientSession
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

func (m *mcpServer) close() { m.cs.Close() }
