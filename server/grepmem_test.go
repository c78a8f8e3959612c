package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// memEnv serves a workspace over bufconn, to as many connections as a test
// dials.
type memEnv struct {
	svc  *server.Service
	lis  *bufconn.Listener
	root string
}

func newMemEnv(t *testing.T, cfg server.GRPCConfig, opts ...engine.Option) *memEnv {
	t.Helper()
	root := t.TempDir()
	ws, err := workspace.Open(root, workspace.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	svc := server.New(ws, opts...)
	gs, _ := server.NewGRPCServer(svc, cfg)
	lis := bufconn.Listen(1 << 20)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	t.Cleanup(func() {
		svc.Engine().Shutdown()
		gs.Stop()
		<-served
		ws.Close()
	})
	return &memEnv{svc: svc, lis: lis, root: root}
}

// dial connects a client with small fixed windows: a stream it does not
// read stops the server's sends after 64 KiB.
func (e *memEnv) dial(t *testing.T) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return e.lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// matchingTree writes files every line of which matches "match": each
// result is some 11 KB held (the file, its lines and their bookkeeping)
// and a message of about 4 KB.
func (e *memEnv) matchingTree(t *testing.T, n int) {
	t.Helper()
	content := strings.Repeat("match "+strings.Repeat("x", 94)+"\n", 40)
	for i := range n {
		p := filepath.Join(e.root, fmt.Sprintf("d%d", i%5), fmt.Sprintf("%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stallGreps starts n Greps on conn whose client never reads; cancel ends
// them.
func stallGreps(t *testing.T, conn *grpc.ClientConn, n int) (cancel context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for i := range n {
		_, err := hashlinev1.NewFileServiceClient(conn).Grep(asAgent(ctx, fmt.Sprintf("stalled-%d", i)), &hashlinev1.GrepRequest{Pattern: "match", MaxMatches: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
	}
	return cancel
}

// grepCount runs a Grep to its end, reading everything, and returns the
// number of files it got.
func grepCount(ctx context.Context, conn *grpc.ClientConn) (int, error) {
	st, err := hashlinev1.NewFileServiceClient(conn).Grep(asAgent(ctx, "reader"), &hashlinev1.GrepRequest{Pattern: "match", MaxMatches: 1 << 30})
	if err != nil {
		return 0, err
	}
	files := 0
	for {
		m, err := st.Recv()
		if err != nil {
			return files, err
		}
		if m.GetFile() != nil {
			files++
		}
		if s := m.GetSummary(); s != nil {
			if int(s.GetFilesMatched()) != files {
				return files, fmt.Errorf("summary counts %d files, %d came", s.GetFilesMatched(), files)
			}
			if _, err := st.Recv(); err != io.EOF {
				return files, fmt.Errorf("after the summary: %v", err)
			}
			return files, nil
		}
	}
}

func TestGrepsHoldAtMostTheServerBudget(t *testing.T) {
	const (
		files  = 300
		search = 64 << 10 // each Grep's own bound
		// slack is more than one result: a Grep waits for room for the
		// next one, so it holds its bound less at most that much.
		slack = 16 << 10
	)
	t.Run("Greps whose clients do not read hold no more than the budget and give it back when cancelled", func(t *testing.T) {
		const budget = 512 << 10 // twelve Greps would hold 768 KiB
		e := newMemEnv(t, server.GRPCConfig{}, engine.WithGrepBytes(budget), engine.WithGrepSearchBytes(search))
		e.matchingTree(t, files)
		cancel := stallGreps(t, e.dial(t), 12)
		eventually(t, "the budget to fill", func() bool { return e.svc.Engine().GrepMemory().Held > budget-slack })
		if m := e.svc.Engine().GrepMemory(); m.Peak > budget || m.Budget != budget {
			t.Errorf("%+v: held more than the budget", m)
		}
		cancel()
		eventually(t, "the cancelled Greps to give their bytes back", func() bool { return e.svc.Engine().GrepMemory().Held == 0 })
	})
	t.Run("a Grep whose client reads completes while stalled ones hold their own bounds", func(t *testing.T) {
		const budget = 1 << 20
		e := newMemEnv(t, server.GRPCConfig{}, engine.WithGrepBytes(budget), engine.WithGrepSearchBytes(search))
		e.matchingTree(t, files)
		const stalled = 6
		cancel := stallGreps(t, e.dial(t), stalled)
		eventually(t, "the stalled Greps to fill their bounds", func() bool { return e.svc.Engine().GrepMemory().Held >= stalled*(search-slack) })
		n, err := grepCount(context.Background(), e.dial(t))
		if err != nil || n != files {
			t.Fatalf("a Grep that reads got %d files of %d, err %v", n, files, err)
		}
		// What the reading Grep held it gave back before its call ended.
		if m := e.svc.Engine().GrepMemory(); m.Held > stalled*(search+slack) || m.Peak > budget {
			t.Errorf("%+v: more held than %d stalled Greps' bounds, or than the budget", m, stalled)
		}
		cancel()
		eventually(t, "the cancelled Greps to give their bytes back", func() bool { return e.svc.Engine().GrepMemory().Held == 0 })
	})
	t.Run("a Grep that finds the budget spent waits for bytes and does not fail", func(t *testing.T) {
		const budget = 256 << 10 // four stalled Greps spend it
		e := newMemEnv(t, server.GRPCConfig{}, engine.WithGrepBytes(budget), engine.WithGrepSearchBytes(search))
		e.matchingTree(t, files)
		cancel := stallGreps(t, e.dial(t), 6)
		eventually(t, "the budget to fill", func() bool { return e.svc.Engine().GrepMemory().Held > budget-slack })
		type outcome struct {
			files int
			err   error
		}
		done := make(chan outcome, 1)
		go func() {
			n, err := grepCount(context.Background(), e.dial(t))
			done <- outcome{n, err}
		}()
		cancel()
		if o := <-done; o.err != nil || o.files != files {
			t.Fatalf("the waiting Grep got %d files of %d, err %v", o.files, files, o.err)
		}
		if m := e.svc.Engine().GrepMemory(); m.Peak > budget {
			t.Errorf("%+v: held more than the budget", m)
		}
		eventually(t, "every Grep to give its bytes back", func() bool { return e.svc.Engine().GrepMemory().Held == 0 })
	})
	t.Run("a Grep past its deadline gives its bytes back though its client still holds the stream", func(t *testing.T) {
		limiter := server.NewStreamLimiter(server.DefaultStreamsPerAgent)
		e := newMemEnv(t, server.GRPCConfig{StreamLimit: limiter, DefaultTimeout: time.Second},
			engine.WithGrepSearchBytes(search))
		e.matchingTree(t, files)
		stallGreps(t, e.dial(t), 1)
		eventually(t, "the Grep to hold bytes", func() bool { return e.svc.Engine().GrepMemory().Peak > search-slack })
		eventually(t, "the Grep past its deadline to give its bytes back", func() bool { return e.svc.Engine().GrepMemory().Held == 0 })
		// The handler waits in a send the client does not read; the
		// stream is still there.
		if n := limiter.Open("stalled-0"); n != 1 {
			t.Errorf("%d streams open, want the stalled one", n)
		}
	})
}

// headerBlock encodes the request headers of a call to path with extra
// bytes of metadata (in fields of 16 KiB).
func headerBlock(path string, extra int) []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", path}, {":authority", "bufnet"},
		{"content-type", "application/grpc"}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	for i := 0; extra > 0; i++ {
		n := min(extra, 16<<10)
		enc.WriteField(hpack.HeaderField{Name: fmt.Sprintf("x-pad-%d", i), Value: strings.Repeat("p", n), Sensitive: true})
		extra -= n
	}
	return buf.Bytes()
}

// rawCall makes one call on a new HTTP/2 connection, written by hand so
// that nothing on the client side refuses to send it, and reports whether
// the server answered the stream (HEADERS), or refused it: reset the
// stream (RST_STREAM), or the connection (GOAWAY, or closing it when the
// headers go far over the bound, which spares it decoding them).
func rawCall(t *testing.T, lis *bufconn.Listener, block []byte) (answered bool) {
	t.Helper()
	c, err := lis.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fr := http2.NewFramer(c, c)
	go func() {
		// Written while the server reads; errors mean the server hung up.
		if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
			return
		}
		if fr.WriteSettings() != nil {
			return
		}
		const frag = 16 << 10 // the default largest frame
		first := block[:min(len(block), frag)]
		if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: first, EndHeaders: len(block) <= frag}) != nil {
			return
		}
		for rest := block[len(first):]; len(rest) > 0; {
			n := min(len(rest), frag)
			if fr.WriteContinuation(1, n == len(rest), rest[:n]) != nil {
				return
			}
			rest = rest[n:]
		}
		fr.WriteData(1, true, []byte{0, 0, 0, 0, 0}) // an empty message
	}()
	for {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			t.Fatalf("reading the server's answer: %v", err)
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			if f.StreamID == 1 {
				return true
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == 1 {
				return false
			}
		case *http2.GoAwayFrame:
			return false
		}
	}
}

func TestRequestHeadersAreBounded(t *testing.T) {
	e := newMemEnv(t, server.GRPCConfig{})
	const health = "/grpc.health.v1.Health/Check"
	tests := []struct {
		name     string
		extra    int
		answered bool
	}{
		{"a call with 32 KiB of metadata is served", 32 << 10, true},
		{"a call with a megabyte of metadata is reset before it is served", 1 << 20, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rawCall(t, e.lis, headerBlock(health, tt.extra)); got != tt.answered {
				t.Errorf("answered %v, want %v", got, tt.answered)
			}
		})
	}
	t.Run("the server stays healthy", func(t *testing.T) {
		conn := e.dial(t)
		r, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health %v, err %v", r.GetStatus(), err)
		}
		if err := os.WriteFile(filepath.Join(e.root, "a.txt"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := hashlinev1.NewFileServiceClient(conn).Read(asAgent(context.Background(), "a"), &hashlinev1.ReadRequest{Path: "a.txt"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a grpc-go client's call with a megabyte of metadata fails INTERNAL", func(t *testing.T) {
		// Refused by the client once it knows the server's bound, reset by
		// the server before that.
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-pad", strings.Repeat("p", 1<<20))
		_, err := healthpb.NewHealthClient(e.dial(t)).Check(ctx, &healthpb.HealthCheckRequest{})
		if status.Code(err) != codes.Internal {
			t.Fatalf("err = %v, want INTERNAL", err)
		}
	})
}
