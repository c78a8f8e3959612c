package client_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// lossy loses the answers of Edit and Write calls the way a network or a
// client deadline does: the server applies the call, and the client hears
// only an error. Each call of the lose func decides one attempt.
type lossy struct {
	mu sync.Mutex
	// lose says how the attempt's answer is lost: "" keeps it,
	// "after" applies the call and then answers with code, "during"
	// answers with code at once and applies the call in the background.
	plan []string
	code codes.Code
	ids  []string // each attempt's request_id
	bg   sync.WaitGroup
}

func (l *lossy) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	var id string
	switch r := req.(type) {
	case *hashlinev1.EditRequest:
		id = r.GetRequestId()
	case *hashlinev1.WriteRequest:
		id = r.GetRequestId()
	default:
		return handler(ctx, req)
	}
	l.mu.Lock()
	l.ids = append(l.ids, id)
	how := ""
	if len(l.plan) > 0 {
		how, l.plan = l.plan[0], l.plan[1:]
	}
	l.mu.Unlock()
	switch how {
	case "after":
		if _, err := handler(ctx, req); err != nil {
			return nil, err
		}
		return nil, status.Error(l.code, "the answer was lost")
	case "during":
		l.bg.Add(1)
		go func() {
			defer l.bg.Done()
			handler(context.WithoutCancel(ctx), req)
		}()
		return nil, status.Error(l.code, "the answer was lost")
	}
	return handler(ctx, req)
}

func (l *lossy) attempts() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ids...)
}

// lossyServer serves dir with the real service over bufconn, answers lost
// as l says, and returns a client for agent "a" with policy.
func lossyServer(t *testing.T, dir string, l *lossy, policy client.RetryPolicy) *client.Client {
	t.Helper()
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	gs, _ := server.NewGRPCServer(server.New(ws), server.GRPCConfig{
		ServerOptions: []grpc.ServerOption{grpc.ChainUnaryInterceptor(l.intercept)},
	})
	lis := bufconn.Listen(1 << 20)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	t.Cleanup(l.bg.Wait)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return client.New(conn, client.WithAgentID("a"), client.WithRetry(policy), client.WithTimeout(20*time.Second))
}

var quickRetry = client.RetryPolicy{MaxAttempts: 4, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Multiplier: 2}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestRetriedEditAndWriteApplyOnce(t *testing.T) {
	appendReq := func() *hashlinev1.EditRequest {
		return &hashlinev1.EditRequest{Path: "log.txt", Edits: []*hashlinev1.FileEdit{client.Append("one")}}
	}
	cases := []struct {
		name string
		plan []string
		code codes.Code
	}{
		{"an answer lost as UNAVAILABLE after the call applied", []string{"after"}, codes.Unavailable},
		{"an answer lost as DEADLINE_EXCEEDED after the call applied", []string{"after"}, codes.DeadlineExceeded},
		{"an answer lost while the call was still running", []string{"during"}, codes.Unavailable},
		{"two answers lost in a row", []string{"after", "after"}, codes.Unavailable},
	}
	for _, tc := range cases {
		t.Run("Edit: "+tc.name+" is retried and applied once", func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "log.txt"), []byte("start\n"), 0o644)
			l := &lossy{plan: tc.plan, code: tc.code}
			c := lossyServer(t, dir, l, quickRetry)
			req := appendReq()
			resp, err := c.Edit(context.Background(), req)
			if err != nil {
				t.Fatalf("Edit: %v", err)
			}
			l.bg.Wait()
			if b, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(b) != "start\none\n" {
				t.Fatalf("disk holds %q, want one append", b)
			}
			if resp.GetVersion() != workspace.Version([]byte("start\none\n")) {
				t.Errorf("the response's version %s is not the file's", resp.GetVersion())
			}
			ids := l.attempts()
			if len(ids) != len(tc.plan)+1 || !hex32.MatchString(ids[0]) {
				t.Fatalf("attempts carried request_ids %q; want %d attempts with a random key", ids, len(tc.plan)+1)
			}
			for _, id := range ids {
				if id != ids[0] {
					t.Fatalf("the retries changed the request_id: %q", ids)
				}
			}
			if req.GetRequestId() != "" {
				t.Errorf("the caller's request was changed: request_id %q", req.GetRequestId())
			}
		})
	}
	t.Run("Write: a create whose answer was lost is answered as created, not ALREADY_EXISTS", func(t *testing.T) {
		dir := t.TempDir()
		l := &lossy{plan: []string{"after"}, code: codes.Unavailable}
		c := lossyServer(t, dir, l, quickRetry)
		resp, err := c.Write(context.Background(), &hashlinev1.WriteRequest{Path: "new.txt", Content: "x\n", Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE})
		if err != nil {
			t.Fatalf("Write: %v", err)
		}
		if !resp.GetCreated() || len(l.attempts()) != 2 {
			t.Fatalf("resp %v after %d attempts; want created after 2", resp, len(l.attempts()))
		}
	})
	t.Run("without retries a lost answer is an error although the edit landed", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "log.txt"), []byte("start\n"), 0o644)
		l := &lossy{plan: []string{"after"}, code: codes.DeadlineExceeded}
		c := lossyServer(t, dir, l, client.RetryPolicy{})
		_, err := c.Edit(context.Background(), appendReq())
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("err = %v, want DEADLINE_EXCEEDED", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(b) != "start\none\n" {
			t.Fatalf("disk holds %q: the edit landed although the call failed", b)
		}
		if ids := l.attempts(); len(ids) != 1 || ids[0] != "" {
			t.Errorf("attempts carried request_ids %q; want one attempt without a key", ids)
		}
	})
	t.Run("a caller that retries itself with its own request_id applies once", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "log.txt"), []byte("start\n"), 0o644)
		l := &lossy{plan: []string{"after"}, code: codes.DeadlineExceeded}
		c := lossyServer(t, dir, l, client.RetryPolicy{})
		req := appendReq()
		req.RequestId = client.NewRequestID()
		if _, err := c.Edit(context.Background(), req); status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("err = %v, want the lost answer", err)
		}
		resp, err := c.Edit(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "log.txt")); string(b) != "start\none\n" {
			t.Fatalf("disk holds %q, want one append", b)
		}
		if resp.GetVersion() != workspace.Version([]byte("start\none\n")) {
			t.Errorf("the retry's version %s is not the file's", resp.GetVersion())
		}
	})
}

func TestNewRequestID(t *testing.T) {
	a, b := client.NewRequestID(), client.NewRequestID()
	if !hex32.MatchString(a) || a == b {
		t.Fatalf("NewRequestID gave %q and %q; want two different 32-digit hex keys", a, b)
	}
}
