package server_test

import (
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

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// waitFor bounds every wait of these tests.
const waitFor = 10 * time.Second

// watchEnv is a server over bufconn that, unlike newEnv's, waits for its
// handlers on stop and can be shut down gracefully by a test.
type watchEnv struct {
	t    *testing.T
	root string
	svc  *server.Service
	gs   *grpc.Server
	lis  *bufconn.Listener
	rpc  hashlinev1.FileServiceClient // calls as agent "agent-x"
	c    *client.Client               // the same, through the client package
	ctx  context.Context
}

func newWatchEnv(t *testing.T, opts ...engine.Option) *watchEnv {
	t.Helper()
	root := t.TempDir()
	ws, err := workspace.Open(root, workspace.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	svc := server.New(ws, append([]engine.Option{engine.WithWatchDebounce(10 * time.Millisecond)}, opts...)...)
	gs, _ := server.NewGRPCServer(svc, server.GRPCConfig{
		DefaultTimeout: 30 * time.Second,
		ServerOptions:  []grpc.ServerOption{grpc.WaitForHandlers(true)},
	})
	lis := bufconn.Listen(1 << 20)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	e := &watchEnv{t: t, root: root, svc: svc, gs: gs, lis: lis}
	t.Cleanup(func() {
		svc.Engine().Shutdown()
		gs.Stop()
		<-served
		// Every stream has ended, so the file-system watcher must be gone.
		if subs, watching := svc.Engine().WatchState(); subs != 0 || watching {
			t.Errorf("after stop: %d subscribers, file-system watcher running %v", subs, watching)
		}
		ws.Close()
	})
	conn := e.dial()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	e.ctx = metadata.AppendToOutgoingContext(ctx, client.AgentMetadataKey, "agent-x")
	e.rpc = hashlinev1.NewFileServiceClient(conn)
	e.c = client.New(conn, client.WithAgentID("agent-x"))
	return e
}

func (e *watchEnv) dial(opts ...grpc.DialOption) *grpc.ClientConn {
	e.t.Helper()
	conn, err := grpc.NewClient("passthrough:///bufnet", append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return e.lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	}, opts...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	return conn
}

// writeFile changes a file behind the server's back.
func (e *watchEnv) writeFile(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return workspace.Version([]byte(content))
}

// events is an open Watch stream whose events are read into a channel.
type events struct {
	t      *testing.T
	ch     chan *hashlinev1.WatchResponse
	err    chan error
	cancel context.CancelFunc
}

// watch opens a stream and returns once the server says it is live.
func (e *watchEnv) watch(path string) *events {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	e.t.Cleanup(cancel)
	st, err := e.rpc.Watch(ctx, &hashlinev1.WatchRequest{Path: path})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := st.Header(); err != nil {
		e.t.Fatalf("Watch %q: %v", path, err)
	}
	w := &events{t: e.t, ch: make(chan *hashlinev1.WatchResponse, 10000), err: make(chan error, 1), cancel: cancel}
	go func() {
		for {
			ev, err := st.Recv()
			if err != nil {
				w.err <- err
				return
			}
			w.ch <- ev
		}
	}()
	return w
}

// next returns the next event.
func (w *events) next() *hashlinev1.WatchResponse {
	w.t.Helper()
	select {
	case ev := <-w.ch:
		return ev
	case err := <-w.err:
		w.t.Fatalf("stream ended: %v", err)
	case <-time.After(waitFor):
		w.t.Fatal("no event within the time limit")
	}
	return nil
}

// until returns the first event for path with version want, checking
// that the ones before it (an external write can be seen half done) are
// for the same path and chain up from version from.
func (w *events) until(path, from, want string) *hashlinev1.WatchResponse {
	w.t.Helper()
	for {
		ev := w.next()
		if ev.GetPath() != path || ev.GetOldVersion() != from {
			w.t.Fatalf("event %v: want %s changing from version %q", ev, path, from)
		}
		if ev.GetNewVersion() == want {
			return ev
		}
		from = ev.GetNewVersion()
	}
}

// end returns the error the stream ended with.
func (w *events) end() error {
	w.t.Helper()
	for {
		select {
		case <-w.ch:
		case err := <-w.err:
			return err
		case <-time.After(waitFor):
			w.t.Fatal("the stream did not end within the time limit")
			return nil
		}
	}
}

func ranges(ev *hashlinev1.WatchResponse) string {
	var b []string
	for _, r := range ev.GetChanged() {
		b = append(b, fmt.Sprintf("-%d,%d +%d,%d", r.GetOldStart(), r.GetOldCount(), r.GetNewStart(), r.GetNewCount()))
	}
	return strings.Join(b, " ")
}

func TestWatchEditAndWrite(t *testing.T) {
	e := newWatchEnv(t)
	w := e.watch("")
	const kCreated, kModified = hashlinev1.WatchEventKind_WATCH_EVENT_KIND_CREATED, hashlinev1.WatchEventKind_WATCH_EVENT_KIND_MODIFIED

	wr, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "src/a.txt", Content: "one\ntwo\nthree\n"})
	if err != nil {
		t.Fatal(err)
	}
	ev := w.next()
	check := func(what string, ev *hashlinev1.WatchResponse, kind hashlinev1.WatchEventKind, oldV, newV, changed string) {
		t.Helper()
		if ev.GetPath() != "src/a.txt" || ev.GetKind() != kind || ev.GetAgent() != "agent-x" || ev.GetExternal() ||
			ev.GetOldVersion() != oldV || ev.GetNewVersion() != newV || ranges(ev) != changed || ev.GetDropped() != 0 || ev.GetTime().AsTime().IsZero() {
			t.Errorf("%s: event %v\nwant src/a.txt %v by agent-x, %q -> %q, changed %q", what, ev, kind, oldV, newV, changed)
		}
	}
	check("Write creating the file", ev, kCreated, "", wr.GetVersion(), "-0,0 +1,3")

	r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "src/a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	er, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "src/a.txt", Edits: []*hashlinev1.FileEdit{
		client.Replace(client.Ref(r.GetLines()[1]), "", "TWO\nTWO-B"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	check("Edit replacing line 2 with two lines", w.next(), kModified, wr.GetVersion(), er.GetVersion(), "-2,1 +2,2")

	wr2, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "src/a.txt", Content: "one\nTWO\nTWO-B\nthree\nfour\n"})
	if err != nil {
		t.Fatal(err)
	}
	check("Write appending a line", w.next(), kModified, er.GetVersion(), wr2.GetVersion(), "-4,0 +5,1")

	// The file-system watcher saw those writes too; none may come back as
	// external. A later external change to a path sorting after it is
	// reported after any such echo would be, so it is the next event.
	v := e.writeFile("zz-sentinel.txt", "x\n")
	if ev := w.next(); ev.GetPath() != "zz-sentinel.txt" || ev.GetNewVersion() != v {
		t.Errorf("the server's own write was reported again: %v", ev)
	}

	// A dry run writes nothing and publishes nothing (until fails on any
	// event for another path).
	if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "src/a.txt", DryRun: true, Edits: []*hashlinev1.FileEdit{client.Append("five")}}); err != nil {
		t.Fatal(err)
	}
	w.until("zz-sentinel.txt", v, e.writeFile("zz-sentinel.txt", "y\n"))
}

