// Package client is the Go client of hashlined: Dial a server, call Read,
// Edit, Write and Grep, and recover typed errors — a StaleRefError with the
// fresh tags to retry from, or an *Error whose Reason says what went wrong.
//
// Every call gets a default deadline (WithTimeout, 30s) when its context has
// none, and is retried with backoff when the server is UNAVAILABLE: Read
// and Grep because they change nothing, Edit and Write because each carries
// a request_id that makes the server answer a retry with the first
// attempt's outcome instead of applying it twice (see RetryPolicy). The
// Format functions render responses as the tagged text a model reads.
package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/wire"
)

// DefaultAddress is where hashlined listens unless told otherwise.
const DefaultAddress = "127.0.0.1:7420"

// Client calls one hashlined server. It is safe for concurrent use.
type Client struct {
	conn      *grpc.ClientConn // nil when built with New
	rpc       hashlinev1.FileServiceClient
	agent     string
	token     string
	workspace string
	timeout   time.Duration
	retry     RetryPolicy
	// propagator injects the caller's trace context (trace.go); nil is
	// OpenTelemetry's global one.
	propagator propagation.TextMapPropagator
	// probe says how to reach the server to find out why a call could
	// not (probeTLS); network "" when the client was not made by Dial.
	probe struct {
		network, addr, serverName string
		tls                       *tls.Config
	}
}

// DefaultTimeout is the deadline a call gets when its context has none.
const DefaultTimeout = 30 * time.Second

// Option configures a Client.
type Option func(*options)

type options struct {
	agent     string
	token     string
	workspace string
	domain    string // WithWorkspaceDomain's
	dialOpts  []grpc.DialOption
	timeout   time.Duration
	retry     RetryPolicy
	tls       *tls.Config // nil: plaintext, unless the address is https://
	err       error       // an option's, returned by Dial
	// propagator is WithPropagator's.
	propagator propagation.TextMapPropagator
}

func newOptions(opts []Option) options {
	o := options{timeout: DefaultTimeout, retry: DefaultRetryPolicy}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithTimeout sets the deadline given to calls whose context has none
// (default DefaultTimeout); 0 leaves such calls unbounded. For Grep the
// deadline covers the whole stream.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithRetry sets how calls are retried when the server is UNAVAILABLE
// (default DefaultRetryPolicy); RetryPolicy{} turns retries off, and with
// them the request_id that Edit and Write otherwise add.
func WithRetry(p RetryPolicy) Option { return func(o *options) { o.retry = p } }

// AgentMetadataKey is the request metadata that names the calling agent.
// The server reads it; a caller that does not use this package's calls
// sets it itself (metadata.AppendToOutgoingContext).
const AgentMetadataKey = wire.AgentMetadataKey

// WithAgentID names the calling agent (sent as AgentMetadataKey metadata).
// The server keeps per-agent state under this name.
func WithAgentID(id string) Option { return func(o *options) { o.agent = id } }

// WithToken sends token as "authorization: Bearer TOKEN" on every call,
// for a server started with --tokens. Over plaintext the token is visible
// on the network: use TLS (an https:// address, WithTLS) beyond loopback.
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WorkspaceMetadataKey is the request metadata that names the workspace a
// call is meant for (WithWorkspace).
const WorkspaceMetadataKey = wire.WorkspaceMetadataKey

// WithWorkspace names the workspace every call is meant for, sent as
// WorkspaceMetadataKey metadata: a router that routes by header finds the
// workspace's server by it, and a server started with another
// --workspace refuses the call (ErrWrongWorkspace) rather than read or
// change the wrong tree. name is a DNS label ("alpha": lowercase letters,
// digits and '-', at most 63); Dial returns the error of any other.
func WithWorkspace(name string) Option {
	return func(o *options) {
		if err := wire.CheckWorkspaceName(name); err != nil {
			o.err = fmt.Errorf("hashline: WithWorkspace: %w", err)
			return
		}
		o.workspace = name
	}
}

// WithWorkspaceDomain makes Dial send ":authority WORKSPACE.DOMAIN" (the
// workspace of WithWorkspace, which it needs), for a router that routes by
// host but is dialled at another address (an IP, a service name, a local
// port). With TLS the server's certificate must then hold that name, as
// it would when dialling the host itself. A client dialling
// "alpha.hashline.example.com" needs no such option. New ignores it: the
// authority is the connection's.
func WithWorkspaceDomain(domain string) Option {
	return func(o *options) { o.domain = domain }
}

// WithDialOptions adds grpc dial options; they come after Dial's own, so
// transport credentials given here replace those of the address and
// WithTLS (which Error.TLS then does not know about: prefer WithTLS).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}

// flowWindow is the HTTP/2 flow-control window Dial sets for each call and
// for the connection: the most grpc's dynamic windows grow to.
const flowWindow = 16 << 20

// TransportOptions are the dial options Dial uses for the transport, for
// connections made with grpc.NewClient and wrapped with New: static HTTP/2
// flow-control windows of 16 MiB per call and per connection. With grpc's
// dynamic windows, every response that carries data makes the client send
// a window update and a ping to estimate the link's bandwidth, which the
// server must read and answer, work the call does not need on a link
// whose bandwidth never limits it; hashlined's static windows spare the
// same on its side.
func TransportOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithStaticStreamWindowSize(flowWindow),
		grpc.WithStaticConnWindowSize(flowWindow),
	}
}

