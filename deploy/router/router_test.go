// Package router tests the repository's nginx router configuration
// (deploy/nginx) for real: three hashlined, each serving its own named
// workspace on loopback, behind nginx, reached by the Go client, the CLI,
// the Python client and the TypeScript client by host and by header; and
// behind nginx configured as a stock proxy routing by host, as an Ingress
// is, whose HTTP error pages the clients report naming the workspace.
package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/deploy/internal/stack"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/binarytest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	binarytest.Cleanup()
	os.Exit(code)
}

var names = []string{"alpha", "beta", "gamma"}

// start starts the three backends and the router, each workspace holding
// which.txt with its own name; CI must have nginx (.ci/run installs it),
// elsewhere its absence skips the test.
func start(t *testing.T, routes map[string]string) *stack.Stack {
	t.Helper()
	if _, err := stack.Nginx(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must run the router tests: %v", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	s, err := stack.Start(dir, names, routes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(s.Backends[n].Root, "which.txt"), []byte(n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// dial returns a Go client of the router with the workspace's token and
// opts, closed at the end of the test.
func dial(t *testing.T, s *stack.Stack, token string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Dial(s.Router.Addr, append([]client.Option{client.WithToken(token), client.WithAgentID("agent"), client.WithTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// byHost routes by host only: the :authority <name>.hashline.test and no
// x-hashline-workspace header.
func byHost(name string) client.Option {
	return client.WithDialOptions(grpc.WithAuthority(name + "." + stack.Domain))
}

func readWhich(t *testing.T, c *client.Client) string {
	t.Helper()
	r, err := c.Read(t.Context(), &hashlinev1.ReadRequest{Path: "which.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GetLines()) != 1 {
		t.Fatalf("which.txt has %d lines", len(r.GetLines()))
	}
	return r.GetLines()[0].GetContent()
}

func TestEachClientReachesItsWorkspaceByHostAndByHeader(t *testing.T) {
	s := start(t, nil)
	for _, n := range names {
		tok := s.Backends[n].Token
		for _, way := range []struct {
			name string
			opts []client.Option
		}{
			{"header", []client.Option{client.WithWorkspace(n)}},
			{"host", []client.Option{byHost(n)}},
			{"host and header", []client.Option{client.WithWorkspace(n), client.WithWorkspaceDomain(stack.Domain)}},
		} {
			t.Run(n+" by "+way.name, func(t *testing.T) {
				c := dial(t, s, tok, way.opts...)
				if got := readWhich(t, c); got != n {
					t.Fatalf("read which.txt of workspace %s through the router: %q", n, got)
				}
				st, err := c.Status(t.Context())
				if err != nil || st.GetWorkspace() != n {
					t.Fatalf("Status = %v, %v; want workspace %s", st, err, n)
				}
				// A write lands in that workspace's tree and no other.
				file := n + "-by-" + strings.ReplaceAll(way.name, " ", "-") + ".txt"
				if _, err := c.Write(t.Context(), &hashlinev1.WriteRequest{Path: file, Content: n + "\n"}); err != nil {
					t.Fatal(err)
				}
				for _, m := range names {
					b, err := os.ReadFile(filepath.Join(s.Backends[m].Root, file))
					if m == n && (err != nil || string(b) != n+"\n") {
						t.Errorf("%s in workspace %s: %q, %v", file, m, b, err)
					}
					if m != n && err == nil {
						t.Errorf("the write meant for %s landed in %s too", n, m)
					}
				}
			})
		}
	}

	// The CLI, by header and by host and header.
	hashline, err := binarytest.Build(binarytest.Hashline)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		for _, args := range [][]string{
			{"--workspace", n},
			{"--workspace", n, "--workspace-domain", stack.Domain},
		} {
			cmd := exec.Command(hashline, append([]string{"read", "--server", s.Router.Addr, "--token", s.Backends[n].Token}, append(args, "which.txt")...)...)
			cmd.Env = append(os.Environ(), "HASHLINE_AGENT=cli")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "|"+n+"\n") {
				t.Errorf("hashline read %v: %v\n%s", args, err, out)
			}
		}
		// The environment names the workspace as the flag does.
		cmd := exec.Command(hashline, "status", "--server", s.Router.Addr)
		cmd.Env = append(os.Environ(), "HASHLINE_WORKSPACE="+n, "HASHLINE_TOKEN="+s.Backends[n].Token)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "workspace:    "+n+"\n") {
			t.Errorf("HASHLINE_WORKSPACE=%s hashline status: %v\n%s", n, err, out)
		}
	}
}

// python is a python3 that imports grpc and google.protobuf (Debian's
// /usr/bin/python3 with python3-grpcio, which .ci/run installs), or "".
func python() string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import grpc, google.protobuf").Run() == nil {
			return p
		}
	}
	return ""
}

// The Python client reaches each workspace by header and by host through
// the router too.
func TestPythonClientReachesItsWorkspace(t *testing.T) {
	py := python()
	if py == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must run the Python client through the router: no python3 imports grpc (.ci/run installs python3-grpcio)")
		}
		t.Skip("no python3 imports grpc and google.protobuf")
	}
	s := start(t, nil)
	const script = `
import sys
from hashline_client import Client
addr, name, token = sys.argv[1:4]
for kw in ({"workspace": name}, {"workspace": name, "workspace_domain": "hashline.test"}):
    with Client(addr, agent="py", token=token, **kw) as c:
        print(c.read("which.txt").lines[0].content, c.status().workspace)
`
	src, err := filepath.Abs(filepath.Join("..", "..", "client", "python", "src"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		cmd := exec.Command(py, "-c", script, s.Router.Addr, n, s.Backends[n].Token)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+src, "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		if want := strings.Repeat(n+" "+n+"\n", 2); err != nil || string(out) != want {
			t.Errorf("the Python client for %s: %v\n%s", n, err, out)
		}
	}
}

