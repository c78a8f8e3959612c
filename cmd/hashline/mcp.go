package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	goio "io"
	"log/slog"
	"strconv"
	"strings"

	"google.golang.org/grpc"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/buildinfo"
	"github.com/hashline/hashline/internal/daemon"
	"github.com/hashline/hashline/internal/mcp"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/wire"
)

func init() {
	register(&command{
		name:    "mcp",
		summary: "serve the hashline tools (read_file, edit_file, ...) to an MCP client over stdio",
		run:     runMCP,
	})
}

const mcpUsage = `usage: hashline mcp [--root DIR | --server ADDR [--token TOKEN] [--tls...]] [--workspace NAME] [--agent NAME]

Serves the hashline tools (read_file, edit_file, write_file, grep,
delete_file, move_file) to an MCP client (Claude Desktop, Cursor, ...) over
stdin/stdout. Logs go to stderr.

By default the session uses the engine of the workspace --root (default:
the current directory) on this machine: the hashlined serving it, another
session's, or one it starts, which stops once no session has used it for a
while. Nothing else to start, and every session, CLI and server on one root
is one editor: agents see each other's edits as rebases and stale
references, never as lost updates. --fsync, --state-dir and --state-bytes
apply to an engine the session starts. --embedded runs the engine in this
process instead, refused while another engine serves the root. The session
is one agent: as with hashlined, an edit that names existing lines needs a
read_file (or grep, or an earlier edit or write) of that file first.

--server ADDR: forward every call to a running hashlined (host:port or
http://host:port for plaintext, https://host:port for TLS, or
unix:///path.sock), so several desktop agents share one authoritative editor
and its rebasing. Paths are then relative to that server's root. A server
started with --tokens needs --token (or HASHLINE_TOKEN); one started with
--tls-cert needs https:// or --tls, and --tls-ca for a private CA; one with
--tls-client-ca also --tls-cert and --tls-key (env HASHLINE_TLS_CA,
HASHLINE_TLS_CERT, HASHLINE_TLS_KEY, HASHLINE_TLS_SERVER_NAME).

--workspace NAME: every call names the workspace (x-hashline-workspace), so
that a router in front of many hashlined (deploy/nginx) finds its server,
and a server serving another workspace refuses the call (WRONG_WORKSPACE)
rather than read or change the wrong tree. --workspace-domain DOMAIN, with
--server, also sends the host NAME.DOMAIN, for a router that routes by host
but is reached at --server's address (env HASHLINE_WORKSPACE,
HASHLINE_WORKSPACE_DOMAIN).

flags:
`

