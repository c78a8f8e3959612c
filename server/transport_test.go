package server_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// TestTransportFramesPerCall speaks HTTP/2 to the real server on loopback
// and records every frame it sends for one call. With grpc's dynamic flow
// control each request carrying data would make the server send a
// WINDOW_UPDATE and a bandwidth-estimating PING, and read the answer: one
// more write and one more wake-up per call. The server's static windows
// (16 MiB per stream and per connection) are announced once, at connection
// start, and a call is answered with its response frames alone.
func TestTransportFramesPerCall(t *testing.T) {
	_, addr := serveLoopback(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}

	// Connection start: the server's settings and connection window, all
	// sent before it answers a ping of ours.
	if err := fr.WritePing(false, [8]byte{1}); err != nil {
		t.Fatal(err)
	}
	var streamWindow, connIncrement uint32
	for done := false; !done; {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the connection preface: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
				streamWindow = v
			}
			if err := fr.WriteSettingsAck(); err != nil {
				t.Fatal(err)
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				connIncrement += f.Increment
			}
		case *http2.PingFrame:
			done = f.IsAck()
		default:
			t.Fatalf("frame %v before the server's windows", f.Header())
		}
	}
	if streamWindow != 16<<20 {
		t.Errorf("stream window %d, want %d", streamWindow, 16<<20)
	}
	if got, want := connIncrement+65535, uint32(16<<20); got != want {
		t.Errorf("connection window %d, want %d", got, want)
	}

	// One health check: HEADERS, then DATA with an empty message.
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "http"}, {":path", "/grpc.health.v1.Health/Check"},
		{":authority", "test"}, {"content-type", "application/grpc"}, {"te", "trailers"},
	} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if err := fr.WriteData(1, true, []byte{0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}

	var sent []string
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the response after %v: %v", sent, err)
		}
		sent = append(sent, f.Header().Type.String())
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				t.Fatalf("unexpected SETTINGS mid-call: %v", f)
			}
			sent = sent[:len(sent)-1] // the ack of ours may arrive late
		case *http2.PingFrame:
			t.Errorf("server sent a PING for one call (frames so far: %v)", sent)
		case *http2.WindowUpdateFrame:
			t.Errorf("server sent a WINDOW_UPDATE for a 5-byte request (frames so far: %v)", sent)
		case *http2.MetaHeadersFrame:
			if f.StreamEnded() {
				if f.Truncated {
					t.Fatal("truncated trailers")
				}
				for _, h := range f.RegularFields() {
					if h.Name == "grpc-status" && h.Value != "0" {
						t.Fatalf("grpc-status %s", h.Value)
					}
				}
				want := []string{"HEADERS", "DATA", "HEADERS"}
				if len(sent) != len(want) {
					t.Errorf("frames for one call: %v, want %v", sent, want)
				}
				return
			}
		}
	}
}

// TestClientFramesPerCall counts the frames client.Dial's connection sends
// through a proxy over a run of calls: with the static windows of
// client.TransportOptions, no ping and no window update follows each
// response, which the server would have to read and answer.
func TestClientFramesPerCall(t *testing.T) {
	root, addr := serveLoopback(t)
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The proxy copies both ways and parses what the client sends.
	plis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plis.Close() })
	var mu sync.Mutex
	sent := map[http2.FrameType]int{}
	go func() {
		cc, err := plis.Accept()
		if err != nil {
			return
		}
		defer cc.Close()
		sc, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		defer sc.Close()
		go io.Copy(cc, sc)
		pr, pw := io.Pipe()
		go func() {
			defer pr.Close()
			if _, err := io.ReadFull(pr, make([]byte, len(http2.ClientPreface))); err != nil {
				return
			}
			fr := http2.NewFramer(nil, pr)
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					return
				}
				if p, ok := f.(*http2.PingFrame); ok && p.IsAck() {
					continue // answers to the server's own pings
				}
				mu.Lock()
				// Settings and the connection's window come before the
				// first call; count from there.
				if f.Header().Type == http2.FrameHeaders || sent[http2.FrameHeaders] > 0 {
					sent[f.Header().Type]++
				}
				mu.Unlock()
			}
		}()
		io.Copy(sc, io.TeeReader(cc, pw))
		pw.Close()
	}()

	c, err := client.Dial(plis.Addr().String(), client.WithAgentID("frames"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const calls = 20
	for range calls {
		if _, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
			t.Fatal(err)
		}
	}
	c.Close() // the proxy has parsed everything once the connection is gone
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := sent[http2.FrameHeaders]
		got := maps.Clone(sent)
		mu.Unlock()
		if n >= calls {
			if got[http2.FramePing] != 0 || got[http2.FrameWindowUpdate] != 0 {
				t.Errorf("the client sent %d pings and %d window updates over %d calls, want none: %v",
					got[http2.FramePing], got[http2.FrameWindowUpdate], calls, got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy saw %d request HEADERS frames, want %d: %v", n, calls, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serveLoopback serves a new workspace with NewGRPCServer on a free
// loopback port, as hashlined does, and returns its root and address.
func serveLoopback(t *testing.T) (root, addr string) {
	t.Helper()
	root = t.TempDir()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return root, lis.Addr().String()
}
