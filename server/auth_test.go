package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/server"
)

const (
	writerToken = "writer-token-0123456789"
	readerToken = "reader-token-0123456789"
	scopedToken = "scoped-token-0123456789"
)

// tokensYAML has one token of each kind; the reader's is given by its hash.
var tokensYAML = `
tokens:
  - token: ` + writerToken + `
    agent: writer
    permission: write
  - sha256: ` + sha256Hex(readerToken) + `
    agent: reader
    permission: read
  - token: ` + scopedToken + `
    agent: scoped
    permission: write
    paths: [src, docs/api/]
`

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func withToken(ctx context.Context, tok string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
}

// newAuthEnv is a server with tokensYAML and this tree:
//
//	src/a.go           secret/key.txt     docs/api/x.md   docs/other.md
//	src/out -> ../secret/key.txt          src/outdir -> ../secret
func newAuthEnv(t *testing.T, cfg server.GRPCConfig) *env {
	t.Helper()
	toks, err := server.ParseTokens([]byte(tokensYAML))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auth = server.NewAuthenticator(toks, nil)
	e := newEnvConfig(t, cfg, nil)
	e.write("src/a.go", "package a // needle\n")
	e.write("secret/key.txt", "needle secret\n")
	e.write("docs/api/x.md", "needle api\n")
	e.write("docs/other.md", "needle other\n")
	for link, target := range map[string]string{"src/out": "../secret/key.txt", "src/outdir": "../secret"} {
		if err := os.Symlink(target, filepath.Join(e.root, link)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestTokensGateEveryFileServiceCall(t *testing.T) {
	e := newAuthEnv(t, server.GRPCConfig{})
	grepAll := func(tok, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := e.c.Grep(withToken(ctx, tok), &hashlinev1.GrepRequest{Pattern: "needle", Path: path}, nil)
			return err
		}
	}
	read := func(tok, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := e.c.Read(withToken(ctx, tok), &hashlinev1.ReadRequest{Path: path})
			return err
		}
	}
	write := func(tok, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := e.c.Write(withToken(ctx, tok), &hashlinev1.WriteRequest{Path: path, Content: "pwned\n"})
			return err
		}
	}
	edit := func(tok, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := e.c.Edit(withToken(ctx, tok), &hashlinev1.EditRequest{Path: path, Edits: []*hashlinev1.FileEdit{client.Append("pwned")}})
			return err
		}
	}
	watch := func(tok, path string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			s, err := e.c.RPC().Watch(withToken(ctx, tok), &hashlinev1.WatchRequest{Path: path})
			if err == nil {
				_, err = s.Recv()
			}
			return client.FromStatus(err)
		}
	}
	tests := []struct {
		name   string
		call   func(ctx context.Context) error
		code   codes.Code
		reason string
	}{
		{"a call without a token is refused", func(ctx context.Context) error {
			_, err := e.c.Read(ctx, &hashlinev1.ReadRequest{Path: "src/a.go"})
			return err
		}, codes.Unauthenticated, "UNAUTHENTICATED"},
		{"an unknown token is refused", read("not-a-token-at-all-000", "src/a.go"), codes.Unauthenticated, "UNAUTHENTICATED"},
		{"a prefix of a valid token is refused", read(writerToken[:len(writerToken)-1], "src/a.go"), codes.Unauthenticated, "UNAUTHENTICATED"},
		{"a token without Bearer is refused", func(ctx context.Context) error {
			_, err := e.c.Read(metadata.AppendToOutgoingContext(ctx, "authorization", writerToken), &hashlinev1.ReadRequest{Path: "src/a.go"})
			return err
		}, codes.Unauthenticated, "UNAUTHENTICATED"},
		{"a stream without a token is refused", func(ctx context.Context) error {
			_, err := e.c.Grep(ctx, &hashlinev1.GrepRequest{Pattern: "x"}, nil)
			return err
		}, codes.Unauthenticated, "UNAUTHENTICATED"},
		{"a read-only token may not edit", edit(readerToken, "src/a.go"), codes.PermissionDenied, "READ_ONLY"},
		{"a read-only token may not write", write(readerToken, "new.txt"), codes.PermissionDenied, "READ_ONLY"},
		{"a scoped token may not read outside its prefixes", read(scopedToken, "docs/other.md"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not read a sibling that shares a name prefix", read(scopedToken, "docs/api2/x.md"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not read by an absolute path outside its prefixes", func(ctx context.Context) error {
			return read(scopedToken, filepath.Join(e.root, "docs/other.md"))(ctx)
		}, codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not climb out with ..", read(scopedToken, "src/../secret/key.txt"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not read through a symlink out of its prefixes", read(scopedToken, "src/out"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not edit through a symlink out of its prefixes", edit(scopedToken, "src/out"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not create a file through a linked directory", write(scopedToken, "src/outdir/new/deeper.txt"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not write outside its prefixes", write(scopedToken, "docs/new.md"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not grep a directory outside its prefixes", grepAll(scopedToken, "secret"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not grep through a linked directory", grepAll(scopedToken, "src/outdir"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not watch a directory outside its prefixes", watch(scopedToken, "secret"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not watch through a linked directory", watch(scopedToken, "src/outdir"), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a scoped token may not read the empty path as everything", read(scopedToken, ""), codes.PermissionDenied, "PATH_NOT_ALLOWED"},
		{"a watch without a token is refused", watch("", "src"), codes.Unauthenticated, "UNAUTHENTICATED"},
		{"nobody may read a server temp file", read(writerToken, "src/.hashline-234567ABCDEFGHIJKLMNOPQRST.tmp"), codes.InvalidArgument, "INVALID_PATH"},
		{"nobody may write a server temp file", write(writerToken, ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp"), codes.InvalidArgument, "INVALID_PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.snapshot()
			err := tt.call(e.ctx)
			var ce *client.Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a server error", err)
			}
			if ce.Code != tt.code || ce.Reason != tt.reason {
				t.Errorf("got %v %s, want %v %s: %s", ce.Code, ce.Reason, tt.code, tt.reason, ce.Message)
			}
			if ce.Message == "" || strings.Contains(ce.Message, writerToken) || strings.Contains(ce.Message, scopedToken) {
				t.Errorf("message %q is empty or leaks a token", ce.Message)
			}
			e.assertUnchanged(before)
		})
	}
}

func TestTokensAllowWhatTheyGrant(t *testing.T) {
	e := newAuthEnv(t, server.GRPCConfig{})
	ctx := e.ctx
	if _, err := e.c.Read(withToken(ctx, readerToken), &hashlinev1.ReadRequest{Path: "secret/key.txt"}); err != nil {
		t.Errorf("reader: %v", err)
	}
	if _, err := e.c.Write(withToken(ctx, writerToken), &hashlinev1.WriteRequest{Path: "secret/new.txt", Content: "x\n"}); err != nil {
		t.Errorf("writer: %v", err)
	}
	for _, p := range []string{"src/a.go", "./src/a.go", filepath.Join(e.root, "src/a.go"), "docs/api/x.md", "docs/api"} {
		_, err := e.c.Read(withToken(ctx, scopedToken), &hashlinev1.ReadRequest{Path: p})
		if p == "docs/api" {
			// Allowed, and then refused for what it is: a directory.
			if !errors.Is(err, client.ErrNotRegularFile) {
				t.Errorf("scoped read of %s: %v", p, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("scoped read of %s: %v", p, err)
		}
	}
	if _, err := e.c.Write(withToken(ctx, scopedToken), &hashlinev1.WriteRequest{Path: "src/new/b.go", Content: "package b\n"}); err != nil {
		t.Errorf("scoped write: %v", err)
	}
	if got := e.read("src/new/b.go"); got != "package b\n" {
		t.Errorf("scoped write wrote %q", got)
	}

	// A search from the root (or a directory above a prefix) finds only
	// what the token may see: not secret/, not docs/other.md, and not the
	// secret behind the symlink inside src/.
	for _, path := range []string{"", ".", "docs"} {
		var got []string
		sum, err := e.c.Grep(withToken(ctx, scopedToken), &hashlinev1.GrepRequest{Pattern: "needle", Path: path}, func(f *hashlinev1.GrepFile) error {
			got = append(got, f.GetPath())
			return nil
		})
		if err != nil {
			t.Fatalf("scoped grep of %q: %v", path, err)
		}
		want := []string{"docs/api/x.md", "src/a.go"}
		if path == "docs" {
			want = want[:1]
		}
		if !slices.Equal(got, want) || int(sum.GetMatches()) != len(want) {
			t.Errorf("scoped grep of %q found %v (%d matches), want %v", path, got, sum.GetMatches(), want)
		}
	}
	// A watch of the whole workspace reports only the allowed files.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w, err := e.c.RPC().Watch(withToken(wctx, scopedToken), &hashlinev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Header(); err != nil { // the subscription is live
		t.Fatal(err)
	}
	for _, p := range []string{"secret/hidden.txt", "docs/other.md", "src/seen.txt"} {
		if _, err := e.c.Write(withToken(ctx, writerToken), &hashlinev1.WriteRequest{Path: p, Content: "x\n"}); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := w.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.String(); !strings.Contains(got, "src/seen.txt") || strings.Contains(got, "secret") || strings.Contains(got, "other.md") {
		t.Errorf("scoped watch got %v, want only the event of src/seen.txt", ev)
	}

	// The unrestricted writer sees everything, the link's target included.
	var all []string
	if _, err := e.c.Grep(withToken(ctx, writerToken), &hashlinev1.GrepRequest{Pattern: "needle"}, func(f *hashlinev1.GrepFile) error {
		all = append(all, f.GetPath())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(all, "src/out") || !slices.Contains(all, "secret/key.txt") {
		t.Errorf("writer grep found %v", all)
	}
}

func TestHealthAndReflectionNeedNoToken(t *testing.T) {
	e := newAuthEnv(t, server.GRPCConfig{})
	h, err := healthpb.NewHealthClient(e.conn).Check(e.ctx, &healthpb.HealthCheckRequest{Service: "hashline.v1.FileService"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without a token: %v %v", h, err)
	}
	stream, err := reflectionpb.NewServerReflectionClient(e.conn).ServerReflectionInfo(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("reflection without a token: %v", err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	if !slices.Contains(names, "hashline.v1.FileService") {
		t.Errorf("reflection lists %v", names)
	}
}

// TestTokenAgentIsTheIdentity shows through the per-agent rate limit that
// the token's agent name, not the x-agent-id a caller claims, is who the
// server counts.
func TestTokenAgentIsTheIdentity(t *testing.T) {
	e := newAuthEnv(t, server.GRPCConfig{RateLimit: server.NewRateLimiter(0.001, 1, 0)})
	e.write("f.txt", "x\n")
	rpc := e.c.RPC() // the raw stub: no client-side retries
	call := func(tok, claimed string) error {
		ctx := metadata.AppendToOutgoingContext(withToken(e.ctx, tok), client.AgentMetadataKey, claimed)
		_, err := rpc.Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt"})
		return err
	}
	if err := call(writerToken, "alice"); err != nil {
		t.Fatal(err)
	}
	err := call(writerToken, "bob")
	if ce, ok := client.FromStatus(err).(*client.Error); !ok || ce.Reason != "RATE_LIMITED" || ce.Metadata["agent"] != "writer" {
		t.Errorf("same token, another claimed name: %v, want RATE_LIMITED for agent writer", err)
	}
	if err := call(readerToken, "alice"); err != nil {
		t.Errorf("another token has its own bucket: %v", err)
	}
}

func TestParseTokens(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		wantErr string // "" for a valid file
	}{
		{name: "yaml", file: tokensYAML},
		{name: "json", file: `{"tokens": [{"token": "` + writerToken + `", "agent": "w", "permission": "write", "paths": ["a/b", "c"]}]}`},
		{name: "dot means the whole workspace", file: "tokens: [{token: " + writerToken + ", agent: w, permission: read, paths: [src, .]}]"},
		{name: "empty file", file: "", wantErr: "empty"},
		{name: "no tokens", file: "tokens: []", wantErr: "no tokens"},
		{name: "unknown field", file: "tokens: [{token: " + writerToken + ", agent: w, permission: read, path: [x]}]", wantErr: "field path not found"},
		{name: "short token", file: "tokens: [{token: short, agent: w, permission: read}]", wantErr: "at least 16"},
		{name: "token and hash", file: "tokens: [{token: " + writerToken + ", sha256: " + sha256Hex("x") + ", agent: w, permission: read}]", wantErr: "give one"},
		{name: "bad hash", file: "tokens: [{sha256: abc, agent: w, permission: read}]", wantErr: "64 hex"},
		{name: "no token", file: "tokens: [{agent: w, permission: read}]", wantErr: "no token"},
		{name: "no agent", file: "tokens: [{token: " + writerToken + ", permission: read}]", wantErr: "no agent"},
		{name: "no permission", file: "tokens: [{token: " + writerToken + ", agent: w}]", wantErr: "no permission"},
		{name: "bad permission", file: "tokens: [{token: " + writerToken + ", agent: w, permission: admin}]", wantErr: "want read or write"},
		{name: "duplicate token", file: "tokens: [{token: " + writerToken + ", agent: a, permission: read}, {sha256: " + sha256Hex(writerToken) + ", agent: b, permission: write}]", wantErr: "same token as tokens[0]"},
		{name: "absolute path", file: "tokens: [{token: " + writerToken + ", agent: w, permission: read, paths: [/etc]}]", wantErr: "absolute"},
		{name: "path climbing out", file: "tokens: [{token: " + writerToken + ", agent: w, permission: read, paths: [a/../../b]}]", wantErr: "climbs out"},
		{name: "empty path", file: "tokens: [{token: " + writerToken + ", agent: w, permission: read, paths: ['']}]", wantErr: "empty path"},
		{name: "two documents", file: "tokens: [{token: " + writerToken + ", agent: w, permission: read}]\n---\ntokens: []\n", wantErr: "more than one"},
		{name: "the example's token placeholder copied literally", file: "tokens: [{token: \"<a random token: openssl rand -hex 32>\", agent: w, permission: read}]", wantErr: "placeholder"},
		{name: "the example's sha256 placeholder copied literally", file: "tokens: [{sha256: \"<hex SHA-256 of your token>\", agent: w, permission: read}]", wantErr: "placeholder"},
		{name: "token with a newline", file: "tokens: [{token: \"" + writerToken + "\\n\", agent: w, permission: read}]", wantErr: "control characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks, err := server.ParseTokens([]byte(tt.file))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
			case tt.wantErr == "" && toks.Len() == 0:
				t.Fatal("no tokens parsed")
			}
			if err != nil && strings.Contains(err.Error(), writerToken) {
				t.Errorf("error %q repeats the token", err)
			}
		})
	}
}

func TestLookupFindsEveryTokenAndOnlyThose(t *testing.T) {
	toks, err := server.ParseTokens([]byte(tokensYAML))
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]string{writerToken: "writer", readerToken: "reader", scopedToken: "scoped"} {
		if g := toks.Lookup(tok); g == nil || g.Agent != want {
			t.Errorf("Lookup(%q) = %v, want agent %s", tok, g, want)
		}
	}
	for _, tok := range []string{"", writerToken + " ", strings.ToUpper(writerToken), sha256Hex(readerToken)} {
		if g := toks.Lookup(tok); g != nil {
			t.Errorf("Lookup(%q) = %v, want nil", tok, g)
		}
	}
	g := toks.Lookup(scopedToken)
	if g.Permission != server.PermWrite || !slices.Equal(g.Prefixes, []string{"src", "docs/api"}) {
		t.Errorf("scoped grant = %+v", g)
	}
}

// TestAuthenticatorReplaceTakesEffect swaps the token set as a SIGHUP
// reload does: the old token stops working, the new one works.
func TestAuthenticatorReplaceTakesEffect(t *testing.T) {
	old, err := server.ParseTokens([]byte(tokensYAML))
	if err != nil {
		t.Fatal(err)
	}
	const fresh = "fresh-token-0123456789"
	next, err := server.ParseTokens([]byte("tokens: [{token: " + fresh + ", agent: w, permission: read}]"))
	if err != nil {
		t.Fatal(err)
	}
	a := server.NewAuthenticator(old, nil)
	e := newEnvConfig(t, server.GRPCConfig{Auth: a, DefaultTimeout: 10 * time.Second}, nil)
	e.write("f.txt", "x\n")
	if _, err := e.c.Read(withToken(e.ctx, writerToken), &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	a.Replace(next)
	if _, err := e.c.Read(withToken(e.ctx, writerToken), &hashlinev1.ReadRequest{Path: "f.txt"}); codeOf(err) != codes.Unauthenticated {
		t.Errorf("old token after Replace: %v", err)
	}
	if _, err := e.c.Read(withToken(e.ctx, fresh), &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Errorf("new token after Replace: %v", err)
	}
}

// codeOf returns the gRPC code of err (OK for nil).
func codeOf(err error) codes.Code { return grpcstatus.Code(err) }

// TestSecurityExampleHoldsNoWorkingToken: the token file example in
// SECURITY.md is copied by readers; copied literally, it must be refused
// rather than serve tokens everyone who read it knows.
func TestSecurityExampleHoldsNoWorkingToken(t *testing.T) {
	doc, err := os.ReadFile("../SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Authentication and authorization")
	if !ok {
		t.Fatal("SECURITY.md has no section \"Authentication and authorization\"")
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		t.Fatal("the section has no yaml example")
	}
	example, _, _ := strings.Cut(rest, "```")
	if _, err := server.ParseTokens([]byte(example)); err == nil || !strings.Contains(err.Error(), "placeholder") {
		t.Errorf("SECURITY.md's example parses as %v; want it refused for its placeholders:\n%s", err, example)
	}
}