// Dial connects to a server at target: "host:port" or "http://host:port"
// (plaintext), "https://host:port" (TLS, trusting the system's roots
// unless WithTLS or WithTLSFiles says otherwise), or "unix:///path.sock".
// WithTLS makes a "host:port" address TLS too. A call that fails because
// the client's TLS set-up does not match the server's fails with
// UNAVAILABLE, and DiagnoseTLS says what does not match.
func Dial(target string, opts ...Option) (*Client, error) {
	o := newOptions(opts)
	if o.err != nil {
		return nil, o.err
	}
	if target == "" {
		target = DefaultAddress
	}
	orig := target
	target, https, http := splitScheme(target)
	if http && o.tls != nil {
		return nil, fmt.Errorf("hashline: dial %s: http:// is plaintext but TLS was asked for: use https://", orig)
	}
	if https && o.tls == nil {
		o.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if (https || http) && (target == "" || strings.ContainsAny(target, "/?#")) {
		return nil, fmt.Errorf("hashline: dial %s: want http(s)://host:port", orig)
	}
	if o.domain != "" {
		if o.workspace == "" {
			return nil, fmt.Errorf("hashline: dial %s: WithWorkspaceDomain(%q) needs WithWorkspace to name the workspace", orig, o.domain)
		}
		if strings.ContainsAny(o.domain, "/?#@ ") || strings.HasPrefix(o.domain, ".") {
			return nil, fmt.Errorf("hashline: dial %s: WithWorkspaceDomain(%q): want a domain such as \"hashline.example.com\" (a port may follow)", orig, o.domain)
		}
	}
	network, addr, serverName, probe := probeTarget(target)
	if !strings.Contains(target, "://") {
		// grpc.NewClient resolves through DNS by default; a bare host:port
		// should not depend on a resolver.
		target = "passthrough:///" + target
	}
	creds := insecure.NewCredentials()
	if o.tls != nil {
		creds = credentials.NewTLS(o.tls)
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// Reconnect soon after a refused connection (grpc's default waits
		// 1s, then longer), so the retries below meet a restarted server.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
			MinConnectTimeout: 5 * time.Second,
		}),
	}
	dialOpts = append(dialOpts, TransportOptions()...)
	if o.domain != "" {
		dialOpts = append(dialOpts, grpc.WithAuthority(o.workspace+"."+o.domain))
	}
	dialOpts = append(dialOpts, o.dialOpts...) // the caller's come last and win
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("hashline: dial %s: %w", target, err)
	}
	c := New(conn, opts...)
	c.conn = conn
	if probe {
		c.probe.network, c.probe.addr, c.probe.serverName, c.probe.tls = network, addr, serverName, o.tls
	}
	return c, nil
}

