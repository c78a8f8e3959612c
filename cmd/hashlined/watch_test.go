package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// An open Watch stream must not hold up a graceful shutdown: SIGTERM ends
// it with UNAVAILABLE (SHUTTING_DOWN) and the process exits well within
// the grace period.
func TestSIGTERMEndsWatchStreams(t *testing.T) {
	root := t.TempDir()
	cmd, addr := start(t, nil, "--root", root, "--listen", "127.0.0.1:0", "--shutdown-grace", "30s")
	c, ctx := dial(t, addr, client.WithAgentID("watcher"))

	st, err := c.RPC().Watch(ctx, &hashlinev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Header(); err != nil {
		t.Fatal(err)
	}
	// The stream is live: an external change comes through the real
	// file-system watcher.
	if err := os.WriteFile(filepath.Join(root, "x.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ev, err := st.Recv(); err != nil || ev.GetPath() != "x.txt" || !ev.GetExternal() {
		t.Fatalf("Recv = %v, %v; want the external change of x.txt", ev, err)
	}

	began := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_, err = st.Recv()
	var ce *client.Error
	if !errors.As(client.FromStatus(err), &ce) || ce.Reason != "SHUTTING_DOWN" {
		t.Errorf("stream ended with %v, want reason SHUTTING_DOWN", err)
	}
	waitExit(t, cmd, 20*time.Second, "after SIGTERM with a Watch stream open")
	if d := time.Since(began); d > 15*time.Second {
		t.Errorf("shutdown took %v: it waited on the Watch stream", d)
	}
}

// A token file reload through SIGHUP reaches the Watch streams already
// open: the stream of a removed token ends UNAUTHENTICATED, the stream of a
// token narrowed away from its path ends PERMISSION_DENIED, and the stream
// of a token still in the file goes on.
func TestSIGHUPReloadEndsRevokedWatchStreams(t *testing.T) {
	root := newRoot(t)
	const keep, gone, narrow = "keep-token-0123456789", "gone-token-0123456789", "narrow-token-0123456789"
	file := filepath.Join(t.TempDir(), "tokens.yaml")
	writeTokens := func(entries ...string) {
		t.Helper()
		if err := os.WriteFile(file, []byte("tokens:\n"+strings.Join(entries, "")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keepEntry := "  - {token: " + keep + ", agent: keeper, permission: read}\n"
	writeTokens(keepEntry,
		"  - {token: "+gone+", agent: leaver, permission: read}\n",
		"  - {token: "+narrow+", agent: narrowed, permission: read, paths: [src, docs]}\n")
	cmd, addr := start(t, []string{"HASHLINED_TOKENS=" + file}, "--root", root, "--listen", "127.0.0.1:0")

	watch := func(tok, path string) hashlinev1.FileService_WatchClient {
		t.Helper()
		c, ctx := dial(t, addr, client.WithDialOptions(grpc.WithPerRPCCredentials(bearer(tok))))
		st, err := c.RPC().Watch(ctx, &hashlinev1.WatchRequest{Path: path})
		if err == nil {
			_, err = st.Header()
		}
		if err != nil {
			t.Fatalf("Watch %q: %v", path, err)
		}
		return st
	}
	kept, revoked, narrowed := watch(keep, ""), watch(gone, ""), watch(narrow, "docs")

	writeTokens(keepEntry, "  - {token: "+narrow+", agent: narrowed, permission: read, paths: [src]}\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		st     hashlinev1.FileService_WatchClient
		code   codes.Code
		reason string
		inMsg  string
	}{
		{"the removed token's stream ends UNAUTHENTICATED", revoked, codes.Unauthenticated, "UNAUTHENTICATED", "revoked"},
		{"the narrowed token's stream of docs ends PERMISSION_DENIED", narrowed, codes.PermissionDenied, "PATH_NOT_ALLOWED", "reloaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := tc.st.Recv() // returns when the reload ends the stream
			var ce *client.Error
			if !errors.As(client.FromStatus(err), &ce) || ce.Code != tc.code || ce.Reason != tc.reason || !strings.Contains(ce.Message, tc.inMsg) {
				t.Errorf("Recv = %v, %v; want %v %s saying %q", ev, err, tc.code, tc.reason, tc.inMsg)
			}
		})
	}
	// The reload is done; the kept token's stream still reports changes.
	if err := os.WriteFile(filepath.Join(root, "after.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ev, err := kept.Recv(); err != nil || ev.GetPath() != "after.txt" {
		t.Errorf("the kept token's stream: Recv = %v, %v; want the change of after.txt", ev, err)
	}
}
