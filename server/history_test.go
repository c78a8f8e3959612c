package server_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/server"
)

// historyOpt is an engine option with a change history in a directory of
// the test's, outside the workspace.
func historyOpt(t *testing.T) engine.Option {
	t.Helper()
	log, err := history.Open(filepath.Join(t.TempDir(), "history"), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return engine.WithHistory(log)
}

func (e *env) history(ctx context.Context, req *hashlinev1.HistoryRequest) []*hashlinev1.HistoryEntry {
	e.t.Helper()
	resp, err := e.c.History(ctx, req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.GetEntries()
}

func TestHistoryAndBlameOfAnExternalChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, historyOpt(t))
	e.seed("f.txt", "one\ntwo\nthree\n")
	e.write("f.txt", "one\nTWO\nthree\n")
	now, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	got := e.history(e.ctx, &hashlinev1.HistoryRequest{Path: "f.txt", IncludeDiff: true})
	if len(got) != 1 {
		t.Fatalf("history = %v", got)
	}
	h := got[0]
	f := h.GetFiles()[0]
	if h.GetAgent() != "(external)" || h.GetKind() != hashlinev1.ChangeKind_CHANGE_KIND_EXTERNAL || h.GetChangeId() == "" ||
		f.GetPath() != "f.txt" || f.GetNewVersion() != now.GetVersion() || f.GetLinesAdded() != 1 || f.GetLinesRemoved() != 1 ||
		!strings.Contains(f.GetDiff(), "+"+tag("one\nTWO\nthree\n", 2)+"|TWO") || h.GetTime().AsTime().IsZero() {
		t.Fatalf("entry %v", h)
	}
	b, err := e.c.Blame(e.ctx, &hashlinev1.BlameRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if b.GetVersion() != now.GetVersion() || b.GetTotalLines() != 3 || len(b.GetLines()) != 3 {
		t.Fatalf("blame %v", b)
	}
	for i, l := range b.GetLines() {
		if l.GetLine().GetNumber() != now.GetLines()[i].GetNumber() || l.GetLine().GetHash() != now.GetLines()[i].GetHash() {
			t.Errorf("line %v, Read shows %v", l.GetLine(), now.GetLines()[i])
		}
		if i == 1 {
			if l.GetChangeId() != h.GetChangeId() || l.GetAgent() != "(external)" || l.GetBeforeHistory() || !l.GetTime().AsTime().Equal(h.GetTime().AsTime()) {
				t.Errorf("line 2: %v", l)
			}
		} else if !l.GetBeforeHistory() || l.GetChangeId() != "" || l.GetTime() != nil {
			t.Errorf("line %d: %v", i+1, l)
		}
	}
	// The JSON names outside tests rely on.
	js, err := protojson.Marshal(b.GetLines()[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"changeId"`) || !strings.Contains(string(js), `"agent"`) {
		t.Errorf("blame line as JSON: %s", js)
	}
}

// The server's own writes are not external changes, whether a read or the
// watcher sees them next.
func TestTheServersOwnWritesAreNotExternalChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, historyOpt(t), engine.WithWatchDebounce(10*time.Millisecond))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	st, err := e.c.RPC().Watch(ctx, &hashlinev1.WatchRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Header(); err != nil { // the subscription is live
		t.Fatal(err)
	}
	events := make(chan *hashlinev1.WatchResponse, 16)
	go func() {
		for {
			ev, err := st.Recv()
			if err != nil {
				return
			}
			events <- ev
		}
	}()
	e.seed("f.txt", "a\n")
	if _, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "a\nb\n"}); err != nil {
		t.Fatal(err)
	}
	e.write("marker.txt", "m\n") // made outside after the write: its event comes after any of the write's
	for seen := false; !seen; {
		select {
		case ev := <-events:
			if ev.GetExternal() && ev.GetPath() == "f.txt" {
				t.Fatalf("the server's write reported as external: %v", ev)
			}
			if ev.GetPath() == "marker.txt" {
				seen = true
				if ev.GetChangeId() == "" {
					t.Errorf("the external event has no change id: %v", ev)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event for the marker")
		}
	}
	if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range e.history(e.ctx, &hashlinev1.HistoryRequest{}) {
		paths = append(paths, h.GetAgent()+" "+h.GetFiles()[0].GetPath())
	}
	if !slices.Equal(paths, []string{"(external) marker.txt", "test f.txt"}) {
		t.Fatalf("history = %q, want the marker's creation and the server's write, by its agent", paths)
	}
}

func TestHistoryAndBlameUnderTokens(t *testing.T) {
	t.Parallel()
	toks, err := server.ParseTokens([]byte(tokensYAML))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvConfig(t, server.GRPCConfig{Auth: server.NewAuthenticator(toks, nil)}, nil, historyOpt(t))
	files := map[string]string{"src/a.go": "package a\n", "secret/key.txt": "k\n", "docs/api/x.md": "x\n"}
	for p, content := range files {
		e.write(p, content)
	}
	ctx := withToken(e.ctx, writerToken)
	for p, content := range files {
		if _, err := e.c.Read(ctx, &hashlinev1.ReadRequest{Path: p}); err != nil {
			t.Fatal(err)
		}
		e.write(p, content+"changed outside\n")
		if _, err := e.c.Read(ctx, &hashlinev1.ReadRequest{Path: p}); err != nil {
			t.Fatal(err)
		}
	}
	paths := func(entries []*hashlinev1.HistoryEntry) []string {
		var out []string
		for _, h := range entries {
			for _, f := range h.GetFiles() {
				out = append(out, f.GetPath())
			}
		}
		slices.Sort(out)
		return out
	}
	if got := paths(e.history(ctx, &hashlinev1.HistoryRequest{})); !slices.Equal(got, []string{"docs/api/x.md", "secret/key.txt", "src/a.go"}) {
		t.Fatalf("the writer sees %q", got)
	}
	t.Run("a read-only token may read the history and blame", func(t *testing.T) {
		ctx := withToken(e.ctx, readerToken)
		if got := paths(e.history(ctx, &hashlinev1.HistoryRequest{})); len(got) != 3 {
			t.Errorf("the reader sees %q", got)
		}
		if _, err := e.c.Blame(ctx, &hashlinev1.BlameRequest{Path: "secret/key.txt"}); err != nil {
			t.Errorf("Blame: %v", err)
		}
		_, err := e.c.RPC().Revert(ctx, &hashlinev1.RevertRequest{ChangeId: "c1-0000000a"})
		if codeOf(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "read-only token") {
			t.Errorf("Revert with a read-only token: %v", err)
		}
	})
	t.Run("a token limited to path prefixes sees only its paths' history", func(t *testing.T) {
		ctx := withToken(e.ctx, scopedToken)
		if got := paths(e.history(ctx, &hashlinev1.HistoryRequest{})); !slices.Equal(got, []string{"docs/api/x.md", "src/a.go"}) {
			t.Errorf("the scoped token sees %q of the workspace", got)
		}
		if got := paths(e.history(ctx, &hashlinev1.HistoryRequest{Path: "docs"})); !slices.Equal(got, []string{"docs/api/x.md"}) {
			t.Errorf("the scoped token sees %q of docs", got)
		}
		if _, err := e.c.History(ctx, &hashlinev1.HistoryRequest{Path: "secret/key.txt"}); codeOf(err) != codes.PermissionDenied {
			t.Errorf("History of a file outside its prefixes: %v", err)
		}
		if _, err := e.c.Blame(ctx, &hashlinev1.BlameRequest{Path: "secret/key.txt"}); codeOf(err) != codes.PermissionDenied {
			t.Errorf("Blame of a file outside its prefixes: %v", err)
		}
		// A revert of a change outside its prefixes is refused before
		// anything else; one inside is made.
		var secret, inside string
		for _, h := range e.history(withToken(e.ctx, writerToken), &hashlinev1.HistoryRequest{}) {
			switch h.GetFiles()[0].GetPath() {
			case "secret/key.txt":
				secret = h.GetChangeId()
			case "src/a.go":
				inside = h.GetChangeId()
			}
		}
		if _, err := e.c.RPC().Revert(ctx, &hashlinev1.RevertRequest{ChangeId: secret}); codeOf(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "may not access secret/key.txt") {
			t.Errorf("Revert of a change outside its prefixes: %v", err)
		}
		r, err := e.c.RPC().Revert(ctx, &hashlinev1.RevertRequest{ChangeId: inside})
		if err != nil || r.GetReverted() != inside || r.GetChangeId() == "" {
			t.Errorf("Revert of a change inside its prefixes: %v, %v", r, err)
		}
		if got := e.read("src/a.go"); got != "package a\n" {
			t.Errorf("src/a.go after the revert of the change made outside: %q", got)
		}
		if got := e.read("secret/key.txt"); got != "k\nchanged outside\n" {
			t.Errorf("secret/key.txt: %q", got)
		}
	})
}

func TestHistoryRefusesBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, historyOpt(t))
	for _, tc := range []struct {
		req  *hashlinev1.HistoryRequest
		want error
	}{
		{&hashlinev1.HistoryRequest{MaxEntries: -1}, client.ErrInvalidArgument},
		{&hashlinev1.HistoryRequest{PageToken: "not-a-token"}, client.ErrInvalidArgument},
		{&hashlinev1.HistoryRequest{Path: "../out"}, client.ErrOutsideRoot},
	} {
		if _, err := e.c.History(e.ctx, tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%v: err = %v, want %v", tc.req, err, tc.want)
		}
	}
	if _, err := e.c.Blame(e.ctx, &hashlinev1.BlameRequest{Path: "none.txt"}); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("Blame of a missing file: %v", err)
	}

	// A server without a history says so.
	plain := newEnv(t)
	_, err := plain.c.History(plain.ctx, &hashlinev1.HistoryRequest{})
	if err == nil || !strings.Contains(err.Error(), "keeps no change history") {
		t.Errorf("History without a history: %v", err)
	}
}