func runMCP(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("hashline mcp", flag.ContinueOnError)
	fs.SetOutput(io.stderr)
	root := fs.String("root", "", "workspace directory whose engine the session uses (default: the current directory)")
	addr := fs.String("server", "", "address of a running hashlined to forward to, instead of the engine of --root: host:port, http://host:port, https://host:port (TLS) or unix:///path.sock")
	agent := fs.String("agent", "", `agent name sent with every call; give each session its own (default: "mcp/", the MCP client's name and a random tag, one per process)`)
	token := fs.String("token", io.getenv("HASHLINE_TOKEN"), "bearer token for a hashlined started with --tokens, at --server or serving --root (env HASHLINE_TOKEN)")
	workspace := fs.String("workspace", io.getenv("HASHLINE_WORKSPACE"), "the workspace every call is meant for, sent as x-hashline-workspace: a router finds its server by it, and a server serving another workspace refuses the call (env HASHLINE_WORKSPACE)")
	domain := fs.String("workspace-domain", io.getenv("HASHLINE_WORKSPACE_DOMAIN"), "with --server and --workspace: send the host NAME.DOMAIN, for a router that routes by host but is reached at --server's address (env HASHLINE_WORKSPACE_DOMAIN)")
	var tlsf tlsFlags
	tlsf.register(fs, io)
	fsync := fs.Bool("fsync", true, "an engine this session starts: fsync files and directories on write; false is UNSAFE (a crash can lose acknowledged edits, or leave a file just written holding zeros) and meant for benchmarks")
	stateDir := fs.String("state-dir", "", "an engine this session starts: directory of its own state, outside the workspace (refused inside it): snapshots that memory let go, for rebases, kept across sessions (default: hashline/<hash of the root> under $XDG_STATE_HOME, else ~/.local/state, %LocalAppData% on Windows, ~/Library/Application Support on macOS)")
	stateBytes := fs.Int64("state-bytes", versions.DefaultDiskBytes, "an engine this session starts: bytes of snapshots kept in --state-dir, oldest out (0 = none)")
	embedded := fs.Bool("embedded", false, "run the engine in this process for the session's life instead of sharing the root's engine process; refused while another engine serves the root")
	// Printed by us (see parse), on stdout for --help only.
	fs.Usage = func() {}
	usage := func(w goio.Writer) {
		fmt.Fprint(w, mcpUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.stderr)
	}
	fs.SetOutput(goio.Discard) // flagError prints the error
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(io.stdout)
			return exitOK
		}
		return flagError(io, "mcp", fs, err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(io.stderr, "hashline mcp: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *addr == "" {
		if set := tlsf.set(fs); len(set) > 0 {
			fmt.Fprintf(io.stderr, "hashline mcp: %s needs --server: the workspace's engine on this machine is reached over a private socket, with no connection to secure\n", strings.Join(set, " and "))
			return exitUsage
		}
	}
	if *addr != "" {
		var local []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "root" || f.Name == "fsync" || f.Name == "state-dir" || f.Name == "state-bytes" || f.Name == "embedded" {
				local = append(local, "--"+f.Name)
			}
		})
		if len(local) > 0 {
			fmt.Fprintf(io.stderr, "hashline mcp: %s and --server exclude each other: the server has its own root and settings\n", strings.Join(local, " and "))
			return exitUsage
		}
	}
	// The workspace options apply to both ways of reaching an engine: the
	// hashlined serving --root may have been started with --workspace too.
	var wsOpts []client.Option
	if *workspace != "" {
		if err := wire.CheckWorkspaceName(*workspace); err != nil {
			fmt.Fprintf(io.stderr, "hashline mcp: --workspace: %v\n", err)
			return exitUsage
		}
		wsOpts = append(wsOpts, client.WithWorkspace(*workspace))
	}
	if *addr == "" {
		// HASHLINE_WORKSPACE_DOMAIN, set for the router, must not stop
		// a session on this machine's engine; the flag given is a mistake.
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "workspace-domain" })
		if given {
			fmt.Fprintln(io.stderr, "hashline mcp: --workspace-domain needs --server: the workspace's engine on this machine is reached by no router")
			return exitUsage
		}
	} else if *domain != "" {
		if *workspace == "" {
			fmt.Fprintln(io.stderr, "hashline mcp: --workspace-domain names the domain of a workspace's host: give --workspace NAME too (env HASHLINE_WORKSPACE)")
			return exitUsage
		}
		wsOpts = append(wsOpts, client.WithWorkspaceDomain(*domain))
	}
	logger := slog.New(slog.NewTextHandler(io.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var c *client.Client
	if *addr != "" {
		var err error
		// Accept responses as large as hashlined may send (its default
		// --max-recv-bytes), not grpc's 4 MiB: a server configured with
		// larger read budgets must not break the bridge.
		opts := []client.Option{client.WithDialOptions(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(daemon.MaxRecvBytes)))}
		if *token != "" {
			opts = append(opts, client.WithToken(*token))
		}
		tlsOpts, err := tlsf.options(fs, *addr)
		if err != nil {
			fmt.Fprintf(io.stderr, "hashline mcp: %v\n", err)
			return exitError
		}
		opts = append(append(opts, wsOpts...), tlsOpts...)
		if c, err = client.Dial(*addr, opts...); err != nil {
			fmt.Fprintf(io.stderr, "hashline mcp: %v\n", err)
			return exitError
		}
		defer c.Close()
	} else {
		if *stateBytes < 0 {
			fmt.Fprintf(io.stderr, "hashline mcp: --state-bytes %d: want bytes >= 0 (0 = no snapshots on disk)\n", *stateBytes)
			return exitUsage
		}
		if !*fsync {
			logger.Warn("fsync is off: a crash or power loss can lose or corrupt acknowledged writes")
		}
		dir := *root
		if dir == "" {
			dir = "."
		}
		// The engine's settings, for an engine this session starts; one
		// already serving the root keeps its own.
		args := []string{"--fsync=" + strconv.FormatBool(*fsync), "--state-bytes", strconv.FormatInt(*stateBytes, 10)}
		if *stateDir != "" {
			args = append(args, "--state-dir", *stateDir)
		}
		var start daemon.Start
		if *embedded {
			// The engine runs in this process and serves the root's socket
			// while the session lasts, so other sessions still share it;
			// a root another engine holds is refused.
			engineCtx, stopEngine := context.WithCancel(context.Background())
			wait, err := daemon.Embed(engineCtx, "hashline mcp --embedded", append([]string{"--root", dir, "--listen", "", "--log-level", "error"}, args...), io.stderr)
			if err != nil {
				stopEngine()
				fmt.Fprintf(io.stderr, "hashline mcp: %v\n", err)
				return exitError
			}
			defer func() { stopEngine(); wait() }()
		} else {
			var err error
			if start, err = engineStart(args...); err != nil {
				fmt.Fprintf(io.stderr, "hashline mcp: %v\n", err)
				return exitError
			}
		}
		// The session is one client of the root's one engine, which
		// remembers what each agent was shown: an edit of a file the
		// session never read is NOT_READ, as with hashlined.
		opts := wsOpts
		if *token != "" {
			opts = append(opts, client.WithToken(*token))
		}
		var err error
		if c, err = daemon.Attach(ctx, dir, start, opts...); err != nil {
			if errors.As(err, new(*daemon.RootError)) {
				err = fmt.Errorf("--root: %w", err)
			}
			fmt.Fprintf(io.stderr, "hashline mcp: %v\n", err)
			return exitError
		}
		defer c.Close()
	}
	// The session ends when the client closes stdin (how MCP clients stop a
	// stdio server) or on SIGINT/SIGTERM; neither is a failure.
	err := mcp.Serve(ctx, c, goio.NopCloser(io.stdin), io.stdout, mcp.WithAgent(*agent), mcp.WithVersion(buildinfo.Version()), mcp.WithLogger(logger))
	if err != nil && ctx.Err() == nil && !errors.Is(err, goio.EOF) {
		fmt.Fprintf(io.stderr, "hashline mcp: %v\n", err)
		return exitError
	}
	return exitOK
}
