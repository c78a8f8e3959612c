package mcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
	"github.com/hashline/hashline/internal/wire"
)

// readArgs are read_file's arguments: the peer's path, offset, limit, plain.
type readArgs struct {
	Path   string `json:"path" jsonschema:"Relative to the workspace root"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Plain  bool   `json:"plain,omitempty" jsonschema:"LINE|CONTENT without hashes"`
}

func (t *tools) read(ctx context.Context, req *sdk.CallToolRequest, a readArgs) (*sdk.CallToolResult, any, error) {
	// The tagged text is all read_file shows; plain output needs the
	// structured lines' contents.
	resp, err := t.c.Read(t.ctx(ctx, req), &hashlinev1.ReadRequest{Path: a.Path, Offset: int32Sat(a.Offset), Limit: int32Sat(a.Limit), OmitLines: !a.Plain})
	if err != nil {
		return failure("reading", a.Path, err), nil, nil
	}
	resp.Path = a.Path // the published server names the file as it was asked for
	return textResult(render.Read(resp, render.Options{Face: render.MCP, Plain: a.Plain})), nil, nil
}

// writeArgs are write_file's arguments.
type writeArgs struct {
	Path    string `json:"path" jsonschema:"Relative to the workspace root"`
	Content string `json:"content" jsonschema:"The whole file"`
	// StrictSyntax is the API's WriteRequest.strict_syntax (edit_file's
	// schema describes it: tools/list stays below the peer's).
	StrictSyntax bool `json:"strict_syntax,omitempty"`
}

func (t *tools) write(ctx context.Context, req *sdk.CallToolRequest, a writeArgs) (*sdk.CallToolResult, any, error) {
	resp, err := t.c.Write(t.ctx(ctx, req), &hashlinev1.WriteRequest{Path: a.Path, Content: a.Content, StrictSyntax: a.StrictSyntax})
	if err != nil {
		return failure("writing", a.Path, err), nil, nil
	}
	return textResult(render.Write(resp, render.Options{Face: render.MCP})), nil, nil
}

// grepArgs are grep's arguments, named as the peer names them (after
// ripgrep's flags).
type grepArgs struct {
	Pattern string `json:"pattern" jsonschema:"RE2 regular expression"`
	Path    string `json:"path,omitempty" jsonschema:"File or directory (default: the workspace)"`
	Glob    string `json:"glob,omitempty" jsonschema:"Only files matching, e.g. *.go or src/**/*.ts"`
	Type    string `json:"type,omitempty" jsonschema:"Only files of a type: go, py, js..."`
	I       bool   `json:"i,omitempty" jsonschema:"Ignore case"`
	Pre     int    `json:"pre,omitempty" jsonschema:"Context lines before each match"`
	Post    int    `json:"post,omitempty" jsonschema:"Context lines after each match"`
	Limit   int    `json:"limit,omitempty"`
}

func (t *tools) grep(ctx context.Context, req *sdk.CallToolRequest, a grepArgs) (*sdk.CallToolResult, any, error) {
	g := &hashlinev1.GrepRequest{
		Pattern:         a.Pattern,
		Path:            a.Path,
		CaseInsensitive: a.I,
		Before:          int32Sat(a.Pre),
		After:           int32Sat(a.Post),
		MaxMatches:      int32Sat(a.Limit),
	}
	if a.Glob != "" {
		g.Glob = []string{a.Glob}
	}
	if a.Type != "" {
		g.Type = []string{a.Type}
	}
	var files []*hashlinev1.GrepFile
	sum, err := t.c.Grep(t.ctx(ctx, req), g, func(f *hashlinev1.GrepFile) error {
		files = append(files, f)
		return nil
	})
	if err != nil {
		what := a.Path
		if what == "" {
			what = "the workspace"
		}
		return failure("searching", what, err), nil, nil
	}
	return textResult(render.Grep(files, sum, render.Options{Face: render.MCP, Context: a.Pre > 0 || a.Post > 0})), nil, nil
}

// listArgs are list_directory's arguments.
type listArgs struct {
	Path      string `json:"path,omitempty" jsonschema:"Default: the workspace"`
	Recursive bool   `json:"recursive,omitempty"`
	Glob      string `json:"glob,omitempty" jsonschema:"e.g. *.go"`
	Hidden    bool   `json:"hidden,omitempty"`
	PageToken string `json:"page_token,omitempty"`
}

func (t *tools) list(ctx context.Context, req *sdk.CallToolRequest, a listArgs) (*sdk.CallToolResult, any, error) {
	l := &hashlinev1.ListRequest{Path: a.Path, Recursive: a.Recursive, Hidden: a.Hidden, PageToken: a.PageToken}
	if a.Glob != "" {
		l.Glob = []string{a.Glob}
	}
	resp, err := t.c.List(t.ctx(ctx, req), l)
	if err != nil {
		what := a.Path
		if what == "" {
			what = "the workspace"
		}
		return failure("listing", what, err), nil, nil
	}
	return textResult(render.List(resp, render.Options{Face: render.MCP})), nil, nil
}

// failure turns a call's error into the tool error a model reads. A stale
// reference is the server's ">>>" view of the fresh tags, verbatim: it is
// written to be acted on. Anything else says what failed and the server's
// message, which says what to do next.
func failure(doing, path string, err error) *sdk.CallToolResult {
	var stale client.StaleRefError
	if errors.As(err, &stale) {
		return errorResult(render.Stale(stale.Err.Message, stale.CurrentVersion, render.MCP))
	}
	var e *client.Error
	if errors.As(err, &e) {
		why := e.Reason
		if why == "" {
			why = render.CodeName(e.Code)
		}
		hint := ""
		switch {
		case e.NotSent && e.TLS == client.NoTLSProblem && e.Reason == "":
			// Refused before anything was sent: nothing was applied.
			hint = "; nothing was sent: no hashline server answered at the address given to hashline mcp --server. Start one there (hashlined serve), then retry"
		case e.Code == codes.Unavailable:
			if e.TLS != client.NoTLSProblem {
				// Reached, but the TLS set-ups differ: nothing was applied.
				hint = "; the TLS settings of hashline mcp --server do not match the server's, in the MCP client's configuration: " + e.TLS.FlagHint()
			} else if e.Reason == "" && (e.HTTPStatus != 0 || strings.HasPrefix(e.Message, wire.RouterMessagePrefix)) {
				// The router or proxy at --server answered for the
				// workspace's server, and its message (or the client's,
				// for a proxy's HTTP error page) says what to do; a change
				// may have reached that server before it went away.
				if changes(doing) {
					hint = "; the change may or may not have been applied: once the workspace answers, read_file " + path + " and look before making it again"
				}
			} else if e.Reason == "" && changes(doing) {
				// The client retried the change under one request_id while
				// its attempts lasted; the last may have been cut off after
				// the server applied it.
				hint = "; the hashline server could not be reached or the connection broke: the change may or may not have been applied. Check that hashlined is running at the address given to hashline mcp --server, then read_file " + path + " and look before making the change again"
			} else if e.Reason == "" {
				hint = "; the hashline server is unreachable: check that hashlined is running at the address given to hashline mcp --server, then retry"
			}
		case e.Code == codes.DeadlineExceeded || e.Code == codes.Canceled:
			if changes(doing) {
				hint = "; the change may or may not have been applied: read_file " + path + " and look before making it again"
			}
		case e.Code == codes.ResourceExhausted:
			if e.Reason == "" && doing == "searching" {
				hint = "; the results are too large for one answer: give a smaller limit, a narrower path or glob, or less context"
			}
		case e.Code == codes.Unauthenticated:
			hint = "; the hashline server wants a token: give hashline mcp --token TOKEN (or HASHLINE_TOKEN) in the MCP client's configuration"
		}
		return errorResult(render.Refused(doing, path, why, e.Message, render.MCP) + hint)
	}
	return errorResult(fmt.Sprintf("Error %s %s: %v", doing, path, err))
}

// changes reports whether failure's doing is a call that changes a file.
func changes(doing string) bool {
	return doing == "editing" || doing == "writing" || doing == "deleting" || doing == "moving" || doing == "undoing"
}

// int32Sat converts a number a model sent to the service's int32 fields,
// saturating instead of wrapping: an offset past any file stays past it, a
// huge limit stays "as many as allowed", a negative number stays negative
// (and is refused by the server with its own message).
func int32Sat(n int) int32 {
	return int32(max(min(n, math.MaxInt32), math.MinInt32))
}
