package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// DefaultIdleExit is how long an engine that hashline started for its
// sessions keeps running once its last client has gone: long enough that
// a script's next hashline command, or an MCP client's next session, finds
// it with what each agent was shown, short enough that no engine lingers.
const DefaultIdleExit = 30 * time.Second

// MaxRecvBytes is the largest message a client of an engine accepts:
// hashlined's default --max-recv-bytes, so that a server configured with
// larger read budgets does not break a session.
const MaxRecvBytes = 64 << 20

// Start says how Attach starts an engine for a root that has none.
type Start struct {
	// Command runs the engine: a program and its first arguments, to
	// which Attach adds hashlined serve's flags (--root, --listen "",
	// --idle-exit, then Args). hashline passes itself and "engine".
	Command []string
	// Args are more flags of the engine it starts (--fsync=false,
	// --state-dir DIR, ...). They apply only to an engine Attach starts;
	// an engine already running keeps its own.
	Args []string
	// IdleExit is the engine's --idle-exit; 0 means DefaultIdleExit.
	IdleExit time.Duration
	// Wait bounds how long Attach waits for an engine to answer, one it
	// started or one still starting (finishing a crash's change sets);
	// 0 means 30 seconds.
	Wait time.Duration
}

// Attach returns a client of the engine of the workspace root: the one
// running (a hashlined serving root, or an engine another session
// started), or, when none runs, one it starts with start. Every process
// of the user that attaches to a root reaches the same engine, so their
// agents share one set of views and rebases. The connection finds the
// engine again, starting one if needed, should it have stopped.
func Attach(ctx context.Context, root string, start Start, opts ...client.Option) (*client.Client, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, &RootError{err}
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, &RootError{fmt.Errorf("workspace root %s: %w", root, err)}
	} else if !fi.IsDir() {
		return nil, &RootError{fmt.Errorf("workspace root %s is not a directory; pass a directory", root)}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	pl, err := locate(abs)
	if err != nil {
		return nil, err
	}
	a := &attacher{root: abs, pl: pl, start: start}
	dial := []grpc.DialOption{
		grpc.WithContextDialer(a.dial),
		// A session's connection stays open while it lives, idle or
		// not: the engine counts connections to know when to stop.
		grpc.WithIdleTimeout(0),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxRecvBytes)),
	}
	c, err := client.Dial("passthrough:///hashline-engine", append([]client.Option{client.WithDialOptions(dial...)}, opts...)...)
	if err != nil {
		return nil, err
	}
	st, err := c.Status(ctx)
	if err != nil {
		c.Close()
		var ce *client.Error
		if errors.As(err, &ce) && ce.Code == codes.Unauthenticated {
			return nil, fmt.Errorf("the engine of %s is %s, which asks for a token: pass --token or set HASHLINE_TOKEN (%w)", abs, readHolder(pl.record).describe(), err)
		}
		if errors.As(err, &ce) && ce.Reason != "" {
			// It answered, and refused: WRONG_WORKSPACE from a hashlined
			// started with another --workspace, say. Its message says why.
			return nil, fmt.Errorf("the engine of %s is %s, which refused the session: %w", abs, readHolder(pl.record).describe(), err)
		}
		if err := a.lastErr(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the engine of %s did not answer: %w", abs, err)
	}
	if same := workspace.DefaultNameFold(); st.Root != abs && (same == nil || same(st.Root) != same(abs)) {
		c.Close()
		return nil, fmt.Errorf("the engine on %s serves %s, not %s; remove the socket if no engine of %s runs", pl.socket, st.Root, abs, abs)
	}
	return c, nil
}

// RootError is Attach's error for a root that is not a directory it can
// serve, so that a face can name its flag.
type RootError struct{ Err error }

func (e *RootError) Error() string { return e.Err.Error() }
func (e *RootError) Unwrap() error { return e.Err }

// attacher finds the engine of one root each time the connection dials.
type attacher struct {
	root  string
	pl    place
	start Start
	mu    sync.Mutex
	// err is the last reason an engine could not be reached, for the
	// first call's error: grpc reports a failed dial only as UNAVAILABLE.
	err error
}

func (a *attacher) fail(err error) error {
	a.mu.Lock()
	a.err = err
	a.mu.Unlock()
	return err
}

func (a *attacher) lastErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *attacher) dial(ctx context.Context, _ string) (net.Conn, error) {
	wait := a.start.Wait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	deadline := time.Now().Add(wait)
	var started *exec.Cmd
	exited := make(chan error, 1)
	for delay := 2 * time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "unix", a.pl.socket)
		if err == nil {
			a.fail(nil)
			return conn, nil
		}
		if started == nil && a.nobodyHolds() {
			cmd, err := a.spawn()
			if err != nil {
				return nil, a.fail(err)
			}
			started = cmd
			go func() { exited <- cmd.Wait() }()
		}
		select {
		case werr := <-exited:
			// The engine started here stopped. Another may have won the
			// workspace meanwhile (two sessions starting at once): go on
			// trying the socket while some process holds the lock.
			if a.nobodyHolds() {
				return nil, a.fail(fmt.Errorf("the workspace's engine did not start (%v): %s", werr, a.logTail()))
			}
			exited = nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			return nil, a.fail(fmt.Errorf("the workspace %s is held by %s, which does not answer on %s after %s; if it hangs, stop it and try again", a.root, readHolder(a.pl.record).describe(), a.pl.socket, wait))
		}
	}
}

// nobodyHolds reports whether no process holds the root's engine lock.
func (a *attacher) nobodyHolds() bool {
	release, err := state.LockFile(a.pl.lock)
	if err != nil {
		return false
	}
	release()
	return true
}

// spawn starts an engine for the root in a session of its own, so that it
// outlives this process and serves whoever attaches next, and stops by
// itself once idle. Its log is engine.log in the place's directory.
func (a *attacher) spawn() (*exec.Cmd, error) {
	if len(a.start.Command) == 0 {
		return nil, fmt.Errorf("no engine serves %s and none can be started here", a.root)
	}
	idle := a.start.IdleExit
	if idle <= 0 {
		idle = DefaultIdleExit
	}
	args := append([]string{"serve", "--root", a.root, "--listen", "", "--idle-exit", idle.String(), "--log-level", "warn"}, a.start.Args...)
	cmd := exec.Command(a.start.Command[0], append(append([]string{}, a.start.Command[1:]...), args...)...)
	logf, err := os.OpenFile(filepath.Join(a.pl.dir, "engine.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the engine's log: %w", err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	// Not the root: the engine must not keep a directory of the
	// workspace busy (an unmount, a Windows rename) by being in it.
	cmd.Dir = a.pl.dir
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the workspace's engine (%s): %w", strings.Join(a.start.Command, " "), err)
	}
	return cmd, nil
}

// logTail is the end of the engine's log, for the error of an engine that
// did not start.
func (a *attacher) logTail() string {
	b, _ := os.ReadFile(filepath.Join(a.pl.dir, "engine.log"))
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	if s == "" {
		return "it printed nothing"
	}
	return s
}
