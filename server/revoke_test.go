package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/server"
)

// reloadedYAML is tokensYAML after an operator's edit: the reader's token
// removed, the scoped token narrowed to src, the writer's unchanged.
var reloadedYAML = `
tokens:
  - token: ` + writerToken + `
    agent: writer
    permission: write
  - token: ` + scopedToken + `
    agent: scoped
    permission: write
    paths: [src]
`

// authEnvWithReload is newAuthEnv whose Authenticator the test holds, to
// reload it as hashlined does on SIGHUP.
func authEnvWithReload(t *testing.T) (*env, *server.Authenticator) {
	t.Helper()
	toks, err := server.ParseTokens([]byte(tokensYAML))
	if err != nil {
		t.Fatal(err)
	}
	a := server.NewAuthenticator(toks, nil)
	e := newEnvConfig(t, server.GRPCConfig{Auth: a}, nil)
	e.write("src/a.go", "package a\n")
	e.write("docs/api/x.md", "x\n")
	return e, a
}

func reload(t *testing.T, a *server.Authenticator, yaml string) {
	t.Helper()
	toks, err := server.ParseTokens([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	a.Replace(toks)
}

// openWatch opens a Watch stream with tok and waits until it is live.
func openWatch(t *testing.T, e *env, tok, path string) hashlinev1.FileService_WatchClient {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	t.Cleanup(cancel)
	st, err := e.c.RPC().Watch(withToken(ctx, tok), &hashlinev1.WatchRequest{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Header(); err != nil {
		t.Fatalf("Watch %q with %s: %v", path, tok, err)
	}
	return st
}

func TestTokenReloadEndsOrNarrowsOpenWatchStreams(t *testing.T) {
	e, a := authEnvWithReload(t)
	type stream struct {
		name, token, path string
		// the stream's end, or "" if it must go on
		code   codes.Code
		reason hashlinev1.ErrorReason
		inMsg  string
		// the first event it must get after the reload, if it goes on
		next string
	}
	streams := []stream{
		{name: "a removed token's stream ends UNAUTHENTICATED, saying the token was revoked",
			token: readerToken, path: "", code: codes.Unauthenticated, reason: server.ReasonUnauthenticated, inMsg: "revoked"},
		{name: "a stream of a path its narrowed token no longer covers ends PERMISSION_DENIED",
			token: scopedToken, path: "docs/api", code: codes.PermissionDenied, reason: server.ReasonPathNotAllowed, inMsg: "reloaded its token file"},
		{name: "a stream of the whole workspace goes on, seeing only the narrowed token's paths",
			token: scopedToken, path: "", next: "src/after.go"},
		{name: "an unchanged token's stream goes on",
			token: writerToken, path: "docs", next: "docs/api/after.md"},
	}
	open := make([]hashlinev1.FileService_WatchClient, len(streams))
	for i, s := range streams {
		open[i] = openWatch(t, e, s.token, s.path)
	}
	reload(t, a, reloadedYAML)
	// Written after the reload, in this order: a scoped stream that still
	// saw docs/api would get docs/api/after.md first.
	for _, p := range []string{"docs/api/after.md", "src/after.go"} {
		if _, err := e.c.Write(withToken(e.ctx, writerToken), &hashlinev1.WriteRequest{Path: p, Content: "after\n"}); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range streams {
		t.Run(s.name, func(t *testing.T) {
			ev, err := open[i].Recv()
			if s.next != "" {
				if err != nil || ev.GetPath() != s.next {
					t.Fatalf("Recv = %v, %v; want the event of %s", ev, err, s.next)
				}
				return
			}
			var ce *client.Error
			if !errors.As(client.FromStatus(err), &ce) || ce.Code != s.code || ce.Reason != client.ReasonName(s.reason) || !strings.Contains(ce.Message, s.inMsg) {
				t.Fatalf("Recv = %v, %v; want the stream ended with %v %s, saying %q", ev, err, s.code, s.reason, s.inMsg)
			}
		})
	}
	// The token file no longer knows the reader: a new stream is refused
	// as before.
	st, err := e.c.RPC().Watch(withToken(e.ctx, readerToken), &hashlinev1.WatchRequest{})
	if err == nil {
		_, err = st.Recv()
	}
	if codeOf(err) != codes.Unauthenticated {
		t.Errorf("a new Watch with the removed token: %v, want UNAUTHENTICATED", err)
	}
}

// Grep streams are covered like Watch: a search whose token is revoked
// while it runs ends UNAUTHENTICATED instead of finishing with a summary.
func TestTokenReloadEndsARunningGrep(t *testing.T) {
	e, a := authEnvWithReload(t)
	// Far more output than the flow-control windows and the server's
	// write buffer hold: while the client does not read, the search
	// cannot finish.
	line := strings.Repeat("needle ", 15) + "\n"
	for i := range 300 {
		e.write(fmt.Sprintf("g/f%03d.txt", i), strings.Repeat(line, 10))
	}
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return e.lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStaticStreamWindowSize(64<<10), grpc.WithStaticConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := hashlinev1.NewFileServiceClient(conn).Grep(withToken(e.ctx, readerToken),
		&hashlinev1.GrepRequest{Pattern: "needle", Path: "g", MaxMatches: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil { // the search is under way
		t.Fatal(err)
	}
	reload(t, a, reloadedYAML)
	files := 1
	for {
		r, err := st.Recv()
		if err == nil {
			if r.GetSummary() != nil {
				t.Fatalf("the search finished (%v) after its token was revoked", r.GetSummary())
			}
			files++
			continue
		}
		var ce *client.Error
		if err == io.EOF || !errors.As(client.FromStatus(err), &ce) || ce.Code != codes.Unauthenticated || !strings.Contains(ce.Message, "revoked") {
			t.Fatalf("after %d files the search ended with %v, want UNAUTHENTICATED saying the token was revoked", files, err)
		}
		break
	}
	if files >= 300 {
		t.Errorf("every file was sent (%d) after the token was revoked", files)
	}
}
