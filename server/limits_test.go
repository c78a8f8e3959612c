package server_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

func TestRateLimitRefusesWithRetryInfo(t *testing.T) {
	const perSecond = 2 // slow enough that no token comes back while the test looks
	e := newEnvConfig(t, server.GRPCConfig{RateLimit: server.NewRateLimiter(perSecond, 2, 0)}, nil)
	e.write("f.txt", "x\n")
	rpc := e.c.RPC() // the raw stub: no client-side retries
	read := func(agent string) error {
		_, err := rpc.Read(metadata.AppendToOutgoingContext(e.ctx, client.AgentMetadataKey, agent), &hashlinev1.ReadRequest{Path: "f.txt"})
		return err
	}
	for i := range 2 {
		if err := read("a"); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	// Health checks do not count.
	for range 5 {
		if _, err := healthpb.NewHealthClient(e.conn).Check(e.ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	before := e.snapshot()
	err := read("a")
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("third call: %v, want RESOURCE_EXHAUSTED", err)
	}
	var retry time.Duration
	var reason string
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *hashlinev1.RetryInfo:
			retry = d.GetRetryDelay().AsDuration()
		case *hashlinev1.ErrorInfo:
			reason = d.GetReason()
		}
	}
	if reason != "RATE_LIMITED" || retry <= 0 || retry > time.Second/perSecond {
		t.Errorf("reason %q, retry %v: want RATE_LIMITED and a delay in (0, %v]", reason, retry, time.Second/perSecond)
	}
	e.assertUnchanged(before)
	// A Grep stream counts too, and is refused before it starts.
	if _, err := e.c.Grep(metadata.AppendToOutgoingContext(e.ctx, client.AgentMetadataKey, "a"), &hashlinev1.GrepRequest{Pattern: "x"}, nil); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("grep over the limit: %v", err)
	}
	if err := read("b"); err != nil {
		t.Errorf("another agent has its own bucket: %v", err)
	}
	time.Sleep(retry)
	if err := read("a"); err != nil {
		t.Errorf("after the retry delay: %v", err)
	}
}

func TestMaxConcurrentStreamsQueuesTheNextCall(t *testing.T) {
	e := newEnvConfig(t, server.GRPCConfig{MaxConcurrentStreams: 1}, nil)
	e.write("f.txt", "x\n")
	// A health Watch holds the connection's only stream open.
	wctx, stopWatch := context.WithCancel(e.ctx)
	w, err := healthpb.NewHealthClient(e.conn).Watch(wctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := e.c.RPC().Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("second stream while the first is open: %v, want it to wait (DEADLINE_EXCEEDED)", err)
	}
	stopWatch()
	if _, err := e.c.RPC().Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Errorf("after the first stream ended: %v", err)
	}
}

// TestKeepalivePolicyIsEnforced speaks raw HTTP/2 to the server and pings
// with no call open. Pinging faster than the policy's MinTime must end in
// GOAWAY ENHANCE_YOUR_CALM "too_many_pings"; pings spaced wider than it
// must all be answered (grpc's default policy would refuse those too, as
// it forbids pings without calls, so this shows the policy is applied).
func TestKeepalivePolicyIsEnforced(t *testing.T) {
	tests := []struct {
		name    string
		minTime time.Duration
		gap     time.Duration
		goAway  bool
	}{
		{name: "a ping flood is cut off", minTime: time.Minute, gap: 0, goAway: true},
		{name: "pings spaced wider than MinTime are answered", minTime: time.Millisecond, gap: 20 * time.Millisecond, goAway: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := workspace.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{
				KeepalivePolicy: keepalive.EnforcementPolicy{MinTime: tt.minTime, PermitWithoutStream: true},
			})
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go gs.Serve(lis)
			defer gs.Stop()

			conn, err := net.Dial("tcp", lis.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
				t.Fatal(err)
			}
			fr := http2.NewFramer(conn, bufio.NewReader(conn))
			if err := fr.WriteSettings(); err != nil {
				t.Fatal(err)
			}
			const pings = 5
			go func() {
				for i := range pings {
					time.Sleep(tt.gap)
					if fr.WritePing(false, [8]byte{byte(i)}) != nil {
						return
					}
				}
			}()
			acks := 0
			for acks < pings {
				f, err := fr.ReadFrame()
				if err != nil {
					t.Fatalf("after %d ping acks: %v", acks, err)
				}
				switch f := f.(type) {
				case *http2.PingFrame:
					if f.IsAck() {
						acks++
					}
				case *http2.GoAwayFrame:
					if !tt.goAway {
						t.Fatalf("GOAWAY %v %q after %d acks, want every ping answered", f.ErrCode, f.DebugData(), acks)
					}
					if f.ErrCode != http2.ErrCodeEnhanceYourCalm || string(f.DebugData()) != "too_many_pings" {
						t.Errorf("GOAWAY %v %q, want ENHANCE_YOUR_CALM too_many_pings", f.ErrCode, f.DebugData())
					}
					return
				}
			}
			if tt.goAway {
				t.Errorf("all %d pings answered, want GOAWAY", pings)
			}
		})
	}
}

// TestFileSizeLimitHoldsForReadEditAndWrite checks every way a file could
// get past --max-file-bytes.
func TestFileSizeLimitHoldsForReadEditAndWrite(t *testing.T) {
	const limit = 64
	e := newEnvWS(t, []workspace.Option{workspace.WithMaxFileBytes(limit)})
	big := repeat("x\n", limit) // 128 bytes
	e.write("big.txt", big)
	e.write("small.txt", repeat("y\n", limit/2-1)) // 62 bytes
	before := e.snapshot()
	for name, call := range map[string]func() error{
		"Read of a file over the limit": func() error {
			_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "big.txt"})
			return err
		},
		"Edit that would grow a file over the limit": func() error {
			_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "small.txt", Edits: []*hashlinev1.FileEdit{client.Append("zzzz")}})
			return err
		},
		"Write of content over the limit": func() error {
			_, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "new.txt", Content: big})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			if status.Code(err) != codes.ResourceExhausted || errorInfo(err).GetReason() != "TOO_LARGE" {
				t.Errorf("err = %v, want RESOURCE_EXHAUSTED TOO_LARGE", err)
			}
			e.assertUnchanged(before)
		})
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

// reasonOf returns the ErrorInfo reason of a status error.
// reasonOf is the reason of err's ErrorInfo; UNSPECIFIED if it has none
// or its string is not the name of a reason.
func reasonOf(err error) hashlinev1.ErrorReason {
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*hashlinev1.ErrorInfo); ok {
			return client.ParseReason(ei.GetReason())
		}
	}
	return hashlinev1.ErrorReason_ERROR_REASON_UNSPECIFIED
}
