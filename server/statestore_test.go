package server_test

import (
	"errors"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// openDisk opens a snapshot store in dir, closed with the test.
func openDisk(t testing.TB, dir string, maxBytes int64) *versions.Disk {
	t.Helper()
	d, err := versions.OpenDisk(dir, maxBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// spilling is a server that keeps no snapshot in memory, so that every
// base must come back from the disk store in dir.
func spilling(t testing.TB, root, dir string) (*env, *versions.Disk) {
	d := openDisk(t, dir, versions.DefaultDiskBytes)
	e := newEnvIn(t, root, server.GRPCConfig{}, []workspace.Option{workspace.WithFsync(false)},
		engine.WithSnapshotCacheBytes(0), engine.WithSnapshotDisk(d))
	return e, d
}

// TestBaseEvictedFromMemoryComesBackFromDisk: with the memory cache at 0
// and a disk store, alice's base is found on disk, so her range over bob's
// line is the exact rebase conflict (CONFLICT, not a refusal for an unknown
// base), and her edit of another line is rebased and lands.
func TestBaseEvictedFromMemoryComesBackFromDisk(t *testing.T) {
	t.Run("an overlapping edit is a rebase conflict", func(t *testing.T) {
		e, d := spilling(t, t.TempDir(), t.TempDir())
		base, afterBob, err := bobThenAlice(e, true, client.Replace(tag(tenLines, 3), tag(tenLines, 7), "alice's block"))
		var stale client.StaleRefError
		if !errors.As(err, &stale) || len(stale.Refs) != 1 || stale.Refs[0].GetReason() != "CONFLICT" {
			t.Fatalf("err = %v, want one STALE_REF with reason CONFLICT", err)
		}
		if stale.Err.Metadata["baseVersion"] != base {
			t.Errorf("metadata %v, want baseVersion %s", stale.Err.Metadata, base)
		}
		if e.read("f.txt") != afterBob {
			t.Error("the refused edit changed the file")
		}
		// Spills are written in the background, and a lookup may find its
		// version still queued; Close waits for the queue to be written.
		d.Close()
		if s := e.svc.Engine().CacheStats(); s.Disk.Hits == 0 || s.Disk.Spills == 0 || s.Entries != 0 {
			t.Errorf("cache stats %+v: want the base read from disk, nothing in memory", s)
		}
	})
	t.Run("an edit of another line is rebased and lands", func(t *testing.T) {
		e, _ := spilling(t, t.TempDir(), t.TempDir())
		if _, _, err := bobThenAlice(e, true, client.Replace(tag(tenLines, 9), "", "alice's nine")); err != nil {
			t.Fatal(err)
		}
		if got := oneLine(e.read("f.txt")); got != "l1 l2 l3 l4 bob was here l6 l7 l8 alice's nine l10" {
			t.Errorf("file = %q", got)
		}
		// The same with the view instead of baseVersion, checked on the
		// response this time.
		e.write("f.txt", tenLines)
		alice, bob := e.agent("alice"), e.agent("bob")
		base := e.readAs(alice, "f.txt").GetVersion()
		e.readAs(bob, "f.txt")
		e.editAs(bob, "f.txt", client.InsertAfter(tag(tenLines, 1), "bob's line"))
		resp := e.editAs(alice, "f.txt", client.Replace(tag(tenLines, 9), "", "alice's nine"))
		if resp.GetRebasedFrom() != base || len(resp.GetMoved()) != 1 || resp.GetMoved()[0].GetTo() != 10 {
			t.Errorf("rebasedFrom %q moved %v, want from %s, line 9 moved to 10", resp.GetRebasedFrom(), resp.GetMoved(), base)
		}
	})
}

// TestRestartKeepsRebasingFromDisk: a server saves the snapshots it holds
// in memory when it stops; the next server over the same root and state
// directory rebases from them. Without the store the same edit is refused.
func TestRestartKeepsRebasingFromDisk(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	d1, err := versions.OpenDisk(dir, versions.DefaultDiskBytes)
	if err != nil {
		t.Fatal(err)
	}
	first := newEnvIn(t, root, server.GRPCConfig{}, nil, engine.WithSnapshotDisk(d1))
	first.write("f.txt", tenLines)
	alice, bob := first.agent("alice"), first.agent("bob")
	base := first.readAs(alice, "f.txt").GetVersion()
	first.readAs(bob, "f.txt")
	first.editAs(bob, "f.txt", client.Replace(tag(tenLines, 5), "", "bob was here"))
	if s := first.svc.Engine().CacheStats(); s.Disk.Spills != 0 {
		t.Fatalf("cache stats %+v: the memory cache had room, nothing should have been spilled yet", s)
	}
	// Shut down as hashlined does: save, then close the store.
	first.svc.Engine().SaveSnapshots()
	if err := d1.Close(); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name  string
		store bool
	}{{"with the state store", true}, {"without it", false}} {
		t.Run(tt.name, func(t *testing.T) {
			var opts []engine.Option
			if tt.store {
				opts = append(opts, engine.WithSnapshotDisk(openDisk(t, dir, versions.DefaultDiskBytes)))
			}
			next := newEnvIn(t, root, server.GRPCConfig{}, nil, append(opts, engine.WithRequireRead(false))...)
			alice := next.agent("alice")
			resp, err := alice.Edit(next.ctx, &hashlinev1.EditRequest{Path: "f.txt", BaseVersion: base,
				Edits: []*hashlinev1.FileEdit{client.Replace(tag(tenLines, 9), "", "alice's nine")}})
			if !tt.store {
				if !errors.Is(err, client.ErrStaleRef) {
					t.Fatalf("err = %v, want STALE_REF for a base the server does not hold", err)
				}
				return
			}
			if err != nil || resp.GetRebasedFrom() != base {
				t.Fatalf("resp %v, err %v; want the edit rebased from %s", resp, err, base)
			}
			if got := oneLine(next.read("f.txt")); got != "l1 l2 l3 l4 bob was here l6 l7 l8 alice's nine l10" {
				t.Errorf("file = %q", got)
			}
		})
	}
}
