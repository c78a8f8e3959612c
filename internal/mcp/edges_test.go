package mcp_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// An edit item with one operation and another key beside it (an
// operation misspelt, or a field put next to its operation instead of
// inside it) is refused, naming the key; applying the one operation alone
// would change the file in a way nobody asked for.
func TestEditItemWithAnUnknownKeyIsRefused(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSession(t, b)
			const text = "one\ntwo\nthree\nfour\n"
			s.write("a.txt", text)
			tl := tagged(t, s.ok("read_file", map[string]any{"path": "a.txt"}))
			for _, tc := range []struct {
				name string
				item map[string]any
				want []string
			}{
				{"a misspelt operation", map[string]any{
					"set_line":    map[string]any{"anchor": ref(tl[0]), "new_text": "ONE"},
					"insert_afer": map[string]any{"anchor": ref(tl[3]), "text": "five"},
				}, []string{"edits[0] has set_line and unknown keys [insert_afer]", "exactly one of: set_line, replace_lines"}},
				{"a field beside its operation", map[string]any{
					"replace_lines": map[string]any{"start_anchor": ref(tl[1]), "new_text": "TWO-AND-THREE"},
					"end_anchor":    ref(tl[2]),
				}, []string{"unknown keys [end_anchor]", "fields go inside its object"}},
			} {
				got := s.fail("edit_file", map[string]any{"path": "a.txt", "edits": []any{tc.item}})
				for _, w := range tc.want {
					if !strings.Contains(got, w) {
						t.Errorf("%s: the error lacks %q:\n%s", tc.name, w, got)
					}
				}
				if now := s.read("a.txt"); now != text {
					t.Errorf("%s: the file changed to %q", tc.name, now)
				}
			}
		})
	}
}

// Two sessions of one MCP client (two windows, each starting its own
// hashline mcp --server) are two agents to the shared hashlined: one
// session's edit does not replace the version the other's references were
// made against, so those are rebased and land where they were meant to.
func TestSessionsOfOneClientAreSeparateAgents(t *testing.T) {
	root := t.TempDir()
	orig := "func a() {\n\tone()\n}\nfunc b() {\n\ttwo()\n}\nfunc c() {\n\tthree()\n}\n"
	if err := os.WriteFile(filepath.Join(root, "p.go"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	c, err := client.Dial(startServer(t, root, logs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func() *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "claude-code", Version: "1"}, nil).Connect(ctx, serve(t, ctx, c), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	call := func(cs *sdk.ClientSession, tool string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		txt := res.Content[0].(*sdk.TextContent).Text
		if res.IsError {
			t.Fatalf("%s: %s", tool, txt)
		}
		return txt
	}
	a, b := connect(), connect()
	tlA := tagged(t, call(a, "read_file", map[string]any{"path": "p.go"}))
	call(b, "read_file", map[string]any{"path": "p.go"})
	call(b, "edit_file", map[string]any{"path": "p.go", "edits": []any{map[string]any{"prepend": map[string]any{"text": "func z() {\n\tzero()\n}\n"}}}})
	// After func b's closing brace, line 6 when a read the file; line 9 now
	// is func c's, with the same hash.
	call(a, "edit_file", map[string]any{"path": "p.go", "edits": []any{map[string]any{"insert_after": map[string]any{"anchor": ref(tlA[5]), "text": "func bb() {}"}}}})
	got, _ := os.ReadFile(filepath.Join(root, "p.go"))
	if want := "func z() {\n\tzero()\n}\nfunc a() {\n\tone()\n}\nfunc b() {\n\ttwo()\n}\nfunc bb() {}\nfunc c() {\n\tthree()\n}\n"; string(got) != want {
		t.Errorf("a's insert landed in the wrong place:\n%s\nwant:\n%s", got, want)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`agent=(mcp/claude-code/\S+)`).FindAllStringSubmatch(logs.String(), -1) {
		names[m[1]] = true
	}
	if len(names) != 2 {
		t.Errorf("the calls were made as %d agents (%v), want one per session:\n%s", len(names), names, logs.String())
	}
}

// An edit whose reply is lost after the server applied it comes back as
// UNAVAILABLE; the tool error says the change may have landed and to read
// the file first, not to retry, which would apply it twice.
func TestChangeCutOffSaysToReadBeforeMakingItAgain(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	lost := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if err == nil && (strings.HasSuffix(info.FullMethod, "/Edit") || strings.HasSuffix(info.FullMethod, "/Write")) {
			return nil, status.Error(codes.Unavailable, "connection reset by peer") // applied, reply lost
		}
		return resp, err
	}
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{Logger: slog.New(slog.DiscardHandler), ServerOptions: []grpc.ServerOption{grpc.ChainUnaryInterceptor(lost)}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	c, err := client.Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "m", Version: "1"}, nil).Connect(ctx, serve(t, ctx, c), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	text := func(tool string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	tl := tagged(t, text("read_file", map[string]any{"path": "a.txt"}))
	// In this order: the edit's refs come from the read, and the write
	// would make them stale.
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"edit_file", map[string]any{"path": "a.txt", "edits": []any{map[string]any{"insert_after": map[string]any{"anchor": ref(tl[0]), "text": "inserted"}}}}},
		{"write_file", map[string]any{"path": "a.txt", "content": "new\n"}},
	} {
		tool := call.tool
		msg := text(tool, call.args)
		for _, want := range []string{"may or may not have been applied", "read_file a.txt"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: the error lacks %q:\n%s", tool, want, msg)
			}
		}
		if strings.Contains(msg, "then retry") {
			t.Errorf("%s: the error says to retry:\n%s", tool, msg)
		}
	}
}

