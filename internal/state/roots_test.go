package state_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashline/hashline/internal/state"
)

// TestOpenRecordsTheRoot: a state directory says which root it belongs to.
func TestOpenRecordsTheRoot(t *testing.T) {
	root, base := t.TempDir(), t.TempDir()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	d, err := state.Open(filepath.Join(base, "s"), root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(d.Path(), "root"))
	if err != nil || string(got) != real+"\n" {
		t.Fatalf("root file: %q, %v; want %q", got, err, real+"\n")
	}
}

// TestListAndPrune: prune removes the state of roots that are gone, never
// one an engine holds, and one without a root file only when asked.
func TestListAndPrune(t *testing.T) {
	base := t.TempDir()
	open := func(name, root string) *state.Dir {
		t.Helper()
		d, err := state.Open(filepath.Join(base, name), root)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	live := t.TempDir()
	open("live", live)
	goneRoot := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(goneRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	open("gone", goneRoot)
	busyRoot := filepath.Join(t.TempDir(), "busy")
	if err := os.Mkdir(busyRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	log, err := open("busy", busyRoot).Intents(false)
	if err != nil {
		t.Fatal(err)
	}
	release, err := log.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.Mkdir(filepath.Join(base, "unknown"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{goneRoot, busyRoot} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}

	entries, err := state.List(base)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		gone, inUse, hasRoot bool
	}
	wants := map[string]want{"busy": {true, true, true}, "gone": {true, false, true}, "live": {false, false, true}, "unknown": {false, false, false}}
	if len(entries) != len(wants) {
		t.Fatalf("List: %+v", entries)
	}
	for _, e := range entries {
		w := wants[filepath.Base(e.Path)]
		if e.RootGone != w.gone || e.InUse != w.inUse || (e.Root != "") != w.hasRoot {
			t.Errorf("%s: %+v, want %+v", e.Path, e, w)
		}
	}

	names := func(es []state.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, filepath.Base(e.Path))
		}
		return out
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(base, name))
		return err == nil
	}
	for _, tc := range []struct {
		name              string
		unknown, dryRun   bool
		removed, busy     []string
		remain, disappear []string
	}{
		{"a dry run removes nothing", false, true, []string{"gone"}, []string{"busy"}, []string{"gone", "busy", "live", "unknown"}, nil},
		{"prune removes the gone root's state only", false, false, []string{"gone"}, []string{"busy"}, []string{"busy", "live", "unknown"}, []string{"gone"}},
		{"with unknown, a directory without a root file goes too", true, false, []string{"unknown"}, []string{"busy"}, []string{"busy", "live"}, []string{"unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			removed, busy, err := state.Prune(base, tc.unknown, tc.dryRun)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(removed); !slices.Equal(got, tc.removed) {
				t.Errorf("removed %v, want %v", got, tc.removed)
			}
			if got := names(busy); !slices.Equal(got, tc.busy) {
				t.Errorf("busy %v, want %v", got, tc.busy)
			}
			for _, n := range tc.remain {
				if !exists(n) {
					t.Errorf("%s was removed", n)
				}
			}
			for _, n := range tc.disappear {
				if exists(n) {
					t.Errorf("%s is still there", n)
				}
			}
		})
	}
}
