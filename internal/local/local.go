// Package local runs the hashline service in-process: the same engine and
// rules as hashlined, with no network. Unary calls go straight to the
// service through the server's interceptors (server.InProcess); streaming
// calls go over an in-memory gRPC connection. The CLI's --local mode and the
// embedded MCP bridge use it, so that they behave exactly like a client of a
// real server.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// Config says what to serve.
type Config struct {
	// Root is the workspace directory; empty means the current directory.
	Root string
	// Workspace and Server options, as hashlined would pass them. One
	// difference: read-before-edit is off unless Server turns it on with
	// server.WithRequireRead(true), because an engine of the CLI's
	// --local lives for one command, and the Read a model made came from
	// an earlier one (which also leaves such an engine nothing to rebase
	// from: each command's edit is checked against the file by line and
	// hash). hashline mcp, one session of one agent, turns it on.
	Workspace []workspace.Option
	Server    []server.Option
	// Client options, e.g. client.WithAgentID.
	Client []client.Option
	// StateBytes, when above 0, gives the engine a snapshot store of that
	// budget in the state directory StateDir (the root's default when
	// empty), as hashlined's --state-dir and --state-bytes do: for a
	// long-running engine (hashline mcp). One-shot commands need none.
	StateDir   string
	StateBytes int64
	// Logger receives the engine's start-up warnings (an intent log held
	// by another engine, change sets finished after a crash); nil
	// discards them.
	Logger *slog.Logger
}

// StateError is the error Start returns when the state directory
// (Config.StateDir) cannot be used.
type StateError struct{ Err error }

func (e *StateError) Error() string { return e.Err.Error() }
func (e *StateError) Unwrap() error { return e.Err }

// MaxRecvBytes is the largest message a client of the engine, or of a
// hashlined that hashline mcp --server forwards to, accepts: hashlined's
// default --max-recv-bytes.
const MaxRecvBytes = 64 << 20

// Engine is a running in-process service and a client connected to it.
type Engine struct {
	Client *client.Client
	ws     *workspace.Workspace
	svc    *server.Service
	disk   *versions.Disk // nil without a state store
	gs     *grpc.Server
	conn   *grpc.ClientConn
	served chan error
	calls  *inFlight
	// unlockLog releases the intent log's lock; nil without a log.
	unlockLog func() error
}

// Start opens the workspace and serves it in-process.
func Start(cfg Config) (*Engine, error) {
	root := cfg.Root
	if root == "" {
		root = "."
	}
	ws, err := workspace.Open(root, cfg.Workspace...)
	if err != nil {
		return nil, err
	}
	var disk *versions.Disk
	var intents *state.Intents
	if cfg.StateBytes > 0 {
		sd, err := state.Open(cfg.StateDir, ws.Dir())
		if err == nil {
			disk, err = sd.Snapshots(cfg.StateBytes)
		}
		if err == nil {
			// A set this process commits and a crash interrupts is
			// finished by the next hashlined of the workspace.
			intents, err = sd.Intents(true)
		}
		if err != nil {
			ws.Close()
			return nil, &StateError{Err: err}
		}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	unlockLog, err := takeLog(ws, intents, logger)
	if err != nil {
		if disk != nil {
			disk.Close()
		}
		ws.Close()
		return nil, &StateError{Err: err}
	}
	if unlockLog == nil {
		intents = nil
	}
	opts := append([]server.Option{server.WithRequireRead(false), server.WithSnapshotDisk(disk), server.WithIntentLog(intents)}, cfg.Server...)
	svc := server.New(ws, opts...)
	gs, _ := server.NewGRPCServer(svc, server.GRPCConfig{})
	lis := bufconn.Listen(1 << 20)
	e := &Engine{ws: ws, svc: svc, disk: disk, gs: gs, served: make(chan error, 1), unlockLog: unlockLog}
	go func() { e.served <- gs.Serve(lis) }()
	// Streaming calls go over this connection, with client.Dial's
	// transport: no flow-control pings between two ends of one process. It
	// accepts messages as large as hashline mcp --server does from a
	// hashlined (MaxRecvBytes), not grpc's 4 MiB: a Grep sends one message
	// per file, and a file with many matches can pass 4 MiB.
	conn, err := grpc.NewClient("passthrough:///local", append(client.TransportOptions(),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxRecvBytes)),
	)...)
	if err != nil {
		gs.Stop()
		if disk != nil {
			disk.Close()
		}
		if unlockLog != nil {
			unlockLog()
		}
		ws.Close()
		return nil, fmt.Errorf("hashline: in-process connection: %w", err)
	}
	e.conn = conn
	e.calls = &inFlight{conn: server.InProcess(svc, server.GRPCConfig{}, conn)}
	// A call in this process cannot lose its reply, so the client neither
	// retries nor gives Edit and Write a request_id of their own: the
	// service would keep every outcome for nothing. A request_id the
	// caller sets still works, and cfg.Client may turn retries back on.
	e.Client = client.New(e.calls, append([]client.Option{client.WithRetry(client.RetryPolicy{})}, cfg.Client...)...)
	return e, nil
}

// Root is the absolute workspace directory.
func (e *Engine) Root() string { return e.ws.Dir() }

// Close waits for calls in flight, then stops the service, saves its
// snapshots to the state store, if any, and closes the workspace.
func (e *Engine) Close() error {
	e.calls.close()
	err := e.conn.Close()
	e.gs.GracefulStop()
	if serr := <-e.served; serr != nil && !errors.Is(serr, grpc.ErrServerStopped) {
		err = errors.Join(err, serr)
	}
	if e.disk != nil {
		e.svc.SaveSnapshots()
		err = errors.Join(err, e.disk.Close())
	}
	if e.unlockLog != nil {
		// After the last set is committed: no call runs any more.
		err = errors.Join(err, e.unlockLog())
	}
	return errors.Join(err, e.ws.Close())
}

// takeLog takes the intent log's lock for the engine's lifetime and
// finishes the change sets a crash left in it, before the engine serves.
// A log another engine holds (a hashlined, another hashline mcp of the
// workspace) is not used: replaying it would finish that engine's sets
// under its feet. The engine then runs without one, its sets all or
// nothing only while it runs, and says so. It returns the lock's release,
// nil when the engine runs without the log.
func takeLog(ws *workspace.Workspace, intents *state.Intents, logger *slog.Logger) (func() error, error) {
	if intents == nil {
		return nil, nil
	}
	release, err := intents.Lock()
	if err != nil {
		logger.Warn("intent log: not used, so change sets of several files are all or nothing while this engine runs, not across a crash", "dir", intents.Dir(), "why", err)
		return nil, nil
	}
	if _, err := server.Recover(ws, intents, logger); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// inFlight counts the unary calls made straight to the service, which the
// gRPC server does not see, so that Close can wait for them before it
// closes the workspace; calls after Close fail.
type inFlight struct {
	conn   grpc.ClientConnInterface
	mu     sync.RWMutex // held for reading by each call, for writing by close
	closed bool
}

func (f *inFlight) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return status.Error(codes.Canceled, "hashline: the in-process engine is closed")
	}
	return f.conn.Invoke(ctx, method, args, reply, opts...)
}

func (f *inFlight) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return f.conn.NewStream(ctx, desc, method, opts...)
}

func (f *inFlight) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}
