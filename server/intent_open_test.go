package server_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// failingRemovals is an intent log whose records' removals fail while
// fails is above 0, as when the state directory is briefly not writable
// (which chmod cannot make it for root).
type failingRemovals struct {
	log   *state.Intents
	fails atomic.Int32
}

func (f *failingRemovals) Record(in state.Intent) (func() error, error) {
	done, err := f.log.Record(in)
	if err != nil {
		return nil, err
	}
	return func() error {
		if f.fails.Add(-1) >= 0 {
			return errors.New("injected: the state directory is not writable")
		}
		return done()
	}, nil
}

// syncBuffer is a log sink that the server's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A set's record whose removal failed once Apply had done every step
// stays on disk. Later changes that put back what the set changed (a
// deleted file written again with its old content, a moved file moved
// back) look to a replay like the set never ran: the next start must not
// redo the set over them. The server keeps such a record and settles it
// before any change to its paths: it removes it, or refuses the change.
func TestARecordThatCouldNotBeRemovedIsNeverReplayedOverLaterChanges(t *testing.T) {
	const a, b = "a's old content\n", "b's content\n"
	cases := []struct {
		name string
		// fails is how many removals fail: the set's own, then the
		// later changes' tries.
		fails int32
		// refused says whether the later changes are refused.
		refused bool
		// want is every file after the later changes and a restart ("" for
		// none).
		want map[string]string
	}{
		{
			name:  "a later change removes the record first, and the restart keeps it",
			fails: 1, refused: false,
			want: map[string]string{"a.txt": a, "b.txt": b, "moved/b.txt": "", "other.txt": "other\n"},
		},
		{
			name:  "a later change is refused while the record cannot be removed, and the restart keeps the set",
			fails: 1 << 20, refused: true,
			want: map[string]string{"a.txt": "", "b.txt": "", "moved/b.txt": b, "other.txt": "other\n"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			sd, err := state.Open(t.TempDir(), root)
			if err != nil {
				t.Fatal(err)
			}
			log, err := sd.Intents(true)
			if err != nil {
				t.Fatal(err)
			}
			intents := &failingRemovals{log: log}
			intents.fails.Store(tc.fails)
			var logs syncBuffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			e := newEnvIn(t, root, server.GRPCConfig{}, nil, engine.WithIntentLog(intents), engine.WithLogger(logger))
			e.write("a.txt", a)
			e.write("b.txt", b)

			if _, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{
				deleteChange("a.txt"), moveChange("b.txt", "moved/b.txt"),
			}}); err != nil {
				t.Fatalf("the set: %v", err)
			}
			if left, _ := os.ReadDir(log.Dir()); len(left) != 1 {
				t.Fatalf("the intent log holds %d entries, want the set's record", len(left))
			}
			if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "could not be removed") {
				t.Errorf("the failed removal was not logged as an error:\n%s", logs.String())
			}
			if st := e.svc.Engine().IntentStats(); st.RemoveFailures != 1 || st.Open != 1 {
				t.Errorf("stats after the set = %+v, want 1 removal failure and 1 open record", st)
			}

			// The later changes: a.txt again with its old content, b.txt
			// moved back; and a change to a path the set did not touch.
			_, errWrite := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "a.txt", Content: a})
			_, errMove := e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "moved/b.txt", To: "b.txt"})
			if _, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "other.txt", Content: "other\n"}); err != nil {
				t.Fatalf("a write to a path the set did not touch: %v", err)
			}
			for name, err := range map[string]error{"the write of a.txt": errWrite, "the move back": errMove} {
				switch {
				case !tc.refused && err != nil:
					t.Fatalf("%s: %v", name, err)
				case tc.refused && err == nil:
					t.Fatalf("%s was made while a record that would undo it is on disk", name)
				case tc.refused && (reasonOf(err) != server.ReasonIO || !strings.Contains(err.Error(), "state directory")):
					t.Fatalf("%s: %v, want IO_ERROR naming the state directory", name, err)
				}
			}
			if st := e.svc.Engine().IntentStats(); tc.refused != (st.Open == 1) {
				t.Errorf("stats after the later changes = %+v", st)
			}

			// The restart: a new workspace over the same directories.
			ws, err := workspace.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			var restart syncBuffer
			r, err := engine.Recover(ws, log, slog.New(slog.NewTextHandler(&restart, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(restart.String(), "redone=") && !strings.Contains(restart.String(), "redone=0") {
				t.Errorf("the restart redid steps:\n%s (%+v)", restart.String(), r)
			}
			for p, want := range tc.want {
				got := get(root, p)
				if want == "" {
					if _, err := os.Lstat(filepath.Join(root, p)); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("%s = %q, want no file", p, got)
					}
				} else if got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
		})
	}
}
