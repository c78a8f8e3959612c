package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server is an MCP server process over stdio, with the size of the last
// reply it sent.
type server struct {
	name string
	root string
	cs   *sdk.ClientSession
	// editArgs are added to the arguments of every edit_file call.
	editArgs map[string]any

	mu        sync.Mutex
	lastReply int // bytes of the last response's result (or error) object
}

// startServer runs argv in root and connects the Go MCP SDK's client to it.
func startServer(name, root, protocol string, argv ...string) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	return connect(name, root, protocol, &sdk.CommandTransport{Command: cmd})
}

// connect connects the client to a server over t, asking for protocol
// version protocol, measuring its replies.
func connect(name, root, protocol string, t sdk.Transport) (*server, error) {
	s := &server{name: name, root: root}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "hashline-bench-mistakes"}, nil).Connect(ctx, &measured{t, s}, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	s.cs = cs
	return s, nil
}

func (s *server) close() { s.cs.Close() }

// edit is the arguments of an edit_file call of edits on path.
func (s *server) edit(path string, edits any) map[string]any {
	args := map[string]any{"path": path, "edits": edits}
	for k, v := range s.editArgs {
		args[k] = v
	}
	return args
}

// protocol is the protocol version the session runs.
func (s *server) protocol() string { return s.cs.InitializeResult().ProtocolVersion }

// measured is a transport whose connection records the size of every
// response the server sends: the bytes of its "result" as they came over
// the wire (or of its "error"), the JSON-RPC envelope aside.
type measured struct {
	sdk.Transport
	s *server
}

func (t *measured) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &measuredConn{c, t.s}, nil
}

type measuredConn struct {
	sdk.Connection
	s *server
}

func (c *measuredConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok {
		n := len(r.Result)
		if r.Error != nil {
			b, _ := json.Marshal(r.Error)
			n = len(b)
		}
		c.s.mu.Lock()
		c.s.lastReply = n
		c.s.mu.Unlock()
	}
	return m, err
}

func (s *server) replyBytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastReply
}

// reply is one tool call's answer.
type reply struct {
	refused bool   // a tool error, or a JSON-RPC error (arguments the server's schema refused)
	text    string // the first text content, or the JSON-RPC error's message
	bytes   int
	// diagnosed: the reply tells of the syntax errors the edit made: its
	// structured content carries a non-empty "diagnostics" list, or its
	// text the line hashline's text replies give them in (syntaxLine).
	diagnosed bool
}

// call invokes a tool with raw arguments. A JSON-RPC error is a refusal
// like a tool error, since that is how a server may refuse arguments that
// fail its schema; a broken connection is an error.
func (s *server) call(tool string, args any) (reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			return reply{}, fmt.Errorf("%s %s: %w", s.name, tool, err)
		}
		return reply{refused: true, text: we.Message, bytes: s.replyBytes()}, nil
	}
	r := reply{refused: res.IsError, bytes: s.replyBytes(), diagnosed: hasDiagnostics(res.StructuredContent)}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			r.text = tc.Text
		}
	}
	r.diagnosed = r.diagnosed || syntaxLine.MatchString(r.text)
	return r, nil
}

// syntaxLine is the line a hashline text reply adds when the change
// introduced syntax errors (internal/render's Syntax), applied or not:
// "Syntax: this edit introduced 2 errors (go/parser): ...".
var syntaxLine = regexp.MustCompile(`(?m)^Syntax: this (edit|write) (introduced|would introduce) \d+ errors? `)

// listTools is the size of the server's tools/list reply.
func (s *server) listTools() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.cs.ListTools(ctx, nil); err != nil {
		return 0, fmt.Errorf("%s tools/list: %w", s.name, err)
	}
	return s.replyBytes(), nil
}

// hasDiagnostics reports whether v, a reply's structured content, has a
// non-empty "diagnostics" list: at its top level, or in one of its
// "changes" (one per file of a batch).
func hasDiagnostics(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	if d, ok := m["diagnostics"].([]any); ok && len(d) > 0 {
		return true
	}
	cs, _ := m["changes"].([]any)
	for _, c := range cs {
		if hasDiagnostics(c) {
			return true
		}
	}
	return false
}