// New wraps an existing connection; Close then does not close it.
func New(conn grpc.ClientConnInterface, opts ...Option) *Client {
	o := newOptions(opts)
	return &Client{rpc: hashlinev1.NewFileServiceClient(conn), agent: o.agent, token: o.token, workspace: o.workspace, timeout: o.timeout, retry: o.retry, propagator: o.propagator}
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
	ctx = c.traceContext(ctx)
	if c.token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+c.token)
	}
	if c.workspace != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, WorkspaceMetadataKey, c.workspace)
	}
	if c.agent == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, AgentMetadataKey, c.agent)
}

// callCtx adds the agent metadata and, when ctx has no deadline, the
// default one.
func (c *Client) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx = c.ctx(ctx)
	if _, ok := ctx.Deadline(); ok || c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

// Read returns a page of a file as tagged lines. It is retried while the
// server is UNAVAILABLE.
func (c *Client) Read(ctx context.Context, req *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	var resp *hashlinev1.ReadResponse
	err := c.retry.do(ctx, unavailable, func(ctx context.Context) (err error) {
		resp, err = c.rpc.Read(ctx, req)
		return err
	})
	return resp, c.fromStatus(err)
}

// Edit applies a batch of edits. A stale reference comes back as a
// StaleRefError. With retries on, a request without a request_id is sent
// as a copy with a random one (req is not changed), and every attempt
// carries the same key, so a retry after UNAVAILABLE or a server's
// DEADLINE_EXCEEDED gets the first attempt's outcome and never applies the
// batch twice. A deadline error that ends the call does not mean nothing
// was written: to try again yourself, set req.RequestId (NewRequestID)
// and send the same request again.
func (c *Client) Edit(ctx context.Context, req *hashlinev1.EditRequest) (*hashlinev1.EditResponse, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	if req.GetRequestId() == "" && c.retry.MaxAttempts > 1 {
		req = proto.CloneOf(req)
		req.RequestId = NewRequestID()
	}
	var resp *hashlinev1.EditResponse
	var d delivery
	err := c.retry.do(ctx, keyed, func(ctx context.Context) (err error) {
		resp, err = c.rpc.Edit(ctx, req, d.opt())
		return err
	})
	return resp, c.markNotSent(c.fromStatus(err), &d)
}

// Write creates or overwrites a whole file. Like Edit, it carries a
// request_id when retries are on (a copy of req gets a random one), so its
// retries never write twice.
func (c *Client) Write(ctx context.Context, req *hashlinev1.WriteRequest) (*hashlinev1.WriteResponse, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	if req.GetRequestId() == "" && c.retry.MaxAttempts > 1 {
		req = proto.CloneOf(req)
		req.RequestId = NewRequestID()
	}
	var resp *hashlinev1.WriteResponse
	var d delivery
	err := c.retry.do(ctx, keyed, func(ctx context.Context) (err error) {
		resp, err = c.rpc.Write(ctx, req, d.opt())
		return err
	})
	return resp, c.markNotSent(c.fromStatus(err), &d)
}

// Delete removes a file or an empty directory (with
// req.ExpectedVersion, only that version of the file). Like Edit, it
// carries a request_id when retries are on, so a retry never deletes a
// file created again since.
func (c *Client) Delete(ctx context.Context, req *hashlinev1.DeleteRequest) (*hashlinev1.DeleteResponse, error) {
	if req.GetRequestId() == "" && c.retry.MaxAttempts > 1 {
		req = proto.CloneOf(req)
		req.RequestId = NewRequestID()
	}
	return keyedCall(ctx, c, req, c.rpc.Delete)
}

