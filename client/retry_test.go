package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// cutService counts calls; while cut is set, each call severs every client
// connection before answering, so the client sees UNAVAILABLE for a request
// the server did receive.
type cutService struct {
	hashlinev1.UnimplementedFileServiceServer
	lis   *trackingListener
	cut   atomic.Bool
	calls atomic.Int32
	mu    sync.Mutex
	ids   []string // the request_id of each Edit and Write
}

func (s *cutService) sawID(id string) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
}

func (s *cutService) maybeCut(ctx context.Context) error {
	s.calls.Add(1)
	if s.cut.CompareAndSwap(true, false) {
		s.lis.closeAll()
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (s *cutService) Read(ctx context.Context, req *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	if err := s.maybeCut(ctx); err != nil {
		return nil, err
	}
	return &hashlinev1.ReadResponse{Path: req.GetPath()}, nil
}

func (s *cutService) Edit(ctx context.Context, req *hashlinev1.EditRequest) (*hashlinev1.EditResponse, error) {
	s.sawID(req.GetRequestId())
	if err := s.maybeCut(ctx); err != nil {
		return nil, err
	}
	return &hashlinev1.EditResponse{Path: req.GetPath()}, nil
}

func (s *cutService) Write(ctx context.Context, req *hashlinev1.WriteRequest) (*hashlinev1.WriteResponse, error) {
	s.sawID(req.GetRequestId())
	if err := s.maybeCut(ctx); err != nil {
		return nil, err
	}
	return &hashlinev1.WriteResponse{Path: req.GetPath()}, nil
}

func (s *cutService) Grep(req *hashlinev1.GrepRequest, stream hashlinev1.FileService_GrepServer) error {
	if err := s.maybeCut(stream.Context()); err != nil {
		return err
	}
	return stream.Send(&hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_Summary{Summary: &hashlinev1.GrepSummary{}}})
}

type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *trackingListener) closeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// serveCut serves a cutService on addr (":0" style or a fixed address).
func serveCut(t *testing.T, addr string) (*cutService, string) {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	tl := &trackingListener{Listener: lis}
	svc := &cutService{lis: tl}
	gs := grpc.NewServer()
	hashlinev1.RegisterFileServiceServer(gs, svc)
	go gs.Serve(tl)
	t.Cleanup(gs.Stop)
	return svc, lis.Addr().String()
}

var fastRetry = RetryPolicy{MaxAttempts: 4, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Multiplier: 2}

func TestRetryAfterRequestWasSent(t *testing.T) {
	ctx := context.Background()
	calls := []struct {
		name  string
		call  func(*Client) error
		keyed bool // an Edit or Write: every attempt must carry one request_id
	}{
		{"Read is retried", func(c *Client) error {
			_, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: "a"})
			return err
		}, false},
		{"Grep is retried before any file arrived", func(c *Client) error {
			_, err := c.Grep(ctx, &hashlinev1.GrepRequest{Pattern: "a"}, nil)
			return err
		}, false},
		{"Edit is retried with the request_id of its first attempt", func(c *Client) error {
			_, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "a", Edits: []*hashlinev1.FileEdit{Append("x")}})
			return err
		}, true},
		{"Write is retried with the request_id of its first attempt", func(c *Client) error {
			_, err := c.Write(ctx, &hashlinev1.WriteRequest{Path: "a", Content: "x"})
			return err
		}, true},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			svc, addr := serveCut(t, "127.0.0.1:0")
			c, err := Dial(addr, WithRetry(fastRetry))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			svc.cut.Store(true)
			if err := tc.call(c); err != nil {
				t.Fatalf("call failed: %v", err)
			}
			if got := svc.calls.Load(); got != 2 {
				t.Fatalf("server saw %d calls, want 2 (the cut one and the retry)", got)
			}
			if !tc.keyed {
				return
			}
			svc.mu.Lock()
			defer svc.mu.Unlock()
			if len(svc.ids) != 2 || svc.ids[0] == "" || svc.ids[0] != svc.ids[1] {
				t.Fatalf("the attempts carried request_ids %q; want one non-empty key in both", svc.ids)
			}
		})
	}
}

func TestRetryUntilServerListens(t *testing.T) {
	// Reserve a port, free it, and start the server there only after the
	// first attempts have been refused.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()

	for _, name := range []string{"Read", "Edit", "Write"} {
		t.Run(name+" is retried while the connection is refused", func(t *testing.T) {
			c, err := Dial(addr, WithRetry(RetryPolicy{MaxAttempts: 20, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Multiplier: 2}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			started := make(chan *cutService, 1)
			time.AfterFunc(150*time.Millisecond, func() {
				svc, _ := serveCut(t, addr)
				started <- svc
			})
			ctx := context.Background()
			switch name {
			case "Read":
				_, err = c.Read(ctx, &hashlinev1.ReadRequest{Path: "a"})
			case "Edit":
				_, err = c.Edit(ctx, &hashlinev1.EditRequest{Path: "a", Edits: []*hashlinev1.FileEdit{Append("x")}})
			case "Write":
				_, err = c.Write(ctx, &hashlinev1.WriteRequest{Path: "a", Content: "x"})
			}
			if err != nil {
				t.Fatalf("%s failed although the server came up: %v", name, err)
			}
			svc := <-started
			if got := svc.calls.Load(); got != 1 {
				t.Fatalf("server saw %d calls, want 1", got)
			}
			// Stop this server so the next subtest starts refused again.
			svc.lis.Close()
			svc.lis.closeAll()
			time.Sleep(20 * time.Millisecond)
		})
	}
}

func TestNoRequestIDWithoutRetries(t *testing.T) {
	// With retries off nothing is sent twice, so no key is added: the
	// caller's own request_id, if any, is sent as it is.
	svc, addr := serveCut(t, "127.0.0.1:0")
	c, err := Dial(addr, WithRetry(RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(ctx, &hashlinev1.WriteRequest{Path: "a", RequestId: "mine"}); err != nil {
		t.Fatal(err)
	}
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.ids) != 2 || svc.ids[0] != "" || svc.ids[1] != "mine" {
		t.Fatalf("request_ids sent: %q; want none, then the caller's", svc.ids)
	}
}

func TestDefaultDeadline(t *testing.T) {
	// A server that never answers: the call must end at the client's
	// default deadline, not hang.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	hashlinev1.RegisterFileServiceServer(gs, hangService{})
	go gs.Serve(lis)
	defer gs.Stop()

	c, err := Dial(lis.Addr().String(), WithTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Read(context.Background(), &hashlinev1.ReadRequest{Path: "a"})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err = %v, want DEADLINE_EXCEEDED from the default deadline", err)
	}
	// A deadline the caller set wins over the default.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Read(ctx, &hashlinev1.ReadRequest{Path: "a"})
	if status.Code(err) != codes.DeadlineExceeded || time.Since(start) > 190*time.Millisecond {
		t.Fatalf("err = %v after %v, want the caller's 50ms deadline", err, time.Since(start))
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err %T is not an *Error", err)
	}
}

type hangService struct {
	hashlinev1.UnimplementedFileServiceServer
}

func (hangService) Read(ctx context.Context, _ *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestBackoffGrows(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 5, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 250 * time.Millisecond, Multiplier: 2}
	for n, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 250 * time.Millisecond, 4: 250 * time.Millisecond} {
		got := p.backoff(n)
		if got < want || got > want*12/10 {
			t.Errorf("backoff(%d) = %v, want %v plus at most 20%% jitter", n, got, want)
		}
	}
}
