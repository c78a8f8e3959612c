// Package client is the Go client of hashlined: Dial a server, call Read,
// Edit, Write and Grep, and recover typed errors — a StaleRefError with the
// fresh tags to retry from, or an *Error whose Reason says what went wrong.
package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
)

// DefaultAddress is where hashlined listens unless told otherwise.
const DefaultAddress = "127.0.0.1:7420"

// Client calls one hashlined server. It is safe for concurrent use.
type Client struct {
	conn  *grpc.ClientConn // nil when built with New
	rpc   hashlinev1.FileServiceClient
	agent string
}

// Option configures a Client.
type Option func(*options)

type options struct {
	agent    string
	dialOpts []grpc.DialOption
}

// WithAgentID names the calling agent (sent as x-agent-id metadata). The
// server keeps per-agent state under this name.
func WithAgentID(id string) Option { return func(o *options) { o.agent = id } }

// WithDialOptions adds grpc dial options, e.g. TLS credentials instead of
// the default plaintext.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}

// Dial connects to a server at target: "host:port" or "unix:///path.sock".
// Connections are plaintext unless WithDialOptions gives credentials.
func Dial(target string, opts ...Option) (*Client, error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if target == "" {
		target = DefaultAddress
	}
	if !strings.Contains(target, "://") {
		// grpc.NewClient resolves through DNS by default; a bare host:port
		// should not depend on a resolver.
		target = "passthrough:///" + target
	}
	dialOpts := append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, o.dialOpts...)
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("hashline: dial %s: %w", target, err)
	}
	c := New(conn, opts...)
	c.conn = conn
	return c, nil
}

// New wraps an existing connection; Close then does not close it.
func New(conn grpc.ClientConnInterface, opts ...Option) *Client {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	return &Client{rpc: hashlinev1.NewFileServiceClient(conn), agent: o.agent}
}

// Close closes the connection Dial opened.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// RPC returns the generated stub, for calls this package does not wrap.
func (c *Client) RPC() hashlinev1.FileServiceClient { return c.rpc }

func (c *Client) ctx(ctx context.Context) context.Context {
	if c.agent == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "x-agent-id", c.agent)
}

// Read returns a page of a file as tagged lines.
func (c *Client) Read(ctx context.Context, req *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	resp, err := c.rpc.Read(c.ctx(ctx), req)
	return resp, FromStatus(err)
}

// Edit applies a batch of edits. A stale reference comes back as a
// StaleRefError.
func (c *Client) Edit(ctx context.Context, req *hashlinev1.EditRequest) (*hashlinev1.EditResponse, error) {
	resp, err := c.rpc.Edit(c.ctx(ctx), req)
	return resp, FromStatus(err)
}

// Write creates or overwrites a whole file.
func (c *Client) Write(ctx context.Context, req *hashlinev1.WriteRequest) (*hashlinev1.WriteResponse, error) {
	resp, err := c.rpc.Write(c.ctx(ctx), req)
	return resp, FromStatus(err)
}

// Grep runs a search and calls fn for each file with matches, in path
// order, then returns the summary. An error from fn stops the search.
func (c *Client) Grep(ctx context.Context, req *hashlinev1.GrepRequest, fn func(*hashlinev1.GrepFile) error) (*hashlinev1.GrepSummary, error) {
	ctx, cancel := context.WithCancel(c.ctx(ctx))
	defer cancel()
	stream, err := c.rpc.Grep(ctx, req)
	if err != nil {
		return nil, FromStatus(err)
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("hashline: grep stream ended without a summary")
		}
		if err != nil {
			return nil, FromStatus(err)
		}
		if s := msg.GetSummary(); s != nil {
			return s, nil
		}
		if f := msg.GetFile(); f != nil && fn != nil {
			if err := fn(f); err != nil {
				return nil, err
			}
		}
	}
}

// FormatRef formats a reference "LINE:HASH".
func FormatRef(line int, hash string) string {
	return hashline.Ref{Line: line, Hash: hash}.String()
}

// ParseRef reads a reference leniently (spaces, upper-case hex, or a whole
// copied tagged line) and returns its line number and hash.
func ParseRef(s string) (line int, hash string, err error) {
	r, err := hashline.ParseRef(s)
	return r.Line, r.Hash, err
}

// Ref returns the reference of a tagged line, e.g. from a Read response.
func Ref(l *hashlinev1.Line) string { return FormatRef(int(l.GetNumber()), l.GetHash()) }

// Replace returns an edit replacing start..end (end "" = start) with text.
func Replace(start, end, text string) *hashlinev1.FileEdit {
	return &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_Replace{Replace: &hashlinev1.ReplaceOp{Start: start, End: end, Text: text}}}
}

// Delete returns an edit deleting start..end (end "" = start).
func Delete(start, end string) *hashlinev1.FileEdit {
	return &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_Delete{Delete: &hashlinev1.DeleteOp{Start: start, End: end}}}
}

// InsertAfter returns an edit inserting text after the anchor line.
func InsertAfter(anchor, text string) *hashlinev1.FileEdit {
	return &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_InsertAfter{InsertAfter: &hashlinev1.InsertOp{Anchor: anchor, Text: text}}}
}

// InsertBefore returns an edit inserting text before the anchor line.
func InsertBefore(anchor, text string) *hashlinev1.FileEdit {
	return &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_InsertBefore{InsertBefore: &hashlinev1.InsertOp{Anchor: anchor, Text: text}}}
}

// Append returns an edit adding text at the end of the file.
func Append(text string) *hashlinev1.FileEdit {
	return &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_Append{Append: &hashlinev1.TextOp{Text: text}}}
}

// Prepend returns an edit adding text at the start of the file.
func Prepend(text string) *hashlinev1.FileEdit {
	return &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_Prepend{Prepend: &hashlinev1.TextOp{Text: text}}}
}

// ReplaceText returns the tag-free fallback edit: replace the exact oldText
// (once, or every occurrence with all) by newText.
func ReplaceText(oldText, newText string, all bool) *hashlinev1.FileEdit {
	return &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_ReplaceText{ReplaceText: &hashlinev1.ReplaceTextOp{OldText: oldText, NewText: newText, All: all}}}
}