// tsClient is the built TypeScript client's ES module entry
// (client/ts/dist/index.js), which make deploy-check builds and names in
// HASHLINE_TS_CLIENT, or "".
func tsClient(t *testing.T) string {
	t.Helper()
	mod := os.Getenv("HASHLINE_TS_CLIENT")
	if mod == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must run the TypeScript client through the router: HASHLINE_TS_CLIENT is not set (make deploy-check builds client/ts and sets it)")
		}
		t.Skip("HASHLINE_TS_CLIENT is not set: run make deploy-check, which builds client/ts")
	}
	if _, err := os.Stat(mod); err != nil {
		t.Fatalf("HASHLINE_TS_CLIENT: %v", err)
	}
	return mod
}

// tsCase is one client the node script makes: ClientOptions (without
// baseUrl), or with host a client that sends the host
// <host>.hashline.test alone, with no workspace option, while dialling the
// router's address.
type tsCase struct {
	Label string         `json:"label"`
	Opts  map[string]any `json:"opts"`
	Host  string         `json:"host,omitempty"`
}

// tsResult is what a tsCase's read of which.txt and Status gave: the
// content and workspace, or the error's gRPC code and message.
type tsResult struct {
	Label     string     `json:"label"`
	Content   string     `json:"content"`
	Workspace string     `json:"workspace"`
	Code      codes.Code `json:"code"`
	Message   string     `json:"message"`
}

// tsScript runs each case with the TypeScript client against the router
// and prints a tsResult per line.
const tsScript = `
import { connect } from "node:net";
import { pathToFileURL } from "node:url";
const [mod, addr, cases] = process.argv.slice(1);
const { createClient, errorCode, errorMessage } = await import(pathToFileURL(mod).href);
const [host, port] = [addr.slice(0, addr.lastIndexOf(":")), Number(addr.slice(addr.lastIndexOf(":") + 1))];
for (const c of JSON.parse(cases)) {
  const opts = { baseUrl: "http://" + addr, agentId: "ts", timeoutMs: 10000, ...c.opts };
  if (c.host) {
    opts.baseUrl = "http://" + c.host + ".hashline.test:" + port;
    opts.nodeOptions = { createConnection: () => connect(port, host) };
  }
  const client = createClient(opts);
  const out = { label: c.label };
  try {
    out.content = (await client.read("which.txt")).lines[0].content;
    out.workspace = (await client.status()).workspace;
  } catch (err) {
    out.code = errorCode(err) ?? -1;
    out.message = errorMessage(err);
  } finally {
    client.close();
  }
  console.log(JSON.stringify(out));
}
`

// runTS runs cases through the proxy at addr (the router's, or the stock
// proxy's) with the TypeScript client at mod.
func runTS(t *testing.T, mod, addr string, cases []tsCase) map[string]tsResult {
	t.Helper()
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", "--input-type=module", "-e", tsScript, mod, addr, string(in)).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	res := map[string]tsResult{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r tsResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("node printed %q: %v\n%s", line, err, out)
		}
		res[r.Label] = r
	}
	if len(res) != len(cases) {
		t.Fatalf("node answered %d of %d cases:\n%s", len(res), len(cases), out)
	}
	return res
}

