package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
)

// tableService is a Service whose engine has only what once needs: its
// request table (on a clock the test moves), which calls the hook waiting
// holds, if any, when a call starts waiting.
func tableService(ttl time.Duration, maxBytes int64) (*Service, *time.Time, *atomic.Pointer[func()]) {
	now := time.Unix(1000, 0)
	waiting := new(atomic.Pointer[func()])
	s := NewService(engine.New(nil, engine.WithRequestIDTTL(ttl), engine.WithRequestIDBytes(maxBytes),
		engine.WithClock(func() time.Time { return now }),
		engine.WithRequestWaiting(func() {
			if f := waiting.Load(); f != nil {
				(*f)()
			}
		})))
	return s, &now, waiting
}

func agentCtx(agent string) context.Context {
	return engine.WithAgent(context.Background(), agent)
}

func appendReq(id, text string) *hashlinev1.WriteRequest {
	return &hashlinev1.WriteRequest{Path: "a.txt", Content: text, RequestId: id}
}

// counter is a fake handler: it counts its runs and answers with a
// response naming the run, or with err.
type counter struct {
	runs atomic.Int32
	err  error
}

func (c *counter) call() (*hashlinev1.WriteResponse, error) {
	n := c.runs.Add(1)
	if c.err != nil {
		return nil, c.err
	}
	return &hashlinev1.WriteResponse{Path: "a.txt", Version: fmt.Sprint("v", n)}, nil
}

func reason(err error) hashlinev1.ErrorReason {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if ei, ok := d.(*hashlinev1.ErrorInfo); ok {
			return client.ParseReason(ei.GetReason())
		}
	}
	return hashlinev1.ErrorReason_ERROR_REASON_UNSPECIFIED
}

func TestRequestTable(t *testing.T) {
	aborted := &engine.VersionMismatchError{Path: "a.txt", Expected: "v0", Current: "v1", Hint: "read it again"}
	cases := []struct {
		name string
		// first and second are the two calls' outcomes when they run.
		firstErr  error
		second    *hashlinev1.WriteRequest
		agent2    string
		advance   time.Duration
		wantRuns  int32
		wantCode  codes.Code
		wantReply string // the version the second call returns
	}{
		{name: "a retry gets the first response and does not run again",
			second: appendReq("k", "x"), wantRuns: 1, wantReply: "v1"},
		{name: "a retry just before the TTL ends still gets the first response",
			second: appendReq("k", "x"), advance: 10*time.Minute - time.Nanosecond, wantRuns: 1, wantReply: "v1"},
		{name: "a retry once the TTL has passed runs again",
			second: appendReq("k", "x"), advance: 10 * time.Minute, wantRuns: 2, wantReply: "v2"},
		{name: "the same key with another request is refused without running",
			second: appendReq("k", "y"), wantRuns: 1, wantCode: codes.InvalidArgument},
		{name: "another key runs",
			second: appendReq("k2", "x"), wantRuns: 2, wantReply: "v2"},
		{name: "another agent with the same key runs",
			second: appendReq("k", "x"), agent2: "other", wantRuns: 2, wantReply: "v2"},
		{name: "a refusal is replayed as it was, not run again",
			firstErr: aborted, second: appendReq("k", "x"), wantRuns: 1, wantCode: codes.Aborted},
		{name: "a cancelled first call is forgotten, so the retry runs",
			firstErr: context.Canceled, second: appendReq("k", "x"), wantRuns: 2, wantCode: codes.Canceled},
		{name: "a first call out of time is forgotten, so the retry runs",
			firstErr: context.DeadlineExceeded, second: appendReq("k", "x"), wantRuns: 2, wantCode: codes.DeadlineExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, now, _ := tableService(10*time.Minute, 1<<20)
			c := &counter{err: tc.firstErr}
			req := appendReq("k", "x")
			first, ferr := once(agentCtx("a"), s, req, req.GetRequestId(), false, c.call)
			if tc.firstErr == nil && (ferr != nil || first.GetVersion() != "v1") {
				t.Fatalf("first call: %v, %v", first, ferr)
			}
			*now = now.Add(tc.advance)
			agent := "a"
			if tc.agent2 != "" {
				agent = tc.agent2
			}
			got, err := once(agentCtx(agent), s, tc.second, tc.second.GetRequestId(), false, c.call)
			if n := c.runs.Load(); n != tc.wantRuns {
				t.Errorf("the handler ran %d times, want %d", n, tc.wantRuns)
			}
			if status.Code(err) != tc.wantCode {
				t.Fatalf("second call: err = %v, want code %v", err, tc.wantCode)
			}
			if tc.wantCode == codes.InvalidArgument && reason(err) != ReasonRequestIDReused {
				t.Errorf("reason %q, want %s", reason(err), ReasonRequestIDReused)
			}
			if tc.firstErr != nil && tc.wantRuns == 1 && (ferr == nil || err.Error() != ferr.Error()) {
				t.Errorf("replayed error %v is not the first call's %v", err, ferr)
			}
			if tc.wantReply != "" && got.GetVersion() != tc.wantReply {
				t.Errorf("second call returned version %q, want %q", got.GetVersion(), tc.wantReply)
			}
			if tc.wantReply == "v1" && got == first {
				t.Error("the replay shares the first call's message; it must be a copy")
			}
		})
	}
}

