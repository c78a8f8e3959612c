package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/mcp"
)

// rawSession is a real `hashline mcp` driven line by line over its stdin
// and stdout, as a client with bugs (or a hostile one) would.
type rawSession struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
}

// rpcReply is one line of the server's output.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing to hashline mcp: %v", err)
	}
}

// until reads replies up to the one with the given id, and returns it and
// those before it.
func (s *rawSession) until(id string) (rpcReply, []rpcReply) {
	s.t.Helper()
	var before []rpcReply
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			s.t.Fatalf("reading hashline mcp's output (did the session end?): %v; replies so far: %+v", err, before)
		}
		var r rpcReply
		if err := json.Unmarshal(line, &r); err != nil {
			s.t.Fatalf("a reply is not JSON: %v: %q", err, line)
		}
		if string(r.ID) == id {
			return r, before
		}
		before = append(before, r)
	}
}

// startRaw runs hashline mcp on root and makes the initialize handshake.
func startRaw(t *testing.T, root string) (*rawSession, *exec.Cmd, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	// The deadline kills a server that hangs, and its output then ends:
	// a test waiting for a reply fails instead of hanging.
	cmd := exec.CommandContext(ctx, hashlineBinary(t), "mcp", "--root", root)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	s := &rawSession{t: t, in: in, out: bufio.NewReader(out)}
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	if r, _ := s.until("0"); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, cmd, stderr
}

// TestBadFramesAreAnsweredAndTheSessionGoesOn sends hashline mcp each kind
// of frame a broken or hostile client can send, then a good call: each bad
// frame gets one JSON-RPC error reply, with its request's id when that can
// be known and null when not, and the next call is answered as usual. The
// SDK's own transport ends the session, with no reply, at the first.
func TestBadFramesAreAnsweredAndTheSessionGoesOn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.go"), []byte("package f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, cmd, stderr := startRaw(t, root)

	const (
		parseError     = -32700
		invalidRequest = -32600
	)
	huge := strings.Repeat("x", mcp.MaxFrameBytes+1<<20)
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	for i, tc := range []struct {
		name  string
		frame string
		code  int    // 0: no reply at all
		id    string // the reply's id, as JSON
		says  []string
	}{
		{"an empty line is skipped", "", 0, "", nil},
		{"a line of blanks is skipped", " \t\r", 0, "", nil},
		{"a truncated line", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_`, parseError, "null", []string{"not one complete JSON value"}},
		{"not JSON", `hello`, parseError, "null", []string{"one JSON object on its own line"}},
		{"two messages on one line", `{"jsonrpc":"2.0","id":2,"method":"tools/list"} {"jsonrpc":"2.0","id":3,"method":"tools/list"}`, parseError, "null", nil},
		{"invalid UTF-8", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"u.txt","content":"a` + "\xff" + `"}}}`, parseError, "null", []string{"UTF-8"}},
		{"nesting 10,000 levels deep", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"x":` + deep + `}}`, parseError, "null", []string{"deeper than 512 levels"}},
		{"a bare array", `[]`, invalidRequest, "null", []string{"batches"}},
		{"a batch", `[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`, invalidRequest, "null", []string{"each message as its own line"}},
		{"a string", `"tools/list"`, invalidRequest, "null", []string{"a JSON object"}},
		{"an object id", `{"jsonrpc":"2.0","id":{"n":7},"method":"tools/list"}`, invalidRequest, "null", []string{"a number or a string"}},
		{"a wrong version keeps its id", `{"jsonrpc":"1.0","id":8,"method":"tools/list"}`, invalidRequest, "8", []string{`"jsonrpc":"2.0"`}},
		{"a method that is not a string keeps its id", `{"jsonrpc":"2.0","id":"nine","method":9}`, invalidRequest, `"nine"`, nil},
		{"a 17 MiB write_file, its id first", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"big.txt","content":"` + huge + `"}}}`,
			invalidRequest, "10", []string{"larger than 16 MiB", "write_file its first part", "edit_file append", "hashline write FILE"}},
		{"a 17 MiB write_file, its id last", `{"method":"tools/call","params":{"name":"write_file","arguments":{"path":"big.txt","content":"` + huge + `"}},"jsonrpc":"2.0","id":11}`,
			invalidRequest, "null", []string{"larger than 16 MiB"}},
		{"a 17 MiB line of no JSON", huge, invalidRequest, "null", []string{"larger than 16 MiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			s.send(tc.frame)
			id := 1000 + i
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"f.go"}}}`, id))
			good, before := s.until(fmt.Sprint(id))
			if good.Error != nil || !strings.Contains(string(good.Result), `1:`) {
				t.Errorf("the good call after it: %s %+v", good.Result, good.Error)
			}
			if tc.code == 0 {
				if len(before) != 0 {
					t.Errorf("replies to a frame that wants none: %+v", before)
				}
				return
			}
			if len(before) != 1 {
				t.Fatalf("want one error reply, got %+v", before)
			}
			r := before[0]
			if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != tc.id || r.Result != nil {
				t.Fatalf("reply: id %s, error %+v; want id %s, code %d", r.ID, r.Error, tc.id, tc.code)
			}
			for _, w := range tc.says {
				if !strings.Contains(r.Error.Message, w) {
					t.Errorf("the message lacks %q: %s", w, r.Error.Message)
				}
			}
		})
	}
	s.t = t
	for _, name := range []string{"u.txt", "big.txt"} {
		if _, err := os.Stat(filepath.Join(root, name)); !os.IsNotExist(err) {
			t.Errorf("%s was written by a refused frame (stat: %v)", name, err)
		}
	}
	// Closing stdin still ends the session cleanly and quietly.
	s.in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("hashline mcp: %v, stderr: %s", err, stderr)
	}
	if stderr.String() != "" {
		t.Errorf("stderr not empty: %s", stderr)
	}
}
