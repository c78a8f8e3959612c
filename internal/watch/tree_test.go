package watch

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/workspace"
)

// treeRecorder collects what a Tree hands its handler.
type treeRecorder struct {
	mu      sync.Mutex
	ops     map[string]Op
	batches int
	changed chan struct{}
}

func (r *treeRecorder) handle(_ context.Context, b Batch) {
	r.mu.Lock()
	r.batches++
	for p, op := range b.Paths {
		r.ops[p] |= op
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// wait waits (at most 10s) until cond holds for the ops seen so far.
func (r *treeRecorder) wait(t *testing.T, what string, cond func(map[string]Op) bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		ok := cond(r.ops)
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s; saw %v", what, r.ops)
		}
	}
}

func (r *treeRecorder) reset() {
	r.mu.Lock()
	clear(r.ops)
	r.batches = 0
	r.mu.Unlock()
}

func startTree(t *testing.T, root string) *treeRecorder {
	t.Helper()
	r := &treeRecorder{ops: map[string]Op{}, changed: make(chan struct{}, 1)}
	tree, err := WatchTree(root, r.handle, WithDebounce(20*time.Millisecond, 200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	return r
}

func mkfile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func has(p string, op Op) func(map[string]Op) bool {
	return func(m map[string]Op) bool { return m[p]&op == op }
}

func TestTree(t *testing.T) {
	root := t.TempDir()
	mkfile(t, filepath.Join(root, "old", "deep", "f.txt"), "x\n")
	mkfile(t, filepath.Join(root, "gone", "g.txt"), "x\n")
	mkfile(t, filepath.Join(root, "a.txt"), "x\n")
	r := startTree(t, root)

	t.Run("a write to a file in a directory that existed at start is seen", func(t *testing.T) {
		mkfile(t, filepath.Join(root, "old", "deep", "f.txt"), "y\n")
		r.wait(t, "old/deep/f.txt written", has("old/deep/f.txt", OpWrite))
	})
	t.Run("a new directory is watched and the files already in it reported", func(t *testing.T) {
		mkfile(t, filepath.Join(root, "new", "sub", "early.txt"), "x\n")
		r.wait(t, "new/sub/early.txt created", has("new/sub/early.txt", OpCreate))
		mkfile(t, filepath.Join(root, "new", "sub", "late.txt"), "x\n")
		r.wait(t, "new/sub/late.txt created", has("new/sub/late.txt", OpCreate))
	})
	t.Run("a removed directory is reported as one", func(t *testing.T) {
		if err := os.RemoveAll(filepath.Join(root, "gone")); err != nil {
			t.Fatal(err)
		}
		r.wait(t, "gone removed", has("gone", OpDirRemoved))
	})
	t.Run("a renamed file is removed at its old name and created at the new", func(t *testing.T) {
		if err := os.Rename(filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt")); err != nil {
			t.Fatal(err)
		}
		r.wait(t, "a.txt removed", has("a.txt", OpRemove))
		r.wait(t, "b.txt created", has("b.txt", OpCreate))
	})
	t.Run("version-control metadata and the workspace's temp files are skipped", func(t *testing.T) {
		r.reset()
		mkfile(t, filepath.Join(root, ".git", "objects", "x"), "x\n")
		mkfile(t, filepath.Join(root, "vcs", "CVS", "Root"), "x\n")
		mkfile(t, filepath.Join(root, "vcs", ".hg", "hgrc"), "x\n")
		mkfile(t, filepath.Join(root, ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp"), "x\n")
		mkfile(t, filepath.Join(root, "marker.txt"), "x\n") // written last
		r.wait(t, "marker.txt", has("marker.txt", OpCreate))
		r.mu.Lock()
		defer r.mu.Unlock()
		for p := range r.ops {
			if workspace.IsVCSPath(p) || strings.HasPrefix(p, ".hashline-") {
				t.Errorf("skipped path %s was reported", p)
			}
		}
	})
	t.Run("a burst of writes is debounced into few batches", func(t *testing.T) {
		r.reset()
		const writes = 200
		p := filepath.Join(root, "burst.txt")
		for i := range writes {
			mkfile(t, p, strings.Repeat("x", i))
		}
		mkfile(t, filepath.Join(root, "after-burst.txt"), "x")
		r.wait(t, "the file written after the burst", has("after-burst.txt", OpCreate))
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.batches >= writes/2 {
			t.Errorf("%d writes came as %d batches; debouncing should merge them", writes, r.batches)
		}
	})
}

func TestTreeCloseStopsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	root := t.TempDir()
	block := make(chan struct{})
	entered := make(chan struct{}, 1)
	tree, err := WatchTree(root, func(ctx context.Context, b Batch) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select { // a handler waiting on something: Close must cancel it
		case <-ctx.Done():
		case <-block:
		}
	}, WithDebounce(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	mkfile(t, filepath.Join(root, "f"), "x")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("handler never called")
	}
	closed := make(chan error)
	go func() { closed <- tree.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung on a handler that waits for its context")
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

func TestWatchTreeMissingRoot(t *testing.T) {
	if _, err := WatchTree(filepath.Join(t.TempDir(), "nope"), func(context.Context, Batch) {}); err == nil {
		t.Fatal("watching a missing root succeeded")
	}
}