func TestWatchPrefix(t *testing.T) {
	e := newWatchEnv(t)
	for _, tc := range []struct {
		name, prefix string
		writes       []string // in order; only the last must be reported
	}{
		{"a directory does not match a sibling sharing its name as a prefix", "a", []string{"ab/x.txt", "b.txt", "a/x.txt"}},
		{"a file does not match its neighbours", "a/x.txt", []string{"a/y.txt", "a/x.txt2", "a/x.txt"}},
		{"a deep directory gets what is under it", "a/b", []string{"a/x.txt", "a/bc/x.txt", "a/b/c/d.txt"}},
		{"a trailing slash and dots are cleaned", "./a/b/", []string{"a/bb.txt", "a/b/e.txt"}},
		{"the empty path gets everything", "", []string{"top.txt"}},
		{"a path that does not exist yet can be watched", "later", []string{"late.txt", "later/x.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := e.watch(tc.prefix)
			defer w.cancel()
			var last *hashlinev1.WriteResponse
			for i, p := range tc.writes {
				r, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: p, Content: fmt.Sprintf("%s %d\n", tc.name, i)})
				if err != nil {
					t.Fatal(err)
				}
				last = r
			}
			if ev := w.next(); ev.GetPath() != last.GetPath() || ev.GetNewVersion() != last.GetVersion() {
				t.Errorf("first event %v, want the write to %s", ev, last.GetPath())
			}
		})
	}
}

