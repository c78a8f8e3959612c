package server_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// The lost update of a forgotten base: alice and bob read one version; bob
// replaces line 5; alice, from her old tags, replaces lines 3-7. Her range
// still starts and ends with the lines she read, so a check of its two
// references against the current file passes, and writing it would destroy
// bob's line 5 unseen. Only the base's content can tell, and when the
// server no longer holds it the edit must be refused.

// evicted is a server that keeps no snapshot at all: every base other than
// the current version is unknown.
func evicted(t testing.TB) *env {
	return newEnvWS(t, []workspace.Option{workspace.WithFsync(false)}, engine.WithSnapshotCacheBytes(0))
}

// bobThenAlice runs the scenario once on e's f.txt (written as tenLines)
// and returns alice's base, the file after bob's edit, and alice's error.
// alice passes her base as baseVersion when explicit is set, else relies on
// the version the server remembers she saw.
func bobThenAlice(e *env, explicit bool, mine *hashlinev1.FileEdit) (base, afterBob string, err error) {
	e.t.Helper()
	e.write("f.txt", tenLines)
	alice, bob := e.agent("alice"), e.agent("bob")
	base = e.readAs(alice, "f.txt").GetVersion()
	e.readAs(bob, "f.txt")
	e.editAs(bob, "f.txt", client.Replace(tag(tenLines, 5), "", "bob was here"))
	afterBob = e.read("f.txt")
	req := &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{mine}}
	if explicit {
		req.BaseVersion = base
	}
	_, err = alice.Edit(e.ctx, req)
	return base, afterBob, err
}

// TestNoLostUpdateWhenTheBaseIsGone runs the scenario many times with the
// base certainly gone from memory: no update may be lost, ever. Without a
// disk store alice's edit is refused for its unknown base; with one, the
// base comes back from disk and the refusal is the rebase's exact CONFLICT.
func TestNoLostUpdateWhenTheBaseIsGone(t *testing.T) {
	for _, tt := range []struct {
		name   string
		env    func(t *testing.T) *env
		reason string // StaleRef.reason of the refs alice gets
	}{
		{"no snapshot anywhere", func(t *testing.T) *env { return evicted(t) }, "CHANGED"},
		{"memory 0, disk store", func(t *testing.T) *env { e, _ := spilling(t, t.TempDir(), t.TempDir()); return e }, "CONFLICT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.env(t)
			alice := client.Replace(tag(tenLines, 3), tag(tenLines, 7), "alice's block")
			lost := 0
			for i := range 1000 {
				_, afterBob, err := bobThenAlice(e, i%2 == 0, alice)
				got := e.read("f.txt")
				if got != afterBob || !strings.Contains(got, "bob was here") {
					lost++
					if lost == 1 {
						t.Errorf("run %d: bob's edit was lost: the file is %q, want %q (alice's edit: %v)", i, got, afterBob, err)
					}
					continue
				}
				var stale client.StaleRefError
				if !errors.As(err, &stale) || stale.Err.Code != codes.Aborted || len(stale.Refs) == 0 || stale.Refs[0].GetReason() != tt.reason {
					t.Fatalf("run %d: alice's edit = %v, want ABORTED STALE_REF with reason %s", i, err, tt.reason)
				}
			}
			if lost > 0 {
				t.Fatalf("%d of 1000 runs lost bob's update", lost)
			}
		})
	}
}

// TestUnknownBaseRefusalShowsTheCurrentLines checks what the refusal tells
// the model: that its base is gone, the current version, and fresh tags for
// every reference (the whole range, so bob's line shows), which a retry can
// use at once.
func TestUnknownBaseRefusalShowsTheCurrentLines(t *testing.T) {
	for _, explicit := range []bool{true, false} {
		t.Run(fmt.Sprintf("baseVersion given: %v", explicit), func(t *testing.T) {
			e := evicted(t)
			alice := client.Replace(tag(tenLines, 3), tag(tenLines, 7), "alice's block")
			base, afterBob, err := bobThenAlice(e, explicit, alice)
			cur := workspace.Version([]byte(afterBob))
			var stale client.StaleRefError
			if !errors.As(err, &stale) {
				t.Fatalf("err = %v, want STALE_REF", err)
			}
			if stale.CurrentVersion != cur || stale.Err.Metadata["baseVersion"] != base {
				t.Errorf("metadata %v, want currentVersion %s and baseVersion %s", stale.Err.Metadata, cur, base)
			}
			if !strings.Contains(stale.Err.Message, "no longer") || !strings.Contains(stale.Err.Message, base) || !strings.Contains(stale.Err.Message, "nothing was written") {
				t.Errorf("the message does not say the base is gone and nothing was written:\n%s", stale.Err.Message)
			}
			bobLine := tag(afterBob, 5) + "|bob was here"
			if !strings.Contains(stale.Err.Message, bobLine) {
				t.Errorf("the message does not show bob's line %q inside alice's range:\n%s", bobLine, stale.Err.Message)
			}
			if len(stale.Refs) != 2 {
				t.Fatalf("stale refs %v, want one per reference (start and end)", stale.Refs)
			}
			for i, r := range stale.Refs {
				if r.GetCurrentVersion() != cur || r.GetEditIndex() != 0 || len(r.GetFresh()) == 0 {
					t.Errorf("stale ref %d = %v", i, r)
				}
			}
			if got := stale.Refs[0].GetFresh(); !strings.Contains(strings.Join(got, "\n"), bobLine) {
				t.Errorf("the start's fresh lines %q do not cover the range", got)
			}
			if e.read("f.txt") != afterBob {
				t.Fatal("the refused edit changed the file")
			}
			// The refusal showed the current tags: a retry from them is
			// checked against the current file and lands.
			alice2 := e.agent("alice")
			retry := &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{
				client.Replace(stale.Refs[0].GetCurrentLine(), stale.Refs[1].GetCurrentLine(), "alice's block"),
			}}
			if explicit {
				retry.BaseVersion = cur
			}
			if _, err := alice2.Edit(e.ctx, retry); err != nil {
				t.Fatalf("retry from the fresh tags: %v", err)
			}
			if got := oneLine(e.read("f.txt")); got != "l1 l2 alice's block l8 l9 l10" {
				t.Errorf("file after the retry = %q", got)
			}
		})
	}
}