// The TypeScript client reaches each workspace by header, by host and by
// both through the router, gets the router's clear status for a workspace
// it does not serve, and UNAVAILABLE naming the workspace whose backend is
// stopped while the others go on.
func TestTypeScriptClientReachesItsWorkspace(t *testing.T) {
	mod := tsClient(t)
	s := start(t, nil)
	var cases []tsCase
	for _, n := range names {
		tok := s.Backends[n].Token
		cases = append(cases,
			tsCase{Label: n + " by header", Opts: map[string]any{"token": tok, "workspace": n}},
			tsCase{Label: n + " by host", Opts: map[string]any{"token": tok}, Host: n},
			tsCase{Label: n + " by host and header", Opts: map[string]any{"token": tok, "workspace": n, "workspaceDomain": stack.Domain}},
		)
	}
	alpha := s.Backends["alpha"].Token
	cases = append(cases,
		tsCase{Label: "zeta by header", Opts: map[string]any{"token": alpha, "workspace": "zeta", "retry": false}},
		tsCase{Label: "zeta by host", Opts: map[string]any{"token": alpha, "retry": false}, Host: "zeta"},
		tsCase{Label: "no workspace", Opts: map[string]any{"token": alpha, "retry": false}},
	)
	res := runTS(t, mod, s.Router.Addr, cases)
	for _, n := range names {
		for _, way := range []string{"header", "host", "host and header"} {
			r := res[n+" by "+way]
			if r.Content != n || r.Workspace != n || r.Message != "" {
				t.Errorf("the TypeScript client for %s by %s: %+v", n, way, r)
			}
		}
	}
	wantTS := func(r tsResult, code codes.Code, parts ...string) {
		t.Helper()
		if r.Code != code || r.Content != "" {
			t.Errorf("%s: %+v, want %v", r.Label, r, code)
		}
		for _, p := range parts {
			if !strings.Contains(r.Message, p) {
				t.Errorf("%s: message %q does not say %q", r.Label, r.Message, p)
			}
		}
	}
	wantTS(res["zeta by header"], codes.NotFound, `no workspace "zeta" is served here`, "nothing was done")
	wantTS(res["zeta by host"], codes.NotFound, `no workspace "zeta" is served here`)
	wantTS(res["no workspace"], codes.InvalidArgument, "names no workspace", "x-hashline-workspace")

	if err := s.Backends["beta"].Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	cases = nil
	for _, n := range names {
		cases = append(cases, tsCase{Label: n, Opts: map[string]any{"token": s.Backends[n].Token, "workspace": n, "retry": false}})
	}
	res = runTS(t, mod, s.Router.Addr, cases)
	wantTS(res["beta"], codes.Unavailable, `workspace "beta" is unavailable`, "Retry in a few seconds")
	for _, n := range []string{"alpha", "gamma"} {
		if r := res[n]; r.Content != n || r.Workspace != n {
			t.Errorf("workspace %s while beta is stopped: %+v", n, r)
		}
	}
}