// Move renames a file inside the workspace, creating missing parent
// directories; the versions agents saw of it move with it. It replaces a
// file at req.To only with req.Overwrite. Like Edit, it carries a
// request_id when retries are on.
func (c *Client) Move(ctx context.Context, req *hashlinev1.MoveRequest) (*hashlinev1.MoveResponse, error) {
	if req.GetRequestId() == "" && c.retry.MaxAttempts > 1 {
		req = proto.CloneOf(req)
		req.RequestId = NewRequestID()
	}
	return keyedCall(ctx, c, req, c.rpc.Move)
}

// Apply makes a change set (edits, writes, deletes and moves of several
// files) all or nothing: any failing change refuses the whole set, and the
// error's details list every failing change (ChangeError, with StaleRef
// and EditError details carrying their change_index). Like Edit, it
// carries a request_id when retries are on, so a retry never applies the
// set twice.
func (c *Client) Apply(ctx context.Context, req *hashlinev1.ApplyRequest) (*hashlinev1.ApplyResponse, error) {
	if req.GetRequestId() == "" && c.retry.MaxAttempts > 1 {
		req = proto.CloneOf(req)
		req.RequestId = NewRequestID()
	}
	return keyedCall(ctx, c, req, c.rpc.Apply)
}

// Revert undoes the change (or change set) req.ChangeId names, as History,
// Blame and Watch events give it, rebased over every change since: the
// lines it wrote go back to what they were wherever they are now, and
// others' later changes stay. A later change to the same lines or paths
// refuses it (ErrRevertConflict; the *Error's Later names the changes and
// Stale shows the lines with fresh tags), and nothing is written. The
// revert is a change of its own (its ChangeId), which can be reverted in
// turn. Like Edit, it carries a request_id when retries are on (a dry run
// writes nothing and needs none).
func (c *Client) Revert(ctx context.Context, req *hashlinev1.RevertRequest) (*hashlinev1.RevertResponse, error) {
	if req.GetRequestId() == "" && !req.GetDryRun() && c.retry.MaxAttempts > 1 {
		req = proto.CloneOf(req)
		req.RequestId = NewRequestID()
	}
	return keyedCall(ctx, c, req, c.rpc.Revert)
}

// keyedCall is a call carrying a request_id, retried as Edit's are.
func keyedCall[Req, Resp any](ctx context.Context, c *Client, req Req, call func(context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	var resp Resp
	var d delivery
	err := c.retry.do(ctx, keyed, func(ctx context.Context) (err error) {
		resp, err = call(ctx, req, d.opt())
		return err
	})
	return resp, c.markNotSent(c.fromStatus(err), &d)
}

// Grep runs a search and calls fn for each file with matches, in path
// order, then returns the summary. An error from fn stops the search. The
// search is retried while the server is UNAVAILABLE until the first file
// has been handed to fn; after that a retry would repeat files, so the
// error is returned.
func (c *Client) Grep(ctx context.Context, req *hashlinev1.GrepRequest, fn func(*hashlinev1.GrepFile) error) (*hashlinev1.GrepSummary, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	var summary *hashlinev1.GrepSummary
	delivered := false
	errFn := errors.New("fn failed")
	var fnErr error
	err := c.retry.do(ctx, func(err error) bool { return !delivered && unavailable(err) }, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := c.rpc.Grep(ctx, req)
		if err != nil {
			return err
		}
		for {
			msg, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return errors.New("hashline: grep stream ended without a summary")
			}
			if err != nil {
				return err
			}
			if s := msg.GetSummary(); s != nil {
				summary = s
				return nil
			}
			if f := msg.GetFile(); f != nil && fn != nil {
				delivered = true
				if err := fn(f); err != nil {
					fnErr = err
					return errFn
				}
			}
		}
	})
	if fnErr != nil {
		return nil, fnErr
	}
	if err != nil {
		return nil, c.fromStatus(err)
	}
	return summary, nil
}