// TestUnknownBaseSingleLineHashCollision: bob inserts lines above the line
// alice references, and the line that now stands at alice's old number
// happens to have the same 2-hex hash. Checked by number and hash alone,
// alice's edit would land on that other line.
func TestUnknownBaseSingleLineHashCollision(t *testing.T) {
	h := hashline.Hasher{}
	const target = "\treturn alice(x)"
	var lines []string
	for i := range 12 {
		lines = append(lines, fmt.Sprintf("line %d", i+1))
	}
	// Line 6 is alice's; bob inserts two lines after line 2, so the line
	// at 6 is then the old line 4: make its hash collide with line 6's.
	lines[5] = target
	for i := 0; ; i++ {
		c := fmt.Sprintf("filler %d", i)
		if h.Sum(c) == h.Sum(target) {
			lines[3] = c
			break
		}
	}
	orig := strings.Join(lines, "\n") + "\n"
	for _, explicit := range []bool{true, false} {
		t.Run(fmt.Sprintf("baseVersion given: %v", explicit), func(t *testing.T) {
			e := evicted(t)
			e.write("f.txt", orig)
			alice, bob := e.agent("alice"), e.agent("bob")
			base := e.readAs(alice, "f.txt").GetVersion()
			e.readAs(bob, "f.txt")
			e.editAs(bob, "f.txt", client.InsertAfter(tag(orig, 2), "bob 1\nbob 2"))
			afterBob := e.read("f.txt")
			if tag(afterBob, 6) != tag(orig, 6) {
				t.Fatalf("the hashes do not collide: %s vs %s", tag(afterBob, 6), tag(orig, 6))
			}
			req := &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(orig, 6), "", "\treturn alice(y)")}}
			if explicit {
				req.BaseVersion = base
			}
			before := e.snapshot()
			_, err := alice.Edit(e.ctx, req)
			if !errors.Is(err, client.ErrStaleRef) {
				t.Errorf("err = %v, want STALE_REF", err)
			}
			e.assertUnchanged(before)
		})
	}
}

// TestUnknownBaseEditsWithoutReferences: append, prepend and replaceText
// read no line of the base by number, so a forgotten base does not stop
// them; they are resolved against the current file exactly as a rebase
// would resolve them.
func TestUnknownBaseEditsWithoutReferences(t *testing.T) {
	tests := []struct {
		name string
		mine *hashlinev1.FileEdit
		want string
	}{
		{"append", client.Append("end"), "l1 l2 l3 l4 bob was here l6 l7 l8 l9 l10 end"},
		{"prepend", client.Prepend("top"), "top l1 l2 l3 l4 bob was here l6 l7 l8 l9 l10"},
		{"replaceText of text that still stands", client.ReplaceText("l7\n", "seven\n", false), "l1 l2 l3 l4 bob was here l6 seven l8 l9 l10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := evicted(t)
			if _, _, err := bobThenAlice(e, true, tt.mine); err != nil {
				t.Fatalf("err = %v, want the edit applied", err)
			}
			if got := oneLine(e.read("f.txt")); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("replaceText of text another agent changed", func(t *testing.T) {
		e := evicted(t)
		_, afterBob, err := bobThenAlice(e, true, client.ReplaceText("l5", "five", false))
		if !errors.Is(err, client.ErrTextNotFound) || e.read("f.txt") != afterBob {
			t.Errorf("err = %v, want TEXT_NOT_FOUND and the file as bob left it", err)
		}
	})
	t.Run("a batch mixing references and append", func(t *testing.T) {
		e := evicted(t)
		if _, _, err := bobThenAlice(e, true, client.Append("end")); err != nil {
			t.Fatal(err)
		}
		afterAlice := e.read("f.txt")
		alice := e.agent("alice")
		_, err := alice.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", BaseVersion: workspace.Version([]byte(tenLines)), Edits: []*hashlinev1.FileEdit{
			client.Append("more"), client.Replace(tag(tenLines, 9), "", "nine"),
		}})
		if !errors.Is(err, client.ErrStaleRef) || e.read("f.txt") != afterAlice {
			t.Errorf("err = %v, want STALE_REF and nothing written", err)
		}
	})
}