func TestWatchSymlinkedPaths(t *testing.T) {
	e := newWatchEnv(t)
	e.writeFile("real/f.txt", "a\n")
	if err := os.Symlink("real", filepath.Join(e.root, "alias")); err != nil {
		t.Fatal(err)
	}
	w := e.watch("alias") // a link to a directory watches its target
	wr, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "alias/f.txt", Content: "b\n"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := w.next(); ev.GetPath() != "real/f.txt" || ev.GetNewVersion() != wr.GetVersion() || ev.GetExternal() {
		t.Errorf("event %v: a write through a link is reported under the file's real path", ev)
	}
}

func TestWatchExternal(t *testing.T) {
	e := newWatchEnv(t)
	w := e.watch("")
	const (
		kCreated  = hashlinev1.WatchEventKind_WATCH_EVENT_KIND_CREATED
		kModified = hashlinev1.WatchEventKind_WATCH_EVENT_KIND_MODIFIED
		kDeleted  = hashlinev1.WatchEventKind_WATCH_EVENT_KIND_DELETED
	)
	isExternal := func(what string, ev *hashlinev1.WatchResponse, kind hashlinev1.WatchEventKind) {
		t.Helper()
		if !ev.GetExternal() || ev.GetAgent() != "" || ev.GetKind() != kind {
			t.Errorf("%s: event %v, want an external %v with no agent", what, ev, kind)
		}
	}

	v1 := e.writeFile("ext.txt", "one\ntwo\n")
	ev := w.until("ext.txt", "", v1)
	isExternal("a file created by another process", ev, kCreated)

	v2 := e.writeFile("ext.txt", "one\n2\n")
	ev = w.until("ext.txt", v1, v2)
	isExternal("the file modified by another process", ev, kModified)
	if ev.GetOldVersion() == v1 && ranges(ev) != "-2,1 +2,1" {
		t.Errorf("external modify: changed %q, want -2,1 +2,1 (the server knew the old content)", ranges(ev))
	}

	if err := os.Remove(filepath.Join(e.root, "ext.txt")); err != nil {
		t.Fatal(err)
	}
	ev = w.until("ext.txt", v2, "")
	isExternal("the file removed", ev, kDeleted)

	// The server reads a file another process changed with the version
	// recomputed from the bytes, and an edit on top chains from it.
	v3 := e.writeFile("ext.txt", "alpha\nbeta\n")
	w.until("ext.txt", "", v3)
	r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "ext.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetVersion() != v3 {
		t.Fatalf("Read version %s, want the event's %s", r.GetVersion(), v3)
	}
	er, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "ext.txt", Edits: []*hashlinev1.FileEdit{client.Delete(client.Ref(r.GetLines()[0]), "")}})
	if err != nil {
		t.Fatal(err)
	}
	if ev := w.next(); ev.GetExternal() || ev.GetOldVersion() != v3 || ev.GetNewVersion() != er.GetVersion() || ranges(ev) != "-1,1 +0,0" {
		t.Errorf("edit after an external change: event %v, want %s -> %s, -1,1 +0,0", ev, v3, er.GetVersion())
	}
}