func TestRequestTableRefusesAnEditAndAWriteUnderOneKey(t *testing.T) {
	// An EditRequest and a WriteRequest whose fields encode alike must not
	// pass for the same request: the replay would be of the wrong type.
	s, _, _ := tableService(time.Minute, 1<<20)
	c := &counter{}
	if _, err := once(agentCtx("a"), s, &hashlinev1.WriteRequest{Path: "a.txt", RequestId: "k"}, "k", false, c.call); err != nil {
		t.Fatal(err)
	}
	_, err := once(agentCtx("a"), s, &hashlinev1.EditRequest{Path: "a.txt", RequestId: "k"}, "k", false,
		func() (*hashlinev1.EditResponse, error) { return &hashlinev1.EditResponse{}, nil })
	if reason(err) != ReasonRequestIDReused {
		t.Fatalf("err = %v, want %s", err, ReasonRequestIDReused)
	}
}

func TestRequestTableBounds(t *testing.T) {
	t.Run("the byte budget forgets the oldest outcomes first", func(t *testing.T) {
		// Room for about three entries of this size.
		const budget = 3*engine.RequestEntryBytes + 200
		s, _, _ := tableService(time.Hour, budget)
		c := &counter{}
		for i := range 10 {
			req := appendReq(fmt.Sprint("k", i), "x")
			if _, err := once(agentCtx("a"), s, req, req.GetRequestId(), false, c.call); err != nil {
				t.Fatal(err)
			}
			n, b, _ := s.e.RequestStats()
			if b > budget || n > 3 {
				t.Fatalf("after %d calls: %d entries, %d bytes; budget %d bytes", i+1, n, b, budget)
			}
		}
		runs := c.runs.Load()
		// The newest is remembered, the oldest is not.
		newest := appendReq("k9", "x")
		if _, err := once(agentCtx("a"), s, newest, "k9", false, c.call); err != nil || c.runs.Load() != runs {
			t.Errorf("the newest outcome was forgotten (runs %d -> %d, err %v)", runs, c.runs.Load(), err)
		}
		oldest := appendReq("k0", "x")
		if _, err := once(agentCtx("a"), s, oldest, "k0", false, c.call); err != nil || c.runs.Load() != runs+1 {
			t.Errorf("the oldest outcome was kept past the budget (runs %d -> %d, err %v)", runs, c.runs.Load(), err)
		}
	})
	t.Run("expired outcomes are dropped and their bytes returned", func(t *testing.T) {
		s, now, _ := tableService(time.Minute, 1<<20)
		c := &counter{}
		for i := range 5 {
			req := appendReq(fmt.Sprint("k", i), "x")
			if _, err := once(agentCtx("a"), s, req, req.GetRequestId(), false, c.call); err != nil {
				t.Fatal(err)
			}
		}
		*now = now.Add(time.Minute)
		req := appendReq("new", "x")
		if _, err := once(agentCtx("a"), s, req, "new", false, c.call); err != nil {
			t.Fatal(err)
		}
		if n, b, _ := s.e.RequestStats(); n != 1 || b > 2*engine.RequestEntryBytes {
			t.Errorf("%d entries, %d bytes after the others expired; want only the new one", n, b)
		}
		if _, _, keys := s.e.RequestStats(); keys != 1 {
			t.Errorf("the key map holds %d entries, want 1", keys)
		}
	})
	t.Run("a request_id over the length bound is refused", func(t *testing.T) {
		s, _, _ := tableService(time.Minute, 1<<20)
		c := &counter{}
		id := strings.Repeat("k", engine.MaxRequestIDBytes+1)
		_, err := once(agentCtx("a"), s, appendReq(id, "x"), id, false, c.call)
		if status.Code(err) != codes.InvalidArgument || c.runs.Load() != 0 {
			t.Fatalf("err = %v after %d runs, want INVALID_ARGUMENT and no run", err, c.runs.Load())
		}
		id = strings.Repeat("k", engine.MaxRequestIDBytes)
		if _, err := once(agentCtx("a"), s, appendReq(id, "x"), id, false, c.call); err != nil {
			t.Fatalf("a request_id of exactly %d bytes: %v", engine.MaxRequestIDBytes, err)
		}
	})
	t.Run("a dry run is never remembered", func(t *testing.T) {
		s, _, _ := tableService(time.Minute, 1<<20)
		c := &counter{}
		for range 2 {
			if _, err := once(agentCtx("a"), s, appendReq("k", "x"), "k", true, c.call); err != nil {
				t.Fatal(err)
			}
		}
		if c.runs.Load() != 2 {
			t.Errorf("two dry runs ran %d times", c.runs.Load())
		}
		if n, _, keys := s.e.RequestStats(); n != 0 || keys != 0 {
			t.Errorf("the table holds %d entries after dry runs", n)
		}
	})
}