// Behind the router (deploy/nginx), a stopped workspace server is the
// router's UNAVAILABLE, whose message names the workspace and says what to
// do: the tool error passes it on without advice to check a hashlined at
// --server's address (the router's, which answered), and for a change
// still says to look before making it again.
func TestRouterUnavailableKeepsTheRoutersAdvice(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	const routerMsg = `hashline router: workspace "beta" is unavailable: its hashlined does not answer (stopped, restarting or overloaded). Retry in a few seconds; if it persists, ask the operator to start it.`
	down := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return nil, status.Error(codes.Unavailable, routerMsg)
	}
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{Logger: slog.New(slog.DiscardHandler), ServerOptions: []grpc.ServerOption{grpc.ChainUnaryInterceptor(down)}})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	c, err := client.Dial(lis.Addr().String(), client.WithWorkspace("beta"), client.WithRetry(client.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "m", Version: "1"}, nil).Connect(ctx, serve(t, ctx, c), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	for _, call := range []struct {
		tool   string
		args   map[string]any
		change bool
	}{
		{"read_file", map[string]any{"path": "a.txt"}, false},
		{"write_file", map[string]any{"path": "a.txt", "content": "new\n"}, true},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: call.tool, Arguments: call.args})
		if err != nil {
			t.Fatal(err)
		}
		msg := res.Content[0].(*sdk.TextContent).Text
		if !res.IsError || !strings.Contains(msg, "(UNAVAILABLE): "+routerMsg) {
			t.Errorf("%s: error %v, want the router's message:\n%s", call.tool, res.IsError, msg)
		}
		if strings.Contains(msg, "hashlined is running") {
			t.Errorf("%s: the error sends the model to a hashlined at the router's address:\n%s", call.tool, msg)
		}
		if got := strings.Contains(msg, "may or may not have been applied") && strings.Contains(msg, "read_file a.txt"); got != call.change {
			t.Errorf("%s: says to look before making the change again: %v, want %v:\n%s", call.tool, got, call.change, msg)
		}
	}
}

// The embedded engine takes a Grep answer as large as hashline mcp
// --server takes from hashlined: a file with many matches is one message
// of more than grpc's default 4 MiB.
func TestEmbeddedGrepTakesALargeFilesMatches(t *testing.T) {
	s := newSessionWith(t, engineConfig{})
	s.write("big.txt", strings.Repeat("abc "+strings.Repeat("x", 1000)+"\n", 5000))
	got := s.ok("grep", map[string]any{"pattern": "abc", "limit": 5000})
	if n := strings.Count(got, ":>>"); n != 5000 {
		t.Errorf("%d matching lines shown, want 5000", n)
	}
}
