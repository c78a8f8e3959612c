package daemon

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// isolate gives the test a state home of its own: the place of every
// engine it starts is under it.
func isolate(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
}

func embed(t *testing.T, root string, args ...string) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := Embed(ctx, "test engine", append([]string{"--root", root, "--listen", "", "--log-level", "error"}, args...), io.Discard)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var stopped bool
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return wait()
	}
	t.Cleanup(func() { stop() })
	return stop
}

func TestASecondEngineOnARootIsRefusedNamingTheFirst(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	embed(t, root)
	// Another spelling of the root is the same workspace.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	_, err := Embed(t.Context(), "second", []string{"--root", link, "--listen", ""}, io.Discard)
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("a second engine: %v, want a HeldError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "test engine (pid "+strconv.Itoa(os.Getpid())+")") || !strings.Contains(msg, "attach to it") {
		t.Errorf("the refusal does not name the holder and what to do: %s", msg)
	}
}

func TestAttachFindsTheRunningEngine(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	embed(t, root)
	// No command to start one: Attach must use the running engine.
	c, err := Attach(t.Context(), root, Start{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Read(t.Context(), &hashlinev1.ReadRequest{Path: "f.txt"})
	if err != nil || len(r.GetLines()) != 1 {
		t.Fatalf("read through the attached engine: %v %v", r, err)
	}
}

func TestAttachWithNoEngineAndNoWayToStartOne(t *testing.T) {
	isolate(t)
	_, err := Attach(t.Context(), t.TempDir(), Start{Wait: time.Second})
	if err == nil || !strings.Contains(err.Error(), "no engine serves") {
		t.Fatalf("attach with nothing running: %v", err)
	}
	_, err = Attach(t.Context(), filepath.Join(t.TempDir(), "missing"), Start{})
	if !errors.As(err, new(*RootError)) {
		t.Fatalf("attach to a missing root: %v, want a RootError", err)
	}
}

// A socket file left by a crashed engine is never trusted: nothing holds
// the lock, so the next engine replaces it, and clients reach that one.
func TestAStaleSocketIsReplaced(t *testing.T) {
	isolate(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pl, err := locate(root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", pl.socket)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Stat(pl.socket); err != nil {
		t.Fatalf("the dead engine's socket file is not there: %v", err)
	}
	embed(t, root)
	c, err := Attach(t.Context(), root, Start{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Status(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// An engine with --idle-exit stops once its last client has gone, and
// not while one is connected; its place is then free for the next.
func TestAnIdleEngineStops(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait, err := Embed(ctx, "idle engine", []string{"--root", root, "--listen", "", "--idle-exit", "300ms", "--log-level", "error"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- wait() }()
	c, err := Attach(t.Context(), root, Start{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case err := <-stopped:
			t.Fatalf("the engine stopped with a client connected: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		if _, err := c.Status(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatalf("the idle engine: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the engine did not stop once idle")
	}
	embed(t, root) // the place is free
}

// The engine a daemon starts measures what its gRPC face sends: an Edit
// whose response would pass --max-response-bytes is refused TOO_LARGE
// before anything is written.
func TestTheResponseLimitHolds(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	var b strings.Builder
	for i := range 200 {
		b.WriteString("line " + strconv.Itoa(i) + " of a file whose full response is large\n")
	}
	path := filepath.Join(root, "f.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	embed(t, root, "--max-response-bytes", "4096")
	c, err := Attach(t.Context(), root, Start{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Read(t.Context(), &hashlinev1.ReadRequest{Path: "f.txt", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	first := r.GetLines()[0]
	ref := strconv.Itoa(int(first.GetNumber())) + ":" + first.GetHash()
	_, err = c.Edit(t.Context(), &hashlinev1.EditRequest{Path: "f.txt", Full: true, Edits: []*hashlinev1.FileEdit{
		{Op: &hashlinev1.FileEdit_Replace{Replace: &hashlinev1.ReplaceOp{Start: ref, Text: "changed"}}},
	}})
	if err == nil || !strings.Contains(err.Error(), "4096-byte limit") {
		t.Fatalf("a full Edit of 200 lines under a 4 KiB response limit: %v, want it refused", err)
	}
	if got, _ := os.ReadFile(path); string(got) != b.String() {
		t.Error("the refused Edit changed the file")
	}
}

func TestWorkspaceFlagNamesTheServerAndRefusesBadNames(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	for _, bad := range []string{"../alpha", "alpha.example.com", "Alpha", strings.Repeat("a", 64)} {
		_, err := Embed(t.Context(), "test engine", []string{"--root", root, "--listen", "", "--workspace", bad}, io.Discard)
		if err == nil || !strings.HasPrefix(err.Error(), "--workspace: ") {
			t.Errorf("--workspace %q: %v, want a refusal naming the flag", bad, err)
		}
	}
	embed(t, root, "--workspace", "alpha")
	c, err := Attach(t.Context(), root, Start{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st, err := c.Status(t.Context())
	if err != nil || st.GetWorkspace() != "alpha" {
		t.Fatalf("Status = %v, %v; want workspace alpha", st, err)
	}
}
