package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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
