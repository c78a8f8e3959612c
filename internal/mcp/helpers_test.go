package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/daemon"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/mcp"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// backends are the two ways the bridge reaches the service in these tests:
// an engine in the test process over an in-memory connection, and a real
// hashlined-style gRPC server on loopback.
var backends = []string{"embedded", "server"}

// engineConfig configures the "embedded" backend's engine. Unlike
// hashline mcp's, it does not ask for a read before an edit unless srv
// turns that on (engine.WithRequireRead(true)).
type engineConfig struct {
	ws  []workspace.Option
	srv []engine.Option
}

// startEngine serves root with cfg over an in-memory connection and
// returns a client of it with the size limit hashline mcp uses.
func startEngine(t testing.TB, root string, cfg engineConfig) *client.Client {
	t.Helper()
	ws, err := workspace.Open(root, cfg.ws...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	gs, _ := server.NewGRPCServer(server.New(ws, append([]engine.Option{engine.WithRequireRead(false)}, cfg.srv...)...), server.GRPCConfig{})
	lis := bufconn.Listen(1 << 20)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("passthrough:///engine",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(daemon.MaxRecvBytes)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return client.New(conn, client.WithRetry(client.RetryPolicy{}))
}

// session is an MCP client session talking to the bridge as hashline mcp
// serves it (mcp.Serve, newline-delimited JSON over a stream pair), on a
// fresh temp workspace.
type session struct {
	t    testing.TB
	root string
	c    *client.Client // the service client the bridge calls
	cs   *sdk.ClientSession
	ctx  context.Context
	logs *syncBuffer // the gRPC server's log ("server" backend only)
}

// newSession starts the bridge over backend ("embedded" or "server") on a
// fresh workspace and connects an MCP client named "test-client" to it.
func newSession(t testing.TB, backend string, opts ...mcp.Option) *session {
	t.Helper()
	return newSessionOn(t, backend, engineConfig{}, opts...)
}

// newSessionWith is newSession on the embedded engine configured by cfg.
func newSessionWith(t testing.TB, cfg engineConfig, opts ...mcp.Option) *session {
	t.Helper()
	return newSessionOn(t, "embedded", cfg, opts...)
}

func newSessionOn(t testing.TB, backend string, cfg engineConfig, opts ...mcp.Option) *session {
	t.Helper()
	root := t.TempDir()
	s := &session{t: t, root: root, logs: &syncBuffer{}}
	var c *client.Client
	switch backend {
	case "embedded":
		c = startEngine(t, root, cfg)
	case "server":
		var err error
		if c, err = client.Dial(startServer(t, root, s.logs)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(ctx, serve(t, ctx, c, opts...), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	s.cs, s.ctx, s.c = cs, ctx, c
	return s
}

// serve runs mcp.Serve, as hashline mcp does, over a pair of pipes in
// place of stdin and stdout, and returns the client's end. The test ends
// by closing the client's end, and checks that Serve then returns.
func serve(t testing.TB, ctx context.Context, c *client.Client, opts ...mcp.Option) sdk.Transport {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := mcp.Serve(ctx, c, inR, outW, opts...)
		outW.Close()
		done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
				t.Errorf("mcp.Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("mcp.Serve did not return after its input ended")
		}
	})
	return &sdk.IOTransport{Reader: outR, Writer: inW}
}

// memorySession is a session over the SDK's in-memory transport to the
// server mcp.New returns, on the same service client as s.
func (s *session) memorySession(opts ...mcp.Option) *sdk.ClientSession {
	s.t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := mcp.New(s.c, opts...).Connect(s.ctx, st, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(s.ctx, ct, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { cs.Close() })
	return cs
}

// startServer serves root over gRPC on a loopback port, as hashlined does,
// and returns its address. Its log goes to logs.
func startServer(t testing.TB, root string, logs *syncBuffer) string {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{Logger: logger, DefaultTimeout: 30 * time.Second})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return lis.Addr().String()
}

// call invokes a tool and returns its text and whether it was a tool error.
// A protocol error fails the test.
func (s *session) call(tool string, args map[string]any) (string, bool) {
	s.t.Helper()
	res, err := s.cs.CallTool(s.ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: protocol error: %v", tool, err)
	}
	if len(res.Content) != 1 {
		s.t.Fatalf("%s: %d content blocks, want 1", tool, len(res.Content))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		s.t.Fatalf("%s: content is %T, want text", tool, res.Content[0])
	}
	return tc.Text, res.IsError
}

// ok calls a tool that must succeed.
func (s *session) ok(tool string, args map[string]any) string {
	s.t.Helper()
	text, isErr := s.call(tool, args)
	if isErr {
		s.t.Fatalf("%s(%v) failed: %s", tool, args, text)
	}
	return text
}

// fail calls a tool that must return a tool error.
func (s *session) fail(tool string, args map[string]any) string {
	s.t.Helper()
	text, isErr := s.call(tool, args)
	if !isErr {
		s.t.Fatalf("%s(%v) succeeded, want a tool error:\n%s", tool, args, text)
	}
	return text
}

func (s *session) write(rel, content string) {
	s.t.Helper()
	p := filepath.Join(s.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) read(rel string) string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.root, filepath.FromSlash(rel)))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// tagged returns the tagged lines of a read_file result (the lines inside
// its code block).
func tagged(t testing.TB, text string) []string {
	t.Helper()
	_, body, ok := strings.Cut(text, "```\n")
	if !ok {
		t.Fatalf("no code block in:\n%s", text)
	}
	body, _, ok = strings.Cut(body, "\n```")
	if !ok {
		t.Fatalf("unterminated code block in:\n%s", text)
	}
	return strings.Split(body, "\n")
}

// ref is the LINE:HASH of a tagged line.
func ref(line string) string {
	r, _, _ := strings.Cut(line, "|")
	return r
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
