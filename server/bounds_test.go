package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/server"
)

// errorInfo returns the ErrorInfo of a status error, or an empty one.
func errorInfo(err error) *hashlinev1.ErrorInfo {
	for _, d := range status.Convert(err).Details() {
		if ei, ok := d.(*hashlinev1.ErrorInfo); ok {
			return ei
		}
	}
	return &hashlinev1.ErrorInfo{}
}

// wantRefused checks a refusal's code, reason and ErrorInfo metadata.
func wantRefused(t *testing.T, err error, code codes.Code, reason hashlinev1.ErrorReason, meta map[string]string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("err = %v, want %v", err, code)
	}
	ei := errorInfo(err)
	if want := client.ReasonName(reason); ei.GetReason() != want {
		t.Errorf("reason %q, want %q (%v)", ei.GetReason(), want, err)
	}
	for k, v := range meta {
		if ei.GetMetadata()[k] != v {
			t.Errorf("metadata %s = %q, want %q (%v)", k, ei.GetMetadata()[k], v, ei.GetMetadata())
		}
	}
}

func asAgent(ctx context.Context, agent string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, client.AgentMetadataKey, agent)
}

// grepErr runs a Grep through the raw stub and returns its error.
func grepErr(ctx context.Context, rpc hashlinev1.FileServiceClient, req *hashlinev1.GrepRequest) error {
	st, err := rpc.Grep(ctx, req)
	if err != nil {
		return err
	}
	for {
		if _, err := st.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func TestGrepRequestsAreBounded(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", strings.Repeat("x", 100)+"\n")
	rpc := e.c.RPC()
	many := make([]string, engine.MaxGlobs+1)
	for i := range many {
		many[i] = fmt.Sprintf("*.%d", i)
	}
	long := []string{strings.Repeat("a", engine.MaxGlobBytes/2), strings.Repeat("b", engine.MaxGlobBytes/2+1)}
	limit := strconv.Itoa(engine.DefaultMaxPatternBytes)
	tests := []struct {
		name  string
		req   *hashlinev1.GrepRequest
		field string
		limit string
	}{
		{"a pattern one byte over the limit is refused", &hashlinev1.GrepRequest{Pattern: strings.Repeat("x", engine.DefaultMaxPatternBytes+1), Literal: true}, "pattern", limit},
		{"a megabyte pattern is refused before it is compiled", &hashlinev1.GrepRequest{Pattern: strings.Repeat("(a|b)", 200_000)}, "pattern", limit},
		{"too many globs are refused", &hashlinev1.GrepRequest{Pattern: "x", Glob: many}, "glob", strconv.Itoa(engine.MaxGlobs)},
		{"too many glob bytes are refused", &hashlinev1.GrepRequest{Pattern: "x", ExcludeGlob: long}, "excludeGlob", strconv.Itoa(engine.MaxGlobBytes)},
		{"too many types are refused", &hashlinev1.GrepRequest{Pattern: "x", Type: many}, "type", strconv.Itoa(engine.MaxGlobs)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := grepErr(e.ctx, rpc, tt.req)
			wantRefused(t, err, codes.InvalidArgument, server.ReasonInvalidArgument, map[string]string{"field": tt.field, "limit": tt.limit})
			if !strings.Contains(status.Convert(err).Message(), tt.limit) {
				t.Errorf("message %q does not name the limit %s", status.Convert(err).Message(), tt.limit)
			}
		})
	}
	t.Run("a pattern of exactly the limit is searched", func(t *testing.T) {
		files, _, err := e.grepAll(&hashlinev1.GrepRequest{Pattern: strings.Repeat("x", 100) + strings.Repeat("y?", (engine.DefaultMaxPatternBytes-100)/2)})
		if err != nil || len(files) != 1 {
			t.Fatalf("files %v, err %v", grepPaths(files), err)
		}
	})
	t.Run("a short pattern that compiles to a huge program is refused", func(t *testing.T) {
		// 70 alternatives of a thousand instructions each, in 800 bytes.
		var alts []string
		for i := range 70 {
			alts = append(alts, "[^"+string(rune('a'+i%26))+"]{1000}")
		}
		err := grepErr(e.ctx, rpc, &hashlinev1.GrepRequest{Pattern: strings.Join(alts, "|")})
		wantRefused(t, err, codes.InvalidArgument, server.ReasonInvalidPattern, nil)
	})
	t.Run("the limit is the server's to set", func(t *testing.T) {
		small := newEnv(t, engine.WithMaxPatternBytes(16))
		err := grepErr(small.ctx, small.c.RPC(), &hashlinev1.GrepRequest{Pattern: strings.Repeat("x", 17)})
		wantRefused(t, err, codes.InvalidArgument, server.ReasonInvalidArgument, map[string]string{"field": "pattern", "limit": "16"})
	})
}

func TestAgentIDIsBounded(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "x\n")
	rpc := e.c.RPC()
	atLimit := strings.Repeat("a", server.MaxAgentBytes)
	over := strings.Repeat("a", server.MaxAgentBytes+1)
	limit := map[string]string{"field": client.AgentMetadataKey, "limit": strconv.Itoa(server.MaxAgentBytes)}
	t.Run("an id of the limit is accepted and is the agent's identity", func(t *testing.T) {
		ctx := asAgent(e.ctx, atLimit)
		if _, err := rpc.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"}); err != nil {
			t.Fatal(err)
		}
		// Having read it, this agent may edit it.
		if _, err := rpc.Edit(ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag("x\n", 1), "", "y")}}); err != nil {
			t.Fatal(err)
		}
	})
	before := e.snapshot()
	t.Run("an id one byte longer is refused on a unary call", func(t *testing.T) {
		_, err := rpc.Write(asAgent(e.ctx, over), &hashlinev1.WriteRequest{Path: "a.txt", Content: "z\n"})
		wantRefused(t, err, codes.InvalidArgument, server.ReasonInvalidArgument, limit)
		if !strings.Contains(status.Convert(err).Message(), strconv.Itoa(server.MaxAgentBytes)) {
			t.Errorf("message %q does not name the limit", status.Convert(err).Message())
		}
	})
	t.Run("an id one byte longer is refused on a stream", func(t *testing.T) {
		wantRefused(t, grepErr(asAgent(e.ctx, over), rpc, &hashlinev1.GrepRequest{Pattern: "y"}), codes.InvalidArgument, server.ReasonInvalidArgument, limit)
	})
	t.Run("an id one byte longer is refused on a health check", func(t *testing.T) {
		_, err := healthpb.NewHealthClient(e.conn).Check(asAgent(e.ctx, over), &healthpb.HealthCheckRequest{})
		wantRefused(t, err, codes.InvalidArgument, server.ReasonInvalidArgument, limit)
	})
	e.assertUnchanged(before)
	if got := e.read("a.txt"); got != "y\n" {
		t.Errorf("a.txt = %q", got)
	}
	t.Run("with tokens the header is ignored, however long", func(t *testing.T) {
		a := newAuthEnv(t, server.GRPCConfig{})
		if _, err := a.c.RPC().Read(asAgent(withToken(a.ctx, readerToken), over), &hashlinev1.ReadRequest{Path: "src/a.go"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a token file's agent names are bounded alike", func(t *testing.T) {
		file := func(agent string) []byte {
			return []byte("tokens:\n  - token: " + writerToken + "\n    agent: " + agent + "\n    permission: write\n")
		}
		if _, err := server.ParseTokens(file(atLimit)); err != nil {
			t.Errorf("agent of the limit: %v", err)
		}
		if _, err := server.ParseTokens(file(over)); err == nil || !strings.Contains(err.Error(), strconv.Itoa(server.MaxAgentBytes)) {
			t.Errorf("agent over the limit: err = %v, want one naming the limit", err)
		}
	})
}

// Agents choose their names and paths: the memory of what each saw is
// bounded in bytes, not only in pairs, and the oldest pairs go first.
func TestViewTableIsBoundedInBytes(t *testing.T) {
	const maxBytes = 64 << 10
	e := newEnv(t, engine.WithViewBytes(maxBytes))
	e.write("a.txt", "x\n")
	rpc := e.c.RPC()
	agent := func(i int) string { return fmt.Sprintf("%04d-%s", i, strings.Repeat("a", server.MaxAgentBytes-5)) }
	const agents = 1000
	for i := range agents {
		if _, err := rpc.Read(asAgent(e.ctx, agent(i)), &hashlinev1.ReadRequest{Path: "a.txt"}); err != nil {
			t.Fatal(err)
		}
		if s := e.svc.Engine().ViewStats(); s.Bytes > maxBytes {
			t.Fatalf("after %d agents: %+v, over the bound", i+1, s)
		}
	}
	s := e.svc.Engine().ViewStats()
	perEntry := server.MaxAgentBytes + len("a.txt") + versions.ViewEntryOverhead
	if s.Entries > maxBytes/perEntry || s.Evictions != uint64(agents-s.Entries) {
		t.Fatalf("stats %+v: want at most %d entries, the rest evicted", s, maxBytes/perEntry)
	}
	edit := func(i int) error {
		_, err := rpc.Edit(asAgent(e.ctx, agent(i)), &hashlinev1.EditRequest{Path: "a.txt", DryRun: true, Edits: []*hashlinev1.FileEdit{client.Replace(tag("x\n", 1), "", "y")}})
		return err
	}
	if err := edit(0); reasonOf(err) != server.ReasonNotRead {
		t.Errorf("the first agent's view should be forgotten: %v", err)
	}
	if err := edit(agents - 1); err != nil {
		t.Errorf("the last agent's view should be kept: %v", err)
	}
}

// newStreamEnv is a server over bufconn (newMemEnv) whose handlers are
// waited for on stop, with a limit on streams per agent, and a raw client
// with fixed windows: without them grpc grows a stream's window on its own
// (BDP estimation), whether the application reads or not.
func newStreamEnv(t *testing.T, cfg server.GRPCConfig, opts ...engine.Option) (*server.Service, *grpc.ClientConn, string) {
	t.Helper()
	cfg.ServerOptions = append(cfg.ServerOptions, grpc.WaitForHandlers(true))
	e := newMemEnv(t, cfg, opts...)
	return e.svc, e.dial(t), e.root
}

// eventually waits for cond, failing after a generous bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStreamsPerAgentAreBounded(t *testing.T) {
	const perAgent = 16
	limiter := server.NewStreamLimiter(perAgent)
	_, conn, _ := newStreamEnv(t, server.GRPCConfig{StreamLimit: limiter})
	rpc := hashlinev1.NewFileServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// watch opens a Watch and waits until the server has subscribed it
	// (its headers come then), so that it holds its slot.
	watch := func(agent string) (context.CancelFunc, error) {
		wctx, stop := context.WithCancel(asAgent(ctx, agent))
		st, err := rpc.Watch(wctx, &hashlinev1.WatchRequest{})
		if err == nil {
			if _, err = st.Header(); err == nil {
				if md, _ := st.Header(); md == nil {
					_, err = st.Recv() // refused: the status comes alone
				}
			}
		}
		if err != nil {
			stop()
			return nil, err
		}
		return stop, nil
	}
	var stops []context.CancelFunc
	defer func() {
		for _, s := range stops {
			s()
		}
	}()
	for i := range perAgent {
		stop, err := watch("a")
		if err != nil {
			t.Fatalf("watch %d: %v", i+1, err)
		}
		stops = append(stops, stop)
	}
	if n := limiter.Open("a"); n != perAgent {
		t.Fatalf("%d streams open, want %d", n, perAgent)
	}
	limitMeta := map[string]string{"agent": "a", "limit": strconv.Itoa(perAgent)}
	t.Run("the next Watch of the agent is refused", func(t *testing.T) {
		_, err := watch("a")
		wantRefused(t, err, codes.ResourceExhausted, server.ReasonTooManyStreams, limitMeta)
	})
	t.Run("so is a Grep of the agent", func(t *testing.T) {
		wantRefused(t, grepErr(asAgent(ctx, "a"), rpc, &hashlinev1.GrepRequest{Pattern: "x"}), codes.ResourceExhausted, server.ReasonTooManyStreams, limitMeta)
	})
	t.Run("unary calls are not streams", func(t *testing.T) {
		if _, err := rpc.Write(asAgent(ctx, "a"), &hashlinev1.WriteRequest{Path: "n.txt", Content: "x\n"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("another agent is not limited by it", func(t *testing.T) {
		stop, err := watch("b")
		if err != nil {
			t.Fatal(err)
		}
		stop()
		if err := grepErr(asAgent(ctx, "b"), rpc, &hashlinev1.GrepRequest{Pattern: "x"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a stream that ends frees its slot", func(t *testing.T) {
		stops[0]()
		stops = stops[1:]
		eventually(t, "the cancelled Watch to end", func() bool { return limiter.Open("a") == perAgent-1 })
		stop, err := watch("a")
		if err != nil {
			t.Fatal(err)
		}
		stops = append(stops, stop)
	})
	t.Run("an agent with no stream open is forgotten", func(t *testing.T) {
		eventually(t, "b's streams to end", func() bool { return limiter.Open("b") == 0 })
	})
}

// costlyPattern makes the regexp take long over every line of "b"s: 25
// counted repetitions, 25,000 instructions, run over each byte, and no
// literal the search could skip lines by. A line matches only with a digit
// after a thousand bytes.
func costlyPattern() string {
	var alts []string
	for c := 'a'; c <= 'z'; c++ {
		if c != 'b' {
			alts = append(alts, "[^"+string(c)+"]{1000}")
		}
	}
	return "(?:" + strings.Join(alts, "|") + `)\pN`
}

type searched struct {
	sum grep.Summary
	err error
}

// A Grep its client cancels stops searching, even in the middle of a file
// the regexp would take minutes over, and its handler returns.
func TestGrepStopsWhenItsClientCancels(t *testing.T) {
	done := make(chan searched, 1)
	limiter := server.NewStreamLimiter(server.DefaultStreamsPerAgent)
	_, conn, root := newStreamEnv(t, server.GRPCConfig{StreamLimit: limiter},
		engine.WithGrepSearched(func(sum grep.Summary, err error) { done <- searched{sum, err} }))
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("0.txt", strings.Repeat("b", 1000)+"1\n") // the first file, and a match
	write("big.txt", strings.Repeat(strings.Repeat("b", 4095)+"\n", 2000))
	const small = 2000
	for i := range small {
		write(fmt.Sprintf("f/%04d.txt", i), "b\n")
	}
	ctx, cancel := context.WithCancel(asAgent(context.Background(), "a"))
	defer cancel()
	st, err := hashlinev1.NewFileServiceClient(conn).Grep(ctx, &hashlinev1.GrepRequest{Pattern: costlyPattern(), MaxMatches: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	first, err := st.Recv()
	if err != nil || first.GetFile().GetPath() != "0.txt" {
		t.Fatalf("first message %v, err %v; want 0.txt", first, err)
	}
	// The search is now inside big.txt, or past it among the small files.
	cancel()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.Canceled) {
			t.Errorf("search ended with %v, want context.Canceled", r.err)
		}
		if r.sum.FilesScanned > small/2 {
			t.Errorf("%d files scanned of %d after the cancel", r.sum.FilesScanned, small+2)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the search went on after its client cancelled")
	}
	eventually(t, "the handler to return", func() bool { return limiter.Open("a") == 0 })
}

// A Grep whose client does not read holds at most its bounded queue of
// results, and stops searching at its deadline though the client is still
// there; its handler returns once the client goes.
func TestGrepWhoseClientDoesNotRead(t *testing.T) {
	done := make(chan searched, 1)
	limiter := server.NewStreamLimiter(server.DefaultStreamsPerAgent)
	_, conn, root := newStreamEnv(t, server.GRPCConfig{StreamLimit: limiter, DefaultTimeout: 2 * time.Second},
		engine.WithGrepSearched(func(sum grep.Summary, err error) { done <- searched{sum, err} }))
	// Every file matches, and its message is about 4 KiB: far more than
	// the client's window and the send queue together.
	const files = 2000
	content := strings.Repeat("match "+strings.Repeat("x", 194)+"\n", 20)
	for i := range files {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("%04d.txt", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(asAgent(context.Background(), "a"))
	defer cancel()
	if _, err := hashlinev1.NewFileServiceClient(conn).Grep(ctx, &hashlinev1.GrepRequest{Pattern: "match", MaxMatches: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Errorf("search ended with %v, want its deadline", r.err)
		}
		// What was searched went out to the client (its window), waits in
		// the queue, or is the one file held while the queue is full.
		if r.sum.FilesScanned > files/4 {
			t.Errorf("%d of %d files searched for a client that reads nothing (queue of %d)", r.sum.FilesScanned, files, engine.GrepQueueLen)
		}
		t.Logf("%d files searched, queue of %d", r.sum.FilesScanned, engine.GrepQueueLen)
	case <-time.After(30 * time.Second):
		t.Fatal("the search did not stop at its deadline")
	}
	if n := limiter.Open("a"); n != 1 {
		t.Errorf("%d streams open; the handler waits for its blocked send", n)
	}
	cancel()
	eventually(t, "the handler to return", func() bool { return limiter.Open("a") == 0 })
}

// A Read whose caller has given up reads nothing and records nothing.
func TestReadOfACancelledCallDoesNoWork(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// In process: over gRPC a cancelled call never reaches the server.
	_, err := e.svc.Read(metadata.NewIncomingContext(ctx, metadata.Pairs(client.AgentMetadataKey, "gone")), &hashlinev1.ReadRequest{Path: "a.txt"})
	if status.Code(err) != codes.Canceled {
		t.Fatalf("err = %v, want CANCELED", err)
	}
	if s := e.svc.Engine().ViewStats(); s.Entries != 0 {
		t.Errorf("views %+v: a cancelled Read recorded what it did not show", s)
	}
}
