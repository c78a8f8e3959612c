package mcp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// frameTransport is newline-delimited JSON-RPC over a stream pair, as the
// SDK's IOTransport, except that a frame the SDK could not decode does not
// end the session: the SDK's transport returns its decoding error from
// Read, and its session then stops reading and exits. Here each line is
// read with a bound, checked (checkFrame), and a bad one is answered with
// a JSON-RPC error reply by this connection itself; the SDK only ever sees
// messages it decodes.
//
// JSON-RPC batches are refused, not unpacked: MCP clients send one message
// per line, and the SDK refuses batches itself in the protocol versions it
// prefers.
type frameTransport struct {
	in       io.ReadCloser
	out      io.Writer
	maxFrame int
}

// Connect implements sdk.Transport.
func (t *frameTransport) Connect(context.Context) (sdk.Connection, error) {
	c := &frameConn{in: t.in, out: t.out, incoming: make(chan readResult), closed: make(chan struct{})}
	// Reads happen on their own goroutine so that Close can unblock a Read
	// waiting on a stream (stdin) that no close interrupts.
	go c.readLoop(bufio.NewReaderSize(t.in, 64<<10), t.maxFrame)
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// frameConn is the sdk.Connection of frameTransport.
type frameConn struct {
	in       io.Closer
	incoming chan readResult

	// writeMu makes each message one uninterrupted line: the SDK writes
	// replies from the goroutines of their calls, and the read loop writes
	// its refusals, all to the same stream.
	writeMu sync.Mutex
	out     io.Writer

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// readLoop reads lines until the stream ends, handing good messages to
// Read and answering bad ones. A line longer than maxFrame is discarded as
// it arrives, past its first maxFrame bytes (kept to find its id).
func (c *frameConn) readLoop(r *bufio.Reader, maxFrame int) {
	var line []byte
	over := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case over:
		case len(line)+len(chunk) > maxFrame+len("\r\n"):
			over = true
		default:
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		// A line ended, or the stream did: a last line without its
		// newline is still a frame.
		if !over && len(bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))) > maxFrame {
			over = true
		}
		if len(line) > 0 || over {
			if !c.frame(line, over, maxFrame) {
				return
			}
		}
		// A new slice per line: decoded messages may keep parts of the old.
		line, over = nil, false
		if err != nil {
			c.deliver(readResult{err: err})
			return
		}
	}
}

// frame handles one line; false means the connection is closed.
func (c *frameConn) frame(line []byte, over bool, maxFrame int) bool {
	var msg jsonrpc.Message
	var bad *frameError
	if over {
		bad = tooLarge(line, maxFrame)
	} else {
		msg, bad = checkFrame(line)
	}
	if bad != nil {
		// A refusal that cannot be written fails the SDK's next write
		// too, which ends the session; nothing more to do here.
		_ = c.writeLine(bad.reply())
	}
	if msg == nil {
		return true
	}
	return c.deliver(readResult{msg: msg})
}

func (c *frameConn) deliver(r readResult) bool {
	select {
	case c.incoming <- r:
		return true
	case <-c.closed:
		return false
	}
}

// Read implements sdk.Connection.
func (c *frameConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements sdk.Connection, encoding as the SDK's own stream
// transport does.
func (c *frameConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	return c.writeLine(data)
}

func (c *frameConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close implements sdk.Connection. It closes the input, not the output:
// the output's owner closes it.
func (c *frameConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.in.Close()
		close(c.closed)
	})
	return c.closeErr
}

// SessionID implements sdk.Connection: a stream has no session id.
func (c *frameConn) SessionID() string { return "" }
