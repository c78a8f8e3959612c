package versions

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// check fails t unless l remembers exactly want (file -> version) and
// holds exactly the versions in it.
func checkLatest(t *testing.T, l *Latest, want map[string]string, files ...string) {
	t.Helper()
	for _, f := range files {
		v, ok := l.Get(f)
		if w, wok := want[f]; v != w || ok != wok {
			t.Errorf("Get(%q) = %q, %v; want %q, %v", f, v, ok, w, wok)
		}
	}
	held := map[string]bool{}
	for _, v := range want {
		held[v] = true
	}
	for _, v := range []string{"v1", "v2", "v3"} {
		if got := l.Holds(v); got != held[v] {
			t.Errorf("Holds(%q) = %v, want %v", v, got, held[v])
		}
	}
}

func TestLatestSetGetForget(t *testing.T) {
	l := NewLatest(10, 0)
	checkLatest(t, l, nil, "a")
	l.Set("a", "v1")
	l.Set("b", "v1")
	checkLatest(t, l, map[string]string{"a": "v1", "b": "v1"}, "a", "b")
	// A new version replaces the file's and lets go of the old one only
	// when no other file has it.
	l.Set("a", "v2")
	checkLatest(t, l, map[string]string{"a": "v2", "b": "v1"}, "a", "b")
	l.Set("b", "v2")
	checkLatest(t, l, map[string]string{"a": "v2", "b": "v2"}, "a", "b")
	// "" forgets: the file has no latest version any more.
	l.Set("a", "")
	checkLatest(t, l, map[string]string{"b": "v2"}, "a", "b")
	l.Forget("b")
	checkLatest(t, l, nil, "a", "b")
	l.Forget("never")
}

func TestLatestMove(t *testing.T) {
	l := NewLatest(10, 0)
	l.Set("a", "v1")
	l.Set("b", "v2")
	l.Move("a", "b") // b is replaced: its version goes
	checkLatest(t, l, map[string]string{"b": "v1"}, "a", "b")
	l.Move("b", "b")
	checkLatest(t, l, map[string]string{"b": "v1"}, "a", "b")
	l.Set("c", "v3")
	l.Move("gone", "c") // nothing at from: to's version is forgotten all the same
	checkLatest(t, l, map[string]string{"b": "v1"}, "a", "b", "c", "gone")
	// The moved entry is the file's: setting it again replaces it.
	l.Set("b", "v2")
	checkLatest(t, l, map[string]string{"b": "v2"}, "a", "b")
}

func TestLatestBounds(t *testing.T) {
	l := NewLatest(2, 0)
	l.Set("a", "v1")
	l.Set("b", "v2")
	l.Get("a") // a is used more recently than b
	l.Set("c", "v3")
	checkLatest(t, l, map[string]string{"a": "v1", "c": "v3"}, "a", "b", "c")

	// The byte bound counts names and versions; the file set last is kept
	// whatever its size.
	one := int64(len("f0") + len("v1") + LatestEntryOverhead)
	l = NewLatest(100, 2*one)
	l.Set("f0", "v1")
	l.Set("f1", "v2")
	l.Set("f2", "v3")
	checkLatest(t, l, map[string]string{"f1": "v2", "f2": "v3"}, "f0", "f1", "f2")
	huge := strings.Repeat("x", int(4*one))
	l.Set(huge, "v1")
	checkLatest(t, l, map[string]string{huge: "v1"}, "f1", "f2", huge)
}

func TestLatestConcurrent(t *testing.T) {
	l := NewLatest(50, 0)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				f := fmt.Sprintf("f%d", (i*7+g)%80)
				switch i % 5 {
				case 0:
					l.Forget(f)
				case 1:
					l.Move(f, fmt.Sprintf("f%d", (i+g)%80))
				default:
					l.Set(f, fmt.Sprintf("v%d", i%3+1))
				}
				l.Get(f)
				l.Holds("v1")
			}
		})
	}
	wg.Wait()
	// Every version held is some remembered file's.
	held := map[string]int{}
	for f := range l.m {
		v, _ := l.Get(f)
		held[v]++
	}
	if len(l.m) != l.ll.Len() || len(l.m) > 50 {
		t.Errorf("%d files in the map, %d in the list; want equal and at most 50", len(l.m), l.ll.Len())
	}
	for v, n := range l.held {
		if held[v] != n {
			t.Errorf("held[%s] = %d, want %d", v, n, held[v])
		}
	}
}
