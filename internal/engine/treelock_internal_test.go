package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A Write into a directory that a change set deletes, landing after the
// set was planned and before it is committed, must not leave the set half
// applied (the other changes written, the directory's removal failed past
// the commit point): the write waits for the set, then recreates the
// directory. The hook runs at the set's commit point and lets the set go
// on only once the write has either landed or is waiting for the set.
func TestADirectoryDeleteAndAWriteIntoItNeverTearTheSet(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	written := make(chan error, 1)
	waiting := make(chan struct{}, 1)
	var s *Engine // the hooks run only once s is set: in its Apply below
	s, log := intentService(t, root,
		withTreeWait(func() {
			select {
			case waiting <- struct{}{}:
			default:
			}
		}),
		withRecorded(func(string) {
			go func() {
				_, err := s.Write(ctx, &WriteRequest{Path: "d/f.txt", Content: "f\n"})
				written <- err
			}()
			select {
			case err := <-written:
				written <- err // it landed inside the set's window
			case <-waiting:
			}
		}))

	_, err := s.Apply(ctx, &ApplyRequest{Changes: []Change{
		&DeleteRequest{Path: "d"},
		&WriteRequest{Path: "other.txt", Content: "o\n"},
	}})
	if werr := <-written; werr != nil {
		t.Fatalf("the write into d: %v", werr)
	}
	if err != nil {
		t.Fatalf("the set was refused or torn after its plan: %v (other.txt written: %v)", err, fileExists(root, "other.txt"))
	}
	if got, _ := os.ReadFile(filepath.Join(root, "other.txt")); string(got) != "o\n" {
		t.Errorf("other.txt = %q, want the set's content", got)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "d", "f.txt")); string(got) != "f\n" {
		t.Errorf("d/f.txt = %q, want the write's content in d recreated after the set", got)
	}
	if left, _ := os.ReadDir(log.Dir()); len(left) != 0 {
		t.Errorf("the set's intent record is still there: %v", left)
	}
}

func fileExists(root, p string) bool {
	_, err := os.Lstat(filepath.Join(root, p))
	return err == nil
}

func TestTheTreeLockExcludesWritersFromADirectoryRemoval(t *testing.T) {
	var tl treeLock
	ctx := context.Background()
	t.Run("shared holders share it", func(t *testing.T) {
		u1, err := tl.lock(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		u2, err := tl.lock(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		u1()
		u2()
	})
	t.Run("an exclusive holder waits for a shared one, and its wait ends with its context", func(t *testing.T) {
		u, err := tl.lock(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := tl.lock(cctx, true); err == nil {
			t.Fatal("an exclusive lock was taken while a shared one is held")
		}
		u()
		// The canceled waiter left no trace: shared and exclusive both
		// can be taken again.
		ux, err := tl.lock(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tl.lock(cctx, false); err == nil {
			t.Fatal("a shared lock was taken while an exclusive one is held")
		}
		ux()
		us, err := tl.lock(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		us()
	})
}
