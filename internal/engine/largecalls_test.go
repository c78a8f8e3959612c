package engine_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
)

// WithLargeCalls is told when a call on a large file starts and ends, and
// nothing for calls on small files: a Read and an Edit of a file charged
// LargeCallBytes or more each give one start and one end, in that order;
// a Read of a small file gives none; a Grep, whatever it searches, is
// one.
func TestLargeCallsAreToldWhenCallsOnLargeFilesRun(t *testing.T) {
	t.Parallel()
	// Lines of 64 bytes, enough of them that a Read is charged past the
	// bound (a Read is charged three times the file's size).
	large := strings.Repeat(strings.Repeat("x", 63)+"\n", engine.LargeCallBytes/64/3+16)
	var (
		mu     sync.Mutex
		events []bool
	)
	e, ctx := newEngine(t, map[string]string{"small.txt": "one\ntwo\n", "large.txt": large},
		engine.WithLargeCalls(func(inFlight bool) {
			mu.Lock()
			events = append(events, inFlight)
			mu.Unlock()
		}))
	got := func() []bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(events)
	}
	if _, err := e.Read(ctx, engine.ReadRequest{Path: "small.txt"}); err != nil {
		t.Fatal(err)
	}
	if ev := got(); len(ev) != 0 {
		t.Fatalf("a Read of a small file told %v, want nothing", ev)
	}
	if _, err := e.Read(ctx, engine.ReadRequest{Path: "large.txt"}); err != nil {
		t.Fatal(err)
	}
	if ev := got(); !slices.Equal(ev, []bool{true, false}) {
		t.Fatalf("a Read of a large file told %v, want [true false]", ev)
	}
	if _, err := e.Edit(ctx, &engine.EditRequest{Path: "large.txt", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: ref(large, 1), Text: "changed"}}}); err != nil {
		t.Fatal(err)
	}
	if ev := got(); !slices.Equal(ev, []bool{true, false, true, false}) {
		t.Fatalf("then an Edit of it told %v, want [true false true false]", ev)
	}
	if _, err := e.Grep(ctx, e.Workspace().Root().FS(), engine.GrepRequest{Pattern: "one", Path: "small.txt"}, func(engine.GrepFile) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ev := got(); !slices.Equal(ev, []bool{true, false, true, false, true, false}) {
		t.Fatalf("then a Grep of a small file told %v, want [true false true false true false]", ev)
	}
}
