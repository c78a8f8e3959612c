//go:build linux

package workspace

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// syncLog records, in one order, the directory syncs of a workspace and the
// returns of the writes that waited for them.
type syncLog struct {
	mu      sync.Mutex
	seq     int
	syncs   []loggedSync
	returns []loggedReturn
}

// loggedSync is one sync: the contents of its directory's files just
// before it started (so every rename seen there was complete before the
// sync began) and when it finished.
type loggedSync struct {
	dir      string
	seen     map[string]string
	finished int
	err      error
}

type loggedReturn struct {
	path, content string
	at            int
	err           error
}

// sync is the workspace's directory sync: it notes what the directory
// holds, runs the real fsync and notes its end.
func (l *syncLog) sync(t *testing.T, w **Workspace, root string) func(string) error {
	return func(dir string) error {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Error(err)
		}
		seen := make(map[string]string)
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join(root, dir, e.Name())); err == nil {
				seen[path.Join(dir, e.Name())] = string(b)
			}
		}
		err = (*w).fsyncDir(dir)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seq++
		l.syncs = append(l.syncs, loggedSync{dir: dir, seen: seen, finished: l.seq, err: err})
		return err
	}
}

func (l *syncLog) returned(p, content string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.returns = append(l.returns, loggedReturn{path: p, content: content, at: l.seq, err: err})
}

// TestDirSyncCoversEveryRename runs many concurrent writers, each of its
// own file, and checks for every write that a sync of its directory that
// began after its rename (the sync saw the new content in place) finished
// without error before the write returned.
func TestDirSyncCoversEveryRename(t *testing.T) {
	tests := []struct {
		name            string
		dirs, writers   int
		writesPerWriter int
	}{
		{name: "16 writers in one directory", dirs: 1, writers: 16, writesPerWriter: 4},
		{name: "64 writers in one directory", dirs: 1, writers: 64, writesPerWriter: 2},
		{name: "32 writers in four directories", dirs: 4, writers: 32, writesPerWriter: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for d := range tt.dirs {
				if err := os.Mkdir(filepath.Join(root, fmt.Sprint("d", d)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var log syncLog
			var w *Workspace
			w, err := Open(root, withDirSync(log.sync(t, &w, root)))
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			var wg sync.WaitGroup
			for i := range tt.writers {
				p := fmt.Sprintf("d%d/w%02d.txt", i%tt.dirs, i)
				wg.Go(func() {
					for k := range tt.writesPerWriter {
						content := fmt.Sprintf("%s write %d", p, k)
						_, err := w.WriteFile(p, []byte(content), WriteOptions{})
						log.returned(p, content, err)
					}
				})
			}
			wg.Wait()
			for _, r := range log.returns {
				if r.err != nil {
					t.Errorf("%s (%q): %v", r.path, r.content, r.err)
					continue
				}
				if !coveredBefore(log.syncs, r) {
					t.Errorf("%s (%q) returned before a sync of %s that began after its rename had finished", r.path, r.content, path.Dir(r.path))
				}
			}
			t.Logf("%d writes, %d directory syncs", len(log.returns), len(log.syncs))
		})
	}
}

func coveredBefore(syncs []loggedSync, r loggedReturn) bool {
	for _, s := range syncs {
		if s.dir == path.Dir(r.path) && s.seen[r.path] == r.content && s.finished < r.at && s.err == nil {
			return true
		}
	}
	return false
}

// TestDirSyncErrorReachesItsRound holds the first sync of a directory
// while three more writes rename into it, so that those three share the
// second sync, and fails one sync: its error must reach exactly the writes
// it covered, and a later write is not affected.
func TestDirSyncErrorReachesItsRound(t *testing.T) {
	errInjected := errors.New("injected sync failure")
	tests := []struct {
		name    string
		fail    int // which sync fails, counted from 1; 0 for none
		wantErr []string
	}{
		{name: "no sync fails", fail: 0},
		{name: "the first write's own sync fails", fail: 1, wantErr: []string{"a"}},
		{name: "the shared sync fails for all three", fail: 2, wantErr: []string{"b", "c", "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan int, 4)
			release := make(chan struct{})
			var mu sync.Mutex
			calls := 0
			fake := func(string) error {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				if n == 1 {
					started <- n
					<-release
				}
				if n == tt.fail {
					return errInjected
				}
				return nil
			}
			w, _, _ := newWS(t, withDirSync(fake))
			errs := make(map[string]error)
			var errsMu sync.Mutex
			var wg sync.WaitGroup
			write := func(name string) {
				wg.Go(func() {
					_, err := w.WriteFile(name, []byte(name), WriteOptions{})
					errsMu.Lock()
					errs[name] = err
					errsMu.Unlock()
				})
			}
			write("a")
			<-started
			for _, name := range []string{"b", "c", "d"} {
				write(name)
			}
			// a holds the running sync; b, c and d have renamed and wait.
			for w.syncCallers(".") != 4 {
				runtime.Gosched()
			}
			close(release)
			wg.Wait()
			write("e")
			wg.Wait()
			mu.Lock()
			if calls != 3 {
				t.Errorf("%d syncs, want 3: a's, one shared by b, c and d, e's", calls)
			}
			mu.Unlock()
			for _, name := range []string{"a", "b", "c", "d", "e"} {
				want := false
				for _, n := range tt.wantErr {
					want = want || n == name
				}
				if got := errors.Is(errs[name], errInjected); got != want {
					t.Errorf("write %s: error %v, want the injected one: %v", name, errs[name], want)
				}
			}
			if n := w.syncCallers("."); n != 0 {
				t.Errorf("%d callers left in the syncer, want none", n)
			}
		})
	}
}

// TestDirSyncOffWithoutFsync checks that with fsync off no directory is
// synced at all, grouped or not.
func TestDirSyncOffWithoutFsync(t *testing.T) {
	fake := func(dir string) error {
		t.Errorf("directory %s synced with fsync off", dir)
		return nil
	}
	w, _, _ := newWS(t, WithFsync(false), withDirSync(fake))
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if _, err := w.WriteFile(fmt.Sprintf("d%d/f.txt", i%2), []byte("x"), WriteOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
