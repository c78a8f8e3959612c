package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// openIn opens an engine over root with its state in stateDir, closed with
// the test.
func openIn(t *testing.T, root, stateDir string) *Engine {
	t.Helper()
	e, err := Open(Config{Root: root, StateDir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func writeFile(t *testing.T, root, p, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, p), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(root, p string) string {
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// crashedSet leaves in root and stateDir what a crash right after a change
// set's commit point leaves: the new contents staged beside their targets
// and the set's intent record, no step done.
func crashedSet(t *testing.T, root, stateDir string, contents map[string][2]string) {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	rec := state.Intent{ID: "set1"}
	for p, c := range contents {
		writeFile(t, root, p, c[0])
		st, err := ws.Stage(p, []byte(c[1]), workspace.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s := st.Step(workspace.Version([]byte(c[0])))
		rec.Steps = append(rec.Steps, state.IntentStep{Op: "rename", Path: s.Path, From: s.From, To: s.To, New: s.New, Replaces: s.Replaces})
	}
	sd, err := state.Open(stateDir, root)
	if err != nil {
		t.Fatal(err)
	}
	log, err := sd.Intents(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := log.Record(rec); err != nil {
		t.Fatal(err)
	}
}

// Open finishes a change set a crash left committed before it returns, and
// before the temp sweep, which would have removed the set's staged
// contents (they are older than the engine) and left it half done.
func TestOpenFinishesTheChangeSetACrashLeftCommitted(t *testing.T) {
	t.Parallel()
	root, stateDir := t.TempDir(), t.TempDir()
	crashedSet(t, root, stateDir, map[string][2]string{"a.txt": {"old a\n", "new a\n"}, "b.txt": {"old b\n", "new b\n"}})
	e := openIn(t, root, stateDir)
	if r := e.opened.recovered; r != (Recovered{Sets: 1}) {
		t.Errorf("recovered %+v, want one set finished whole", r)
	}
	for p, want := range map[string]string{"a.txt": "new a\n", "b.txt": "new b\n"} {
		if got := readFile(root, p); got != want {
			t.Errorf("%s = %q, want the set's %q", p, got, want)
		}
	}
	records, err := filepath.Glob(filepath.Join(stateDir, "intents", "*.intent"))
	if err != nil || len(records) != 0 {
		t.Errorf("intent records left: %v (%v)", records, err)
	}
}

// A stale temp file (an interrupted write's) is removed in the background
// once the engine is open.
func TestOpenSweepsStaleTempFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	stale := ".hashline-" + strings.Repeat("A", 26) + ".tmp"
	if !workspace.IsTempName(stale) {
		t.Fatalf("%s is not a temp file's name", stale)
	}
	writeFile(t, root, stale, "half a write\n")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(root, stale), old, old); err != nil {
		t.Fatal(err)
	}
	openIn(t, root, t.TempDir())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Lstat(filepath.Join(root, stale)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stale temp file is still there")
		}
	}
}

// The intent log's lock is per state directory: a second engine given a
// state directory an open engine holds is refused, whichever root it
// serves, with an error naming the setting and the holder, and it touches
// neither the root nor the log: the first engine's staged contents and
// records are its own to finish. Once the first is closed, the directory
// is free.
func TestASecondOpenOnAHeldStateDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	root, other, stateDir := t.TempDir(), t.TempDir(), t.TempDir()
	first := openIn(t, root, stateDir)
	for _, r := range []string{root, other} {
		stale := ".hashline-" + strings.Repeat("B", 26) + ".tmp"
		// Written after the first engine started, so its own sweep leaves
		// it; older than the second, whose sweep would take it.
		writeFile(t, r, stale, "another engine's staged content\n")
		time.Sleep(10 * time.Millisecond)
		e, err := Open(Config{Root: r, StateDir: stateDir})
		if err == nil {
			e.Close()
			t.Fatalf("a second engine on %s opened with a held state directory", r)
		}
		var se *SettingError
		if !errors.As(err, &se) || se.Setting != "StateDir" || !errors.Is(err, state.ErrLogInUse) {
			t.Errorf("err = %v, want a StateDir SettingError wrapping ErrLogInUse", err)
		}
		if want := "process " + strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name the holder (%q)", err, want)
		}
		time.Sleep(50 * time.Millisecond) // a sweep, had one started, has had time
		if _, err := os.Lstat(filepath.Join(r, stale)); err != nil {
			t.Errorf("the refused engine swept %s: %v", stale, err)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	openIn(t, other, stateDir)
}

// Close saves the snapshots held in memory to the state directory, so that
// the next engine of the workspace finds them; a second Close is a no-op.
func TestCloseSavesSnapshotsAndTwiceIsFine(t *testing.T) {
	t.Parallel()
	root, stateDir := t.TempDir(), t.TempDir()
	e, err := Open(Config{Root: root, StateDir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte("a snapshot only memory held\n")
	v := workspace.Version(raw)
	e.cache.Put(v, hashline.ParseDocument(raw))
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	next := openIn(t, root, stateDir)
	doc, ok := next.cache.Get(v)
	if !ok || string(doc.Text()) != string(raw) {
		t.Fatalf("the next engine does not find the snapshot (%v)", ok)
	}
	if s := next.CacheStats(); s.Disk.Hits != 1 {
		t.Errorf("cache stats %+v, want the snapshot read from the disk", s)
	}
}

// Hold claims the root before the state directory is touched, its error
// stops Open as it is, and its release runs last in Close, after the
// intent log's lock is let go.
func TestHoldIsTakenFirstAndReleasedLast(t *testing.T) {
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		root := t.TempDir()
		stateDir := filepath.Join(t.TempDir(), "state")
		held := errors.New("held by someone else")
		_, err := Open(Config{Root: root, StateDir: stateDir, Hold: func(string) (func(), error) { return nil, held }})
		if err != held {
			t.Errorf("err = %v, want the hold's own", err)
		}
		if _, err := os.Stat(stateDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the state directory was touched: %v", err)
		}
	})
	t.Run("released last", func(t *testing.T) {
		t.Parallel()
		root, stateDir := t.TempDir(), t.TempDir()
		var got string
		var lockFree, released int
		e, err := Open(Config{Root: root, StateDir: stateDir, Hold: func(r string) (func(), error) {
			got = r
			return func() {
				released++
				if release, err := state.LockFile(filepath.Join(stateDir, "intents", "lock")); err == nil {
					lockFree++
					release()
				}
			}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if got != e.Workspace().Dir() {
			t.Errorf("Hold got %q, want the workspace's directory %q", got, e.Workspace().Dir())
		}
		e.Close()
		e.Close()
		if released != 1 || lockFree != 1 {
			t.Errorf("released %d times, %d with the intent lock free; want once, after it", released, lockFree)
		}
	})
}

// A zero Config is the defaults; fields whose negative value means none or
// off turn those off; the state directory is the one Open reports.
func TestOpenConfigDefaultsAndNone(t *testing.T) {
	t.Parallel()
	d := DefaultConfig()
	for _, tt := range []struct {
		name  string
		cfg   Config
		check func(t *testing.T, e *Engine)
	}{
		{"zero is the defaults", Config{}, func(t *testing.T, e *Engine) {
			o := e.opts
			if o.readLimit != d.ReadLimit || o.readByteBudget != d.ReadBytes || o.maxLineBytes != d.MaxLineBytes || o.maxEdits != d.MaxEdits ||
				o.maxResponseBytes != d.MaxResponseBytes || o.cacheBytes != d.CacheBytes || o.viewEntries != d.ViewEntries || o.viewBytes != d.ViewBytes ||
				!o.requireRead || o.requestIDTTL != d.RequestIDTTL || o.requestIDBytes != d.RequestIDBytes || o.maxPatternBytes != d.MaxPatternBytes ||
				o.grepBytes != d.GrepBytes || o.memoryBudget != d.MemoryBudget || o.hasher.Len() != d.HashLen || o.disk == nil || o.intents == nil {
				t.Errorf("options %+v, want the defaults %+v", o, d)
			}
			if e.requests == nil {
				t.Error("no request_id table")
			}
		}},
		{"negative is none", Config{CacheBytes: -1, StateBytes: -1, RequestIDTTL: -1, NoRequireRead: true, HashLen: 4}, func(t *testing.T, e *Engine) {
			o := e.opts
			if o.cacheBytes != 0 || o.disk != nil || o.requireRead || o.hasher.Len() != 4 || e.requests != nil {
				t.Errorf("options %+v, want no cache, no disk, no read required, hash length 4, no request_id table", o)
			}
		}},
		{"set values are kept", Config{ReadLimit: 7, MaxEdits: 3, MemoryBudget: 1 << 20, CacheBytes: 1 << 10}, func(t *testing.T, e *Engine) {
			o := e.opts
			if o.readLimit != 7 || o.maxEdits != 3 || o.memoryBudget != 1<<20 || o.cacheBytes != 1<<10 {
				t.Errorf("options %+v, want the values given", o)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stateDir := t.TempDir()
			tt.cfg.Root, tt.cfg.StateDir = t.TempDir(), stateDir
			e, err := Open(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			tt.check(t, e)
			if real, _ := filepath.EvalSymlinks(stateDir); e.StateDir() != real {
				t.Errorf("StateDir() = %q, want %q", e.StateDir(), real)
			}
		})
	}
}

// Open's refusals name the setting at fault.
func TestOpenRefusalsNameTheSetting(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, tt := range []struct {
		cfg     Config
		setting string
	}{
		{Config{}, "Root"},
		{Config{Root: filepath.Join(root, "missing")}, "Root"},
		{Config{Root: root, HashLen: 9}, "HashLen"},
		{Config{Root: root, StateDir: filepath.Join(root, "state")}, "StateDir"},
	} {
		e, err := Open(tt.cfg)
		if err == nil {
			e.Close()
			t.Errorf("%+v opened", tt.cfg)
			continue
		}
		var se *SettingError
		if !errors.As(err, &se) || se.Setting != tt.setting {
			t.Errorf("%+v: err = %v, want a SettingError of %s", tt.cfg, err, tt.setting)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "state")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a state directory inside the root was created: %v", err)
	}
}

// DefaultConfig and New's defaults are one set of values.
func TestDefaultConfigIsNewsDefaults(t *testing.T) {
	t.Parallel()
	d, o := DefaultConfig(), defaultOptions()
	if o.readLimit != d.ReadLimit || o.readByteBudget != d.ReadBytes || o.maxLineBytes != d.MaxLineBytes || o.maxEdits != d.MaxEdits ||
		o.maxResponseBytes != d.MaxResponseBytes || o.cacheBytes != d.CacheBytes || o.viewEntries != d.ViewEntries || o.viewBytes != d.ViewBytes ||
		o.requireRead == d.NoRequireRead || o.requestIDTTL != d.RequestIDTTL || o.requestIDBytes != d.RequestIDBytes ||
		o.maxPatternBytes != d.MaxPatternBytes || o.grepBytes != d.GrepBytes || o.memoryBudget != d.MemoryBudget || o.hasher.Len() != d.HashLen ||
		d.StateBytes != versions.DefaultDiskBytes || d.MaxFileBytes != workspace.DefaultMaxFileBytes {
		t.Errorf("DefaultConfig %+v differs from New's defaults %+v", d, o)
	}
}