func TestWatchNewDirectoryIsWatched(t *testing.T) {
	e := newWatchEnv(t)
	w := e.watch("")
	if err := os.MkdirAll(filepath.Join(e.root, "made", "later"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Written at once: the file may land before the new directory is
	// watched, and must be reported all the same.
	v := e.writeFile("made/later/first.txt", "1\n")
	ev := w.until("made/later/first.txt", "", v)
	if ev.GetKind() != hashlinev1.WatchEventKind_WATCH_EVENT_KIND_CREATED || !ev.GetExternal() {
		t.Errorf("event %v, want an external CREATED", ev)
	}
	// And a file written well after is seen through the new watch.
	v = e.writeFile("made/later/second.txt", "2\n")
	w.until("made/later/second.txt", "", v)
}

func TestWatchExternalBinaryFile(t *testing.T) {
	e := newWatchEnv(t)
	w := e.watch("")
	v := e.writeFile("blob.bin", "a\x00b")
	if ev := w.until("blob.bin", "", v); len(ev.GetChanged()) != 0 {
		t.Errorf("a binary file has no line ranges, got %v", ev.GetChanged())
	}
}

func TestWatchSlowSubscriber(t *testing.T) {
	e := newWatchEnv(t, engine.WithWatchBuffer(8))
	// A small, fixed flow-control window: once the client stops reading,
	// the server's Send blocks and events pile up in the server's queue.
	conn := e.dial(grpc.WithInitialWindowSize(64<<10), grpc.WithInitialConnWindowSize(64<<10))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	st, err := hashlinev1.NewFileServiceClient(conn).Watch(ctx, &hashlinev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Header(); err != nil {
		t.Fatal(err)
	}
	// Nobody reads the stream while these are written; they must all go
	// through (publishing never waits for a subscriber).
	const writes = 800
	long := strings.Repeat("x", 200)
	done := make(chan *hashlinev1.WriteResponse)
	go func() {
		var last *hashlinev1.WriteResponse
		for i := range writes {
			r, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "hot/" + long, Content: fmt.Sprintf("%d\n", i)})
			if err != nil {
				t.Error(err)
				break
			}
			last = r
		}
		done <- last
	}()
	var last *hashlinev1.WriteResponse
	select {
	case last = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("writers blocked behind a subscriber that does not read")
	}
	var got, dropped int64
	for {
		ev, err := st.Recv()
		if err != nil {
			t.Fatalf("after %d events: %v", got, err)
		}
		got++
		dropped += ev.GetDropped()
		if ev.GetNewVersion() == last.GetVersion() {
			break // the newest change is kept: only the oldest are dropped
		}
	}
	if dropped == 0 || got+dropped != writes {
		t.Errorf("received %d events and were told of %d dropped; want some dropped and %d in all", got, dropped, writes)
	}
	t.Logf("%d writes: %d delivered, %d dropped", writes, got, dropped)
}

func TestWatchCancelEndsStream(t *testing.T) {
	e := newWatchEnv(t)
	w1 := e.watch("")
	w2 := e.watch("sub")
	if subs, watching := e.svc.Engine().WatchState(); subs != 2 || !watching {
		t.Fatalf("with two streams: %d subscribers, watching %v", subs, watching)
	}
	w1.cancel()
	if err := w1.end(); !errors.Is(err, context.Canceled) && status.Code(err) != codes.Canceled {
		t.Errorf("cancelled stream ended with %v, want CANCELED", err)
	}
	waitState(t, e.svc, 1, true)
	w2.cancel()
	w2.end()
	// The last stream gone, the file-system watcher stops.
	waitState(t, e.svc, 0, false)
	// And starts again for the next one, external changes included.
	w3 := e.watch("")
	v := e.writeFile("again.txt", "x\n")
	w3.until("again.txt", "", v)
}

func waitState(t *testing.T, svc *server.Service, subs int, watching bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		s, w := svc.Engine().WatchState()
		if s == subs && w == watching {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch state %d subscribers, watching %v; want %d, %v", s, w, subs, watching)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWatchShutdownEndsStreams(t *testing.T) {
	e := newWatchEnv(t)
	w := e.watch("")
	stopped := make(chan struct{})
	go func() {
		e.svc.Engine().Shutdown()
		e.gs.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(waitFor):
		t.Fatal("GracefulStop hung on an open Watch stream")
	}
	err := w.end()
	var ce *client.Error
	if !errors.As(client.FromStatus(err), &ce) || ce.Code != codes.Unavailable || ce.Reason != client.ReasonName(server.ReasonShuttingDown) {
		t.Errorf("stream ended with %v, want UNAVAILABLE SHUTTING_DOWN", err)
	}
}

func TestWatchAfterShutdownIsRefused(t *testing.T) {
	e := newWatchEnv(t)
	e.svc.Engine().Shutdown()
	st, err := e.rpc.Watch(e.ctx, &hashlinev1.WatchRequest{})
	if err == nil {
		_, err = st.Recv()
	}
	var ce *client.Error
	if !errors.As(client.FromStatus(err), &ce) || ce.Reason != client.ReasonName(server.ReasonShuttingDown) {
		t.Errorf("Watch after Shutdown: %v, want SHUTTING_DOWN", err)
	}
}

func TestWatchBadPath(t *testing.T) {
	e := newWatchEnv(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(e.root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e.root, ".git", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(e.root, "g")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		code       codes.Code
		reason     hashlinev1.ErrorReason
	}{
		{"dot-dot out of the root", "../x", codes.PermissionDenied, server.ReasonOutsideRoot},
		{"an absolute path outside the root", outside, codes.PermissionDenied, server.ReasonOutsideRoot},
		{"a symlink out of the root", "escape/x", codes.PermissionDenied, server.ReasonOutsideRoot},
		{"a NUL byte", "a\x00b", codes.InvalidArgument, server.ReasonInvalidPath},
		{"version-control metadata", ".git", codes.PermissionDenied, server.ReasonVCSMetadata},
		{"version-control metadata through a link", "g/refs", codes.PermissionDenied, server.ReasonVCSMetadata},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := e.rpc.Watch(e.ctx, &hashlinev1.WatchRequest{Path: tc.path})
			if err == nil {
				_, err = st.Recv()
			}
			if err == io.EOF {
				t.Fatal("stream ended without an error")
			}
			var ce *client.Error
			if !errors.As(client.FromStatus(err), &ce) || ce.Code != tc.code || ce.Reason != client.ReasonName(tc.reason) {
				t.Errorf("Watch(%q) = %v, want %v %s", tc.path, err, tc.code, tc.reason)
			}
		})
	}
	if subs, _ := e.svc.Engine().WatchState(); subs != 0 {
		t.Errorf("refused watches left %d subscribers", subs)
	}
}

func TestWatchOutlivesTheDefaultDeadline(t *testing.T) {
	e := newEnvConfig(t, server.GRPCConfig{DefaultTimeout: 100 * time.Millisecond}, nil)
	ctx, cancel := context.WithCancel(context.Background()) // no deadline of its own
	defer cancel()
	defer time.AfterFunc(waitFor, cancel).Stop() // but bounded all the same
	st, err := hashlinev1.NewFileServiceClient(e.conn).Watch(ctx, &hashlinev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Header(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // past the default deadline
	wr, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "late.txt", Content: "x\n"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := st.Recv()
	if err != nil || ev.GetNewVersion() != wr.GetVersion() {
		t.Fatalf("Recv = %v, %v; want the write's event: the default deadline must not cut Watch streams", ev, err)
	}
}

func TestWatchOldContentFromTheSnapshotCache(t *testing.T) {
	e := newWatchEnv(t)
	other := e.watch("other") // the hub is listening, but not for f.txt
	wr, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "a\nb\nc\n"})
	if err != nil {
		t.Fatal(err)
	}
	// Nobody watched f.txt when it was written, so the hub kept only its
	// version; the content of that version is in the snapshot cache. (The
	// file-system watcher's echo of the write is handled before the
	// sentinel, which sorts after f.txt, while still nobody watches f.txt.)
	other.until("other/sentinel", "", e.writeFile("other/sentinel", "s\n"))
	w := e.watch("f.txt")
	v := e.writeFile("f.txt", "a\nB\nc\n")
	ev := w.until("f.txt", wr.GetVersion(), v)
	if ranges(ev) != "-2,1 +2,1" {
		t.Errorf("external change from a cached version: changed %q, want -2,1 +2,1", ranges(ev))
	}
	other.cancel()
}
