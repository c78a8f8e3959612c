package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// connect gives a frameConn reading input (then its end) with a frame
// limit of maxFrame, and its output.
func connect(t *testing.T, input string, maxFrame int) (*frameConn, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	conn, err := (&frameTransport{in: io.NopCloser(strings.NewReader(input)), out: &out, maxFrame: maxFrame}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn.(*frameConn), &out
}

// A line of exactly the limit is read, its line ending aside; one byte
// more is refused.
func TestFrameLimitIsExact(t *testing.T) {
	const limit = 80
	frame := func(n int) string {
		f := `{"jsonrpc":"2.0","method":"notifications/x","params":{"p":""}}`
		return strings.Replace(f, `""`, `"`+strings.Repeat("x", n-len(f))+`"`, 1)
	}
	for _, tc := range []struct {
		name    string
		line    string
		refused bool
	}{
		{"a line of the limit", frame(limit) + "\n", false},
		{"a line of the limit ending in CRLF", frame(limit) + "\r\n", false},
		{"a last line of the limit without a newline", frame(limit), false},
		{"a line one byte over", frame(limit+1) + "\n", true},
		{"a line one byte over ending in CRLF", frame(limit+1) + "\r\n", true},
		{"a last line one byte over without a newline", frame(limit + 1), true},
		{"a line many buffers over", frame(limit+1<<20) + "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, out := connect(t, tc.line, limit)
			msg, err := c.Read(context.Background())
			if tc.refused {
				// The refusal is written before the end is delivered.
				if !errors.Is(err, io.EOF) || !strings.Contains(out.String(), `"code":-32600`) || !strings.Contains(out.String(), "larger than 80 bytes") {
					t.Fatalf("msg %v, err %v, output %s", msg, err, out)
				}
				return
			}
			if req, ok := msg.(*jsonrpc.Request); err != nil || !ok || req.Method != "notifications/x" {
				t.Fatalf("msg %v, err %v, output %s", msg, err, out)
			}
			if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
				t.Errorf("after the line: %v", err)
			}
		})
	}
}

// The SDK writes replies from its calls' goroutines while the read loop
// writes refusals: every line of the output is still one whole message.
func TestRefusalsAndRepliesAreWholeLines(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// Written in pieces, as a stream may take a large write, so that writes
	// not kept apart would interleave.
	conn, err := (&frameTransport{in: inR, out: pieces{outW}, maxFrame: MaxFrameBytes}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 50
	lines := make(chan []string)
	go func() {
		var got []string
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			got = append(got, sc.Text())
		}
		lines <- got
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range n {
			io.WriteString(inW, "not json\n")
		}
		inW.Close()
	}()
	result := json.RawMessage(`{"text":"` + strings.Repeat("y", 64<<10) + `"}`)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, _ := jsonrpc.MakeID(float64(i))
			if err := conn.Write(context.Background(), &jsonrpc.Response{ID: id, Result: result}); err != nil {
				t.Error(err)
			}
		}()
	}
	// The read loop delivers the end after its last refusal.
	if _, err := conn.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("read: %v", err)
	}
	wg.Wait()
	outW.Close()
	got := <-lines
	refusals, replies := 0, 0
	for _, l := range got {
		var r rpcLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("a line is not one message: %v: %.80s", err, l)
		}
		if r.Error != nil {
			refusals++
		} else {
			replies++
		}
	}
	if refusals != n || replies != n {
		t.Errorf("%d refusals and %d replies, want %d of each", refusals, replies, n)
	}
}

// pieces writes to w in pieces of at most 4 KiB.
type pieces struct{ w io.Writer }

func (p pieces) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		m, err := p.w.Write(b[:min(len(b), 4<<10)])
		n += m
		if err != nil {
			return n, err
		}
		b = b[m:]
	}
	return n, nil
}

type rpcLine struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}