func TestRequestTableConcurrentDuplicates(t *testing.T) {
	s, _, waiting := tableService(time.Minute, 1<<20)
	var runs atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	call := func() (*hashlinev1.WriteResponse, error) {
		if runs.Add(1) == 1 {
			close(started)
		}
		<-release
		return &hashlinev1.WriteResponse{Version: fmt.Sprint("v", runs.Load())}, nil
	}
	const n = 16
	var waiters sync.WaitGroup
	waiters.Add(n - 1)
	waiting.Store(ptr(waiters.Done))
	var wg sync.WaitGroup
	got := make([]string, n)
	errs := make([]error, n)
	first := func(i int) {
		defer wg.Done()
		resp, err := once(agentCtx("a"), s, appendReq("k", "x"), "k", false, call)
		got[i], errs[i] = resp.GetVersion(), err
	}
	wg.Add(1)
	go first(0)
	<-started // the first call is running: every other one must wait for it
	for i := 1; i < n; i++ {
		wg.Add(1)
		go first(i)
	}
	waiters.Wait() // every duplicate is waiting for the first call
	close(release)
	wg.Wait()
	if r := runs.Load(); r != 1 {
		t.Fatalf("the handler ran %d times for %d duplicates", r, n)
	}
	for i := range n {
		if errs[i] != nil || got[i] != "v1" {
			t.Errorf("call %d: %q, %v; want v1", i, got[i], errs[i])
		}
	}
}

func TestRequestTableWaiting(t *testing.T) {
	t.Run("a duplicate that runs out of time while the first runs says so and leaves it running", func(t *testing.T) {
		s, _, waiting := tableService(time.Minute, 1<<20)
		release := make(chan struct{})
		started := make(chan struct{})
		var runs atomic.Int32
		call := func() (*hashlinev1.WriteResponse, error) {
			runs.Add(1)
			close(started)
			<-release
			return &hashlinev1.WriteResponse{Version: "v1"}, nil
		}
		done := make(chan error)
		go func() {
			_, err := once(agentCtx("a"), s, appendReq("k", "x"), "k", false, call)
			done <- err
		}()
		<-started
		ctx, cancel := context.WithCancel(agentCtx("a"))
		waiting.Store(ptr(cancel)) // give up once waiting
		defer func() { waiting.Store(nil) }()
		_, err := once(ctx, s, appendReq("k", "x"), "k", false, call)
		if status.Code(err) != codes.Canceled || !strings.Contains(status.Convert(err).Message(), "still running") {
			t.Fatalf("err = %v, want CANCELLED saying the first call is still running", err)
		}
		waiting.Store(nil)
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		resp, err := once(agentCtx("a"), s, appendReq("k", "x"), "k", false, call)
		if err != nil || resp.GetVersion() != "v1" || runs.Load() != 1 {
			t.Fatalf("after the first call finished: %v, %v, %d runs; want v1 from one run", resp, err, runs.Load())
		}
	})
	t.Run("a duplicate waiting for a first call that wrote nothing runs in its place", func(t *testing.T) {
		s, _, waiting := tableService(time.Minute, 1<<20)
		release := make(chan struct{})
		started := make(chan struct{})
		var runs atomic.Int32
		call := func() (*hashlinev1.WriteResponse, error) {
			if runs.Add(1) == 1 {
				close(started)
				<-release
				return nil, context.DeadlineExceeded
			}
			return &hashlinev1.WriteResponse{Version: "v2"}, nil
		}
		go once(agentCtx("a"), s, appendReq("k", "x"), "k", false, call)
		<-started
		isWaiting := make(chan struct{})
		waiting.Store(ptr(func() { close(isWaiting) }))
		waited := make(chan *hashlinev1.WriteResponse)
		go func() {
			resp, _ := once(agentCtx("a"), s, appendReq("k", "x"), "k", false, call)
			waited <- resp
		}()
		<-isWaiting
		waiting.Store(nil)
		close(release)
		if resp := <-waited; resp.GetVersion() != "v2" || runs.Load() != 2 {
			t.Fatalf("got %v after %d runs; want v2 from the second run", resp, runs.Load())
		}
	})
	t.Run("a call that panics is remembered as an internal error", func(t *testing.T) {
		s, _, _ := tableService(time.Minute, 1<<20)
		var runs atomic.Int32
		call := func() (*hashlinev1.WriteResponse, error) {
			runs.Add(1)
			panic("boom")
		}
		func() {
			defer func() { _ = recover() }()
			_, _ = once(agentCtx("a"), s, appendReq("k", "x"), "k", false, call)
		}()
		_, err := once(agentCtx("a"), s, appendReq("k", "x"), "k", false, call)
		if status.Code(err) != codes.Internal || runs.Load() != 1 {
			t.Fatalf("retry after a panic: %v after %d runs; want INTERNAL without running again", err, runs.Load())
		}
	})
}

