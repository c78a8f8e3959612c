package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	goio "io"
	"log/slog"
	"strings"

	"google.golang.org/grpc"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/buildinfo"
	"github.com/hashline/hashline/internal/local"
	"github.com/hashline/hashline/internal/mcp"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

func init() {
	register(&command{
		name:    "mcp",
		summary: "serve the hashline tools (read_file, edit_file, ...) to an MCP client over stdio",
		run:     runMCP,
	})
}

const mcpUsage = `usage: hashline mcp [--root DIR | --server ADDR [--token TOKEN] [--tls...]] [--agent NAME]

Serves the hashline tools (read_file, edit_file, write_file, grep,
delete_file, move_file) to an MCP client (Claude Desktop, Cursor, ...) over
stdin/stdout. Logs go to stderr.

Embedded (the default): the hashline engine runs in this process on --root
(default: the current directory). Nothing else to start. The session is one
agent: as with hashlined, an edit that names existing lines needs a
read_file (or grep, or an earlier edit or write) of that file first.

--server ADDR: forward every call to a running hashlined (host:port or
http://host:port for plaintext, https://host:port for TLS, or
unix:///path.sock), so several desktop agents share one authoritative editor
and its rebasing. Paths are then relative to that server's root. A server
started with --tokens needs --token (or HASHLINE_TOKEN); one started with
--tls-cert needs https:// or --tls, and --tls-ca for a private CA; one with
--tls-client-ca also --tls-cert and --tls-key (env HASHLINE_TLS_CA,
HASHLINE_TLS_CERT, HASHLINE_TLS_KEY, HASHLINE_TLS_SERVER_NAME).

flags:
`

func runMCP(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("hashline mcp", flag.ContinueOnError)
	fs.SetOutput(io.stderr)
	root := fs.String("root", "", "workspace directory of the embedded engine (default: the current directory)")
	addr := fs.String("server", "", "address of a running hashlined to forward to, instead of the embedded engine: host:port, http://host:port, https://host:port (TLS) or unix:///path.sock")
	agent := fs.String("agent", "", `agent name sent with every call; give each session its own (default: "mcp/", the MCP client's name and a random tag, one per process)`)
	token := fs.String("token", io.getenv("HASHLINE_TOKEN"), "with --server: bearer token for a hashlined started with --tokens (env HASHLINE_TOKEN)")
	var tlsf tlsFlags
	tlsf.register(fs, io)
	fsync := fs.Bool("fsync", true, "embedded engine: fsync files and directories on write; false is UNSAFE (a crash can lose acknowledged edits, or leave a file just written holding zeros) and meant for benchmarks")
	stateDir := fs.String("state-dir", "", "embedded engine: directory of its own state, outside the workspace (refused inside it): snapshots that memory let go, for rebases, kept across sessions (default: hashline/<hash of the root> under $XDG_STATE_HOME, else ~/.local/state, %LocalAppData% on Windows, ~/Library/Application Support on macOS)")
	stateBytes := fs.Int64("state-bytes", versions.DefaultDiskBytes, "embedded engine: bytes of snapshots kept in --state-dir, oldest out (0 = none)")
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
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "token" })
		if set {
			fmt.Fprintln(io.stderr, "hashline mcp: --token needs --server: the embedded engine has no tokens")
			return exitUsage
		}
		if set := tlsf.set(fs); len(set) > 0 {
			fmt.Fprintf(io.stderr, "hashline mcp: %s needs --server: the embedded engine has no connection to secure\n", strings.Join(set, " and "))
			return exitUsage
		}
	}
	if *addr != "" {
		var local []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "root" || f.Name == "fsync" || f.Name == "state-dir" || f.Name == "state-bytes" {
				local = append(local, "--"+f.Name)
			}
		})
		if len(local) > 0 {
			fmt.Fprintf(io.stderr, "hashline mcp: %s and --server exclude each other: the server has its own root and settings\n", strings.Join(local, " and "))
			return exitUsage
		}
	}
	logger := slog.New(slog.NewTextHandler(io.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var c *client.Client
	if *addr != "" {
		var err error
		// Accept responses as large as hashlined may send (its default
		// --max-recv-bytes), not grpc's 4 MiB: a server configured with
		// larger read budgets must not break the bridge.
		opts := []client.Option{client.WithDialOptions(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(local.MaxRecvBytes)))}
		if *token != "" {
			opts = append(opts, client.WithToken(*token))
		}
		tlsOpts, err := tlsf.options(fs, *addr)
		if err != nil {
			fmt.Fprintf(io.stderr, "hashline mcp: %v\n", err)
			return exitError
		}
		if c, err = client.Dial(*addr, append(opts, tlsOpts...)...); err != nil {
			fmt.Fprintf(io.stderr, "hashline mcp: %v\n", err)
			return exitError
		}
		defer c.Close()
	} else {
		if !*fsync {
			logger.Warn("fsync is off: a crash or power loss can lose or corrupt acknowledged writes")
		}
		// The engine's own errors (a recovered panic, an internal error)
		// go to stderr; the outcome of each call is the client's to see.
		engineLogger := slog.New(slog.NewTextHandler(io.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		if *stateBytes < 0 {
			fmt.Fprintf(io.stderr, "hashline mcp: --state-bytes %d: want bytes >= 0 (0 = no snapshots on disk)\n", *stateBytes)
			return exitUsage
		}
		// The session is one agent talking to one engine for its whole
		// life, so the engine remembers what it was shown, as hashlined
		// does: an edit of a file the session never read is NOT_READ.
		e, err := local.Start(local.Config{Root: *root, Workspace: []workspace.Option{workspace.WithFsync(*fsync)},
			Server:   []server.Option{server.WithLogger(engineLogger), server.WithRequireRead(true)},
			StateDir: *stateDir, StateBytes: *stateBytes, Logger: logger})
		if err != nil {
			flag := "--root"
			if errors.As(err, new(*local.StateError)) {
				flag = "--state-dir"
			}
			fmt.Fprintf(io.stderr, "hashline mcp: %s: %v\n", flag, err)
			return exitError
		}
		defer e.Close()
		c = e.Client
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