// List returns one page of the entries under a directory (req.Path, ""
// for the workspace root), sorted; with Truncated set, NextPageToken goes
// into req.PageToken for the next page. It is retried while the server is
// unavailable. ListAll walks every page.
func (c *Client) List(ctx context.Context, req *hashlinev1.ListRequest) (*hashlinev1.ListResponse, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	var resp *hashlinev1.ListResponse
	err := c.retry.do(ctx, unavailable, func(ctx context.Context) (err error) {
		resp, err = c.rpc.List(ctx, req)
		return err
	})
	return resp, c.fromStatus(err)
}

// History returns a page of the change history of req's path (a file, a
// directory, or "" for the whole workspace), newest first: who made each
// change, when, and with IncludeDiff its lines as a tagged diff. Continue
// with NextPageToken as PageToken. Retried like Read: it changes nothing.
func (c *Client) History(ctx context.Context, req *hashlinev1.HistoryRequest) (*hashlinev1.HistoryResponse, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	var resp *hashlinev1.HistoryResponse
	err := c.retry.do(ctx, unavailable, func(ctx context.Context) (err error) {
		resp, err = c.rpc.History(ctx, req)
		return err
	})
	return resp, c.fromStatus(err)
}

// Blame returns a page of a file's lines, tagged as Read shows them, each
// with the change that last wrote it (its id, agent and time) or marked
// before the history. Retried like Read.
func (c *Client) Blame(ctx context.Context, req *hashlinev1.BlameRequest) (*hashlinev1.BlameResponse, error) {
	ctx, cancel := c.callCtx(ctx)
	defer cancel()
	var resp *hashlinev1.BlameResponse
	err := c.retry.do(ctx, unavailable, func(ctx context.Context) (err error) {
		resp, err = c.rpc.Blame(ctx, req)
		return err
	})
	return resp, c.fromStatus(err)
}

// ListAllPage is the page size ListAll asks for when req sets none: the
// most entries the server gives in one page (it also ends a page before
// the response would pass its byte limit). Fewer calls list a whole tree
// faster; a caller showing pages to a model sets a smaller MaxEntries.
const ListAllPage = 100000

// ListAll calls List page after page (req is not changed) and calls fn
// with each page's entries, in order, until the last page or fn's error.
// Pages are of req.MaxEntries, or ListAllPage when it is 0. Every page is
// its own call with its own deadline; entries added or removed between
// pages are seen or not, but no entry is seen twice.
func (c *Client) ListAll(ctx context.Context, req *hashlinev1.ListRequest, fn func([]*hashlinev1.Entry) error) error {
	page := proto.CloneOf(req)
	if page.GetMaxEntries() == 0 {
		page.MaxEntries = ListAllPage
	}
	for {
		resp, err := c.List(ctx, page)
		if err != nil {
			return err
		}
		if err := fn(resp.GetEntries()); err != nil {
			return err
		}
		if !resp.GetTruncated() || resp.GetNextPageToken() == "" {
			return nil
		}
		page.PageToken = resp.GetNextPageToken()
	}
}

// Watch subscribes to changes of the files under req's path ("" for the
// whole workspace) and calls fn with each event until ctx ends (Watch then
// returns ctx's error), fn returns an error (returned as is), or the
// stream fails. It has no default deadline and is not retried: an event
// with a non-zero dropped count, or an error, means changes were missed,
// so Read the files you care about again before watching again (a server
// shutting down ends the stream with UNAVAILABLE, reason SHUTTING_DOWN).
// The subscription is live once the server has sent the stream's response
// headers; to wait for that, use RPC().Watch and the stream's Header.
func (c *Client) Watch(ctx context.Context, req *hashlinev1.WatchRequest, fn func(*hashlinev1.WatchResponse) error) error {
	sctx, cancel := context.WithCancel(c.ctx(ctx))
	defer cancel()
	stream, err := c.rpc.Watch(sctx, req)
	if err != nil {
		return c.fromStatus(err)
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				return errors.New("hashline: the server ended the watch stream without an error; watch again")
			}
			return c.fromStatus(err)
		}
		if err := fn(ev); err != nil {
			return err
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