func TestRequestSumCountsEveryField(t *testing.T) {
	// Every field of the request counts: a retry must be the same request.
	base := &hashlinev1.EditRequest{Path: "a", Edits: []*hashlinev1.FileEdit{{Op: &hashlinev1.FileEdit_Append{Append: &hashlinev1.TextOp{Text: "x"}}}}, RequestId: "k"}
	sum := requestSum(base)
	three := int32(3)
	for name, change := range map[string]func(*hashlinev1.EditRequest){
		"path":         func(r *hashlinev1.EditRequest) { r.Path = "b" },
		"edit text":    func(r *hashlinev1.EditRequest) { r.Edits[0].GetAppend().Text = "y" },
		"base version": func(r *hashlinev1.EditRequest) { r.BaseVersion = "v" },
		"full":         func(r *hashlinev1.EditRequest) { r.Full = true },
		"context":      func(r *hashlinev1.EditRequest) { r.Context = &three },
		"context set to its default": func(r *hashlinev1.EditRequest) {
			zero := int32(0)
			r.Context = &zero
		},
		"the operation": func(r *hashlinev1.EditRequest) {
			r.Edits[0] = &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_Prepend{Prepend: &hashlinev1.TextOp{Text: "x"}}}
		},
		"an edit more": func(r *hashlinev1.EditRequest) {
			r.Edits = append(r.Edits, &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_Append{Append: &hashlinev1.TextOp{}}})
		},
		"text moved between fields": func(r *hashlinev1.EditRequest) {
			r.Path, r.Edits[0].GetAppend().Text = "ax", ""
		},
		"text that is not UTF-8": func(r *hashlinev1.EditRequest) { r.Edits[0].GetAppend().Text = "\xff" },
	} {
		r := proto.CloneOf(base)
		change(r)
		if requestSum(r) == sum {
			t.Errorf("changing %s left the request's sum alike", name)
		}
	}
	if requestSum(proto.CloneOf(base)) != sum {
		t.Error("a copy of the request has another sum")
	}
}

// BenchmarkRequestID is what a request_id adds to a call: hashing the
// request and a trip through the table, for a one-line edit and for a
// Write of a 2.8 MB file.
func BenchmarkRequestID(b *testing.B) {
	edit := &hashlinev1.EditRequest{Path: "src/main.go", Edits: []*hashlinev1.FileEdit{{Op: &hashlinev1.FileEdit_Replace{Replace: &hashlinev1.ReplaceOp{Start: "50:3f", Text: "\tvalue049 := 1"}}}}}
	write := &hashlinev1.WriteRequest{Path: "big.txt", Content: strings.Repeat("a line of about forty bytes of text....\n", 70_000)}
	for _, tc := range []struct {
		name string
		req  interface {
			proto.Message
			GetRequestId() string
		}
		set func(string)
	}{
		{"edit", edit, func(id string) { edit.RequestId = id }},
		{"write 2.8MB", write, func(id string) { write.RequestId = id }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, _, _ := tableService(time.Minute, engine.DefaultRequestIDBytes)
			ctx := agentCtx("a")
			resp := &hashlinev1.WriteResponse{Path: "x", Version: "v2-0123456789abcdef0123456789abcdef"}
			i := 0
			for b.Loop() {
				i++
				tc.set(fmt.Sprint(i))
				if _, err := once(ctx, s, tc.req, tc.req.GetRequestId(), false, func() (*hashlinev1.WriteResponse, error) { return resp, nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ptr(f func()) *func() { return &f }
