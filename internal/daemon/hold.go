package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hashline/hashline/internal/state"
)

// HeldError is the error of an engine refused because another process
// already holds the workspace.
type HeldError struct {
	Root   string
	holder holder
}

func (e *HeldError) Error() string {
	h := e.holder
	msg := fmt.Sprintf("the workspace %s is already served by %s; a second engine on one workspace would lose edits beside it. ", e.Root, h.describe())
	switch {
	case h.Kind == "hashlined" && h.Listen != "":
		msg += fmt.Sprintf("Use that one: hashline --local and hashline mcp attach to it by themselves, other clients connect with --server %s", h.Listen)
	case h.PID != 0:
		msg += fmt.Sprintf("Use that one (hashline --local and hashline mcp attach to it by themselves), or stop it (kill %d) and start again", h.PID)
	default:
		msg += "Use that one: hashline --local and hashline mcp attach to it by themselves"
	}
	return msg
}

// holdPlace takes the lock of root's place for this engine and listens on
// its socket. The returned release stops listening, removes the socket and
// the record and drops the lock, in that order.
func holdPlace(root string) (place, net.Listener, func(), error) {
	pl, err := locate(root)
	if err != nil {
		return place{}, nil, nil, err
	}
	unlock, err := state.LockFile(pl.lock)
	if errors.Is(err, state.ErrHeld) {
		return place{}, nil, nil, &HeldError{Root: root, holder: readHolder(pl.record)}
	}
	if err != nil {
		return place{}, nil, nil, fmt.Errorf("the workspace's engine lock: %w", err)
	}
	// The lock is ours, so a socket file here was left by an engine that
	// is gone: replace it.
	os.Remove(pl.socket)
	restore := privateFiles()
	sock, err := net.Listen("unix", pl.socket)
	restore()
	if err == nil {
		err = os.Chmod(pl.socket, 0o600) // belt and braces
	}
	if err != nil {
		if sock != nil {
			sock.Close()
		}
		unlock()
		return place{}, nil, nil, fmt.Errorf("the workspace's socket %s: %w", pl.socket, err)
	}
	return pl, sock, func() {
		sock.Close()
		os.Remove(pl.socket)
		os.Remove(pl.record)
		unlock()
	}, nil
}

// connCounter counts the connections open on the listeners it wraps and,
// with an idle limit, signals once none has been open for that long.
type connCounter struct {
	mu    sync.Mutex
	n     int
	limit time.Duration
	timer *time.Timer
	fired chan struct{}
}

func newConnCounter(limit time.Duration) *connCounter {
	c := &connCounter{limit: limit, fired: make(chan struct{})}
	if limit > 0 {
		c.timer = time.AfterFunc(limit, c.fire)
	}
	return c
}

// idle is closed once no connection has been open for the limit; nil
// (never ready) without one.
func (c *connCounter) idle() <-chan struct{} {
	if c.limit <= 0 {
		return nil
	}
	return c.fired
}

func (c *connCounter) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		select {
		case <-c.fired:
		default:
			close(c.fired)
		}
	}
}

func (c *connCounter) opened() {
	c.mu.Lock()
	c.n++
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
}

func (c *connCounter) closed() {
	c.mu.Lock()
	c.n--
	if c.n == 0 && c.timer != nil {
		c.timer.Reset(c.limit)
	}
	c.mu.Unlock()
}

func (c *connCounter) wrap(l net.Listener) net.Listener { return &countedListener{Listener: l, c: c} }

type countedListener struct {
	net.Listener
	c *connCounter
}

func (l *countedListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.c.opened()
	return &countedConn{Conn: conn, c: l.c}, nil
}

type countedConn struct {
	net.Conn
	c    *connCounter
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(c.c.closed)
	return c.Conn.Close()
}

// tcpAddr is where lis listens, for the record; "" without one.
func tcpAddr(lis net.Listener) string {
	if lis == nil {
		return ""
	}
	if lis.Addr().Network() == "unix" {
		return "unix://" + lis.Addr().String()
	}
	return lis.Addr().String()
}