// Behind a stock proxy routing by host, as an Ingress does, an unknown
// workspace's host gets the default backend's HTTP 404 and a stopped
// backend nginx's own 502 page, not gRPC statuses; every client given the
// workspace says what they mean, naming it (NOT_FOUND, UNAVAILABLE), as
// the router's own statuses do. A client given no workspace keeps the
// transport's words.
func TestAStockProxysErrorPagesNameTheWorkspace(t *testing.T) {
	s := start(t, nil)
	stock := s.Stock.Addr
	if err := s.Backends["beta"].Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	dialStock := func(token string, opts ...client.Option) *client.Client {
		t.Helper()
		c, err := client.Dial(stock, append([]client.Option{client.WithToken(token), client.WithRetry(client.RetryPolicy{}), client.WithTimeout(10 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	byName := func(name string) []client.Option {
		return []client.Option{client.WithWorkspace(name), client.WithWorkspaceDomain(stack.Domain)}
	}
	alpha := s.Backends["alpha"].Token
	if got := readWhich(t, dialStock(alpha, byName("alpha")...)); got != "alpha" {
		t.Fatalf("alpha through the stock proxy: %q", got)
	}
	_, err := dialStock(alpha, byName("zeta")...).Read(ctx, &hashlinev1.ReadRequest{Path: "which.txt"})
	wantStatus(t, "an unknown workspace", err, codes.NotFound, `no workspace "zeta" behind this router`, "HTTP 404 Not Found", "default backend - 404")
	_, err = dialStock(s.Backends["beta"].Token, byName("beta")...).Read(ctx, &hashlinev1.ReadRequest{Path: "which.txt"})
	wantStatus(t, "a stopped workspace", err, codes.Unavailable, `workspace "beta"'s hashlined is down, restarting or not answering`, "HTTP 502 Bad Gateway")
	_, err = dialStock(alpha, byHost("zeta")).Read(ctx, &hashlinev1.ReadRequest{Path: "which.txt"})
	var e *client.Error
	if !errors.As(err, &e) || e.Code != codes.Unimplemented || e.HTTPStatus != 404 || strings.Contains(e.Message, "zeta") {
		t.Errorf("a client naming no workspace: %v, want the transport's UNIMPLEMENTED with HTTPStatus 404", err)
	}

	hashline, err := binarytest.Build(binarytest.Hashline)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, want string }{
		{"zeta", `NOT_FOUND: no workspace "zeta" behind this router`},
		{"beta", `UNAVAILABLE: workspace "beta"'s hashlined is down`},
	} {
		out, err := exec.Command(hashline, "read", "--server", stock, "--workspace", tt.name, "--workspace-domain", stack.Domain, "--token", alpha, "which.txt").CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) || strings.Contains(string(out), "hashlined serve") {
			t.Errorf("hashline read of workspace %s through the stock proxy: %v\n%s", tt.name, err, out)
		}
	}

	t.Run("Python", func(t *testing.T) {
		py := python()
		if py == "" {
			if os.Getenv("CI") != "" {
				t.Fatal("CI must run the Python client through the stock proxy: no python3 imports grpc")
			}
			t.Skip("no python3 imports grpc and google.protobuf")
		}
		const script = `
import sys
from hashline_client import NO_RETRY, Client, HashlineError
addr, token = sys.argv[1:3]
for name in sys.argv[3:]:
    with Client(addr, token=token, workspace=name, workspace_domain="hashline.test", retry=NO_RETRY) as c:
        try:
            print(name, c.read("which.txt").lines[0].content)
        except HashlineError as e:
            print(name, e.code.name, e.http_status, e.message.splitlines()[0])
`
		src, err := filepath.Abs(filepath.Join("..", "..", "client", "python", "src"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(py, "-c", script, stock, alpha, "alpha", "zeta", "beta")
		cmd.Env = append(os.Environ(), "PYTHONPATH="+src, "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.Output()
		got := strings.Split(strings.TrimSpace(string(out)), "\n")
		want := []string{"alpha alpha", `zeta NOT_FOUND 404 no workspace "zeta" behind this router`, `beta UNAVAILABLE 502 workspace "beta"'s hashlined is down`}
		if err != nil || len(got) != len(want) {
			t.Fatalf("the Python client through the stock proxy: %v\n%s", err, out)
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) {
				t.Errorf("the Python client through the stock proxy: %q, want it to start %q", got[i], want[i])
			}
		}
	})

	t.Run("TypeScript", func(t *testing.T) {
		mod := tsClient(t)
		opts := func(name string) map[string]any {
			return map[string]any{"token": alpha, "workspace": name, "workspaceDomain": stack.Domain, "retry": false}
		}
		res := runTS(t, mod, stock, []tsCase{{Label: "alpha", Opts: opts("alpha")}, {Label: "zeta", Opts: opts("zeta")}, {Label: "beta", Opts: opts("beta")}})
		if r := res["alpha"]; r.Content != "alpha" || r.Workspace != "alpha" {
			t.Errorf("alpha through the stock proxy: %+v", r)
		}
		for _, tt := range []struct {
			name string
			code codes.Code
			want string
		}{
			{"zeta", codes.NotFound, `no workspace "zeta" behind this router (the proxy answered HTTP 404 Not Found`},
			{"beta", codes.Unavailable, `workspace "beta"'s hashlined is down, restarting or not answering (the proxy answered HTTP 502 Bad Gateway`},
		} {
			if r := res[tt.name]; r.Code != tt.code || !strings.HasPrefix(r.Message, tt.want) {
				t.Errorf("%s through the stock proxy: %+v, want %v starting %q", tt.name, r, tt.code, tt.want)
			}
		}
	})
}

// wantStatus checks the code of err and that its message holds each of
// parts.
func wantStatus(t *testing.T, what string, err error, code codes.Code, parts ...string) {
	t.Helper()
	st := status.Convert(err)
	if err == nil || st.Code() != code {
		t.Errorf("%s: %v, want %v", what, err, code)
		return
	}
	for _, p := range parts {
		if !strings.Contains(st.Message(), p) {
			t.Errorf("%s: message %q does not say %q", what, st.Message(), p)
		}
	}
}

func TestWhatTheRouterCannotRouteGetsAClearStatus(t *testing.T) {
	// delta is routed, wrongly, to alpha's hashlined.
	s := start(t, map[string]string{"delta": "alpha"})
	alpha := s.Backends["alpha"]
	noRetry := client.WithRetry(client.RetryPolicy{})
	ctx := t.Context()

	_, err := dial(t, s, alpha.Token, client.WithWorkspace("zeta"), noRetry).Read(ctx, &hashlinev1.ReadRequest{Path: "which.txt"})
	wantStatus(t, "an unknown workspace by header", err, codes.NotFound, `no workspace "zeta" is served here`, "nothing was done")
	_, err = dial(t, s, alpha.Token, byHost("zeta"), noRetry).Read(ctx, &hashlinev1.ReadRequest{Path: "which.txt"})
	wantStatus(t, "an unknown workspace by host", err, codes.NotFound, `no workspace "zeta"`)

	_, err = dial(t, s, alpha.Token, noRetry).Read(ctx, &hashlinev1.ReadRequest{Path: "which.txt"})
	wantStatus(t, "no workspace", err, codes.InvalidArgument, "names no workspace", "x-hashline-workspace")

	// The clients refuse to send these; a raw caller can.
	raw := dial(t, s, alpha.Token, noRetry).RPC()
	for _, bad := range []string{"../alpha", "alpha.hashline.test", "Alpha", strings.Repeat("a", 64), "alpha/../beta"} {
		md := metadata.Pairs("authorization", "Bearer "+alpha.Token, client.WorkspaceMetadataKey, bad)
		_, err := raw.Read(metadata.NewOutgoingContext(ctx, md), &hashlinev1.ReadRequest{Path: "which.txt"})
		wantStatus(t, fmt.Sprintf("header %q", bad), err, codes.InvalidArgument, "not a workspace name")
	}

	_, err = dial(t, s, alpha.Token, byHost("alpha"), client.WithWorkspace("beta"), noRetry).Read(ctx, &hashlinev1.ReadRequest{Path: "which.txt"})
	wantStatus(t, "host and header disagree", err, codes.InvalidArgument, `host names workspace "alpha"`, `header names "beta"`)

	// A wrong route is refused by the backend it reaches, which serves
	// another workspace, and nothing is written there.
	_, err = dial(t, s, alpha.Token, client.WithWorkspace("delta"), noRetry).Write(ctx, &hashlinev1.WriteRequest{Path: "which.txt", Content: "delta\n"})
	if !errors.Is(err, client.ErrWrongWorkspace) {
		t.Errorf("a call routed to the wrong hashlined: %v, want WRONG_WORKSPACE", err)
	}
	wantStatus(t, "a wrong route", err, codes.FailedPrecondition, `serves workspace "alpha", not "delta"`)
	if b, _ := os.ReadFile(filepath.Join(alpha.Root, "which.txt")); string(b) != "alpha\n" {
		t.Errorf("alpha's which.txt = %q after a refused write", b)
	}

	// A token is its workspace's alone: beta's server does not know
	// alpha's token, whatever the route.
	for _, opt := range []client.Option{client.WithWorkspace("beta"), byHost("beta")} {
		_, err = dial(t, s, alpha.Token, opt, noRetry).Read(ctx, &hashlinev1.ReadRequest{Path: "which.txt"})
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("alpha's token for workspace beta: %v, want UNAUTHENTICATED", err)
		}
	}
}

func TestAStoppedBackendIsUnavailableNamingItsWorkspace(t *testing.T) {
	s := start(t, nil)
	clients := map[string]*client.Client{}
	for _, n := range names {
		clients[n] = dial(t, s, s.Backends[n].Token, client.WithWorkspace(n))
		readWhich(t, clients[n]) // connections to every backend are open
	}
	if err := s.Backends["beta"].Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		_, err := clients[n].Read(t.Context(), &hashlinev1.ReadRequest{Path: "which.txt"})
		if n == "beta" {
			wantStatus(t, "beta stopped", err, codes.Unavailable, `workspace "beta" is unavailable`, "Retry in a few seconds")
			var e *client.Error
			if !errors.As(err, &e) || e.Code != codes.Unavailable {
				t.Errorf("the Go client's error: %#v", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("workspace %s while beta is stopped: %v", n, err)
		}
	}
	// The CLI says what the router said, without the advice to start a
	// hashlined here.
	hashline, err := binarytest.Build(binarytest.Hashline)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(hashline, "read", "--server", s.Router.Addr, "--workspace", "beta", "--token", s.Backends["beta"].Token, "which.txt").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `workspace "beta" is unavailable`) || strings.Contains(string(out), "hashlined serve") {
		t.Errorf("hashline read of the stopped workspace: %v\n%s", err, out)
	}
	// A client retrying across the restart gets through once beta is back.
	if err := s.Backends["beta"].Start(); err != nil {
		t.Fatal(err)
	}
	if got := readWhich(t, clients["beta"]); got != "beta" {
		t.Errorf("beta after its restart: %q", got)
	}
}

// A rolling restart of a backend (SIGTERM, the graceful drain, a new
// process on the same address) while agents edit through the router loses
// no acknowledged edit and applies none twice: each agent appends numbered
// lines to its own file, and every line whose Edit succeeded is on disk
// afterwards, once.
func TestRollingRestartLosesNoAcknowledgedEdit(t *testing.T) {
	s := start(t, nil)
	alpha := s.Backends["alpha"]
	const agents = 4
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	var (
		mu      sync.Mutex
		acked   = map[string][]int{}
		failed  = map[codes.Code]int{}
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		restart = make(chan struct{}, 1)
	)
	for a := range agents {
		file := fmt.Sprintf("agent-%d.txt", a)
		c := dial(t, s, alpha.Token, client.WithWorkspace("alpha"), client.WithAgentID(fmt.Sprintf("agent-%d", a)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: file, Edits: []*hashlinev1.FileEdit{client.Append(fmt.Sprintf("line %d\n", i))}})
				mu.Lock()
				if err == nil {
					acked[file] = append(acked[file], i)
				} else {
					failed[status.Code(err)]++
					if status.Code(err) != codes.Unavailable {
						t.Errorf("edit %d of %s: %v; during a restart only UNAVAILABLE (from the router, or a connection the drain closed) is expected", i, file, err)
					}
				}
				mu.Unlock()
				if err != nil && ctx.Err() != nil {
					return
				}
				if i == 20 && a == 0 {
					restart <- struct{}{}
				}
			}
		}()
	}
	for _, f := range []string{"agent-0.txt", "agent-1.txt", "agent-2.txt", "agent-3.txt"} {
		if err := os.WriteFile(filepath.Join(alpha.Root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const restarts = 3
	for r := range restarts {
		select {
		case <-restart:
		case <-time.After(30 * time.Second):
			t.Fatal("no edits went through")
		}
		if err := alpha.Stop(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		if err := alpha.Start(); err != nil {
			t.Fatal(err)
		}
		if r < restarts-1 {
			// Let edits run on the new process before the next restart.
			time.Sleep(300 * time.Millisecond)
			restart <- struct{}{}
		}
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err := alpha.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}

	total := 0
	for file, lines := range acked {
		b, err := os.ReadFile(filepath.Join(alpha.Root, file))
		if err != nil {
			t.Fatal(err)
		}
		on := map[string]int{}
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			on[l]++
		}
		for _, i := range lines {
			if on[fmt.Sprintf("line %d", i)] == 0 {
				t.Errorf("%s: the acknowledged edit %d is not on disk", file, i)
			}
		}
		// A drained server answers every call it took, so no retry of
		// an applied edit reaches the next process (which no longer
		// knows its request_id) to apply it again.
		for l, n := range on {
			if n > 1 {
				t.Errorf("%s: %q is on disk %d times", file, l, n)
			}
		}
		total += len(lines)
	}
	t.Logf("%d edits acknowledged over %d restarts; not acknowledged: %v", total, restarts, failed)
	if total < agents*20 {
		t.Errorf("only %d edits were acknowledged", total)
	}
}
