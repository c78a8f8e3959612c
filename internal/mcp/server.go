package mcp

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/buildinfo"
)

// Name is the implementation name the server reports to MCP clients.
const Name = "hashline"

// Option configures New.
type Option func(*options)

type options struct {
	version string
	agent   string
	logger  *slog.Logger
}

// WithVersion sets the version reported to clients (default: the
// binary's, internal/buildinfo).
func WithVersion(v string) Option { return func(o *options) { o.version = v } }

// WithAgent names the agent every call is made as (x-agent-id). Without it
// each call is made as "mcp/", the name the MCP client gave when it
// connected, and a random tag drawn once per server (New or Serve), e.g.
// "mcp/claude-ai/3f9a1c0b". Two sessions of one client (two windows, each
// starting its own hashline mcp) are then two agents to a shared
// hashlined, as they must be: the server rebases each one's references
// from the version that agent read, and one name for both would let one
// session's edit replace the version the other's references were made
// against. A name given here is used as it is, so give each session its
// own.
func WithAgent(name string) Option { return func(o *options) { o.agent = name } }

// WithLogger sets the logger of the MCP session machinery; the default
// discards. It must never write to stdout, which carries the protocol.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// New returns an MCP server whose tools call c. Connect it to any
// transport.
func New(c *client.Client, opts ...Option) *sdk.Server {
	o := options{version: buildinfo.Version(), logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		opt(&o)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: Name, Version: o.version}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       o.logger,
	})
	t := &tools{c: c, agent: o.agent, tag: rand.Text()[:8]}
	sdk.AddTool(s, &sdk.Tool{Name: "read_file", Description: readDescription, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, t.read)
	sdk.AddTool(s, editTool(), t.edit)
	sdk.AddTool(s, &sdk.Tool{Name: "write_file", Description: writeDescription}, t.write)
	sdk.AddTool(s, &sdk.Tool{Name: "grep", Description: grepDescription, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, t.grep)
	sdk.AddTool(s, &sdk.Tool{Name: "list_directory", Description: listDescription, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, t.list)
	addFileTools(s, t)
	sdk.AddTool(s, &sdk.Tool{Name: "undo", Description: undoDescription}, t.undo)
	return s
}

// Serve serves one MCP client over in and out (hashline mcp: stdin and
// stdout, newline-delimited JSON-RPC) with the tools New gives, until in
// ends or ctx is done. A line that is not a JSON-RPC message, or is longer
// than MaxFrameBytes, gets a JSON-RPC error reply and the session goes on
// (frameTransport). Serve closes in, not out.
func Serve(ctx context.Context, c *client.Client, in io.ReadCloser, out io.Writer, opts ...Option) error {
	return New(c, opts...).Run(ctx, &frameTransport{in: in, out: out, maxFrame: MaxFrameBytes})
}

// tools holds the handlers; each turns its arguments into one hashline.v1
// call and the response into the text a model reads.
type tools struct {
	c     *client.Client
	agent string
	tag   string // this server's part of the default agent name (WithAgent)
}

// ctx names the calling agent for the server.
func (t *tools) ctx(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	return metadata.AppendToOutgoingContext(ctx, client.AgentMetadataKey, t.agentName(req))
}

// agentName is the name the calls of req's session are made as
// (WithAgent).
func (t *tools) agentName(req *sdk.CallToolRequest) string {
	if t.agent != "" {
		return t.agent
	}
	agent := "mcp/"
	if req != nil && req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
			agent += p.ClientInfo.Name + "/"
		}
	}
	return agent + t.tag
}

// textResult is a successful tool result holding text.
func textResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// errorResult is a tool error: the model sees text and may act on it. It
// is not a protocol error, which clients would show to the user instead.
func errorResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}
