package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/server"
)

// The Revert RPC over the real gRPC face: what it leaves on disk and in
// the history, and its refusals with their details.

// numberedLines is a file of n lines, "line 1" to "line n".
func numberedLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// withLines is content with lines from..to (1-based, inclusive) replaced
// by text.
func withLines(content string, from, to int, text string) string {
	lines := strings.SplitAfter(content, "\n")
	lines = lines[:len(lines)-1]
	return strings.Join(lines[:from-1], "") + text + strings.Join(lines[to:], "")
}

// newestChange is the newest entry of the history.
func (e *env) newestChange() *hashlinev1.HistoryEntry {
	e.t.Helper()
	got := e.history(e.ctx, &hashlinev1.HistoryRequest{MaxEntries: 1})
	if len(got) == 0 {
		e.t.Fatal("the history is empty")
	}
	return got[0]
}

// linesAs has agent read p and replace its lines from..to with text, and
// returns the change's id.
func (e *env) linesAs(agent, p string, from, to int, text string) string {
	e.t.Helper()
	ctx := asAgent(e.ctx, agent)
	r, err := e.c.RPC().Read(ctx, &hashlinev1.ReadRequest{Path: p})
	if err != nil {
		e.t.Fatal(err)
	}
	edit := &hashlinev1.FileEdit{Op: &hashlinev1.FileEdit_Replace{Replace: &hashlinev1.ReplaceOp{
		Start: lineTag(r, from), End: lineTag(r, to), Text: text}}}
	if _, err := e.c.RPC().Edit(ctx, &hashlinev1.EditRequest{Path: p, Edits: []*hashlinev1.FileEdit{edit}}); err != nil {
		e.t.Fatal(err)
	}
	return e.newestChange().GetChangeId()
}

// lineTag is the tag Read gave line n.
func lineTag(r *hashlinev1.ReadResponse, n int) string {
	l := r.GetLines()[n-1]
	return fmt.Sprintf("%d:%s", l.GetNumber(), l.GetHash())
}

// doAs makes one call as agent and returns the id of the change it made.
func (e *env) doAs(agent string, call func(ctx context.Context, rpc hashlinev1.FileServiceClient) error) string {
	e.t.Helper()
	if err := call(asAgent(e.ctx, agent), e.c.RPC()); err != nil {
		e.t.Fatal(err)
	}
	return e.newestChange().GetChangeId()
}

func laterChanges(err error) []string {
	var out []string
	for _, d := range status.Convert(err).Details() {
		if l, ok := d.(*hashlinev1.LaterChange); ok {
			out = append(out, l.GetChangeId()+" "+l.GetAgent()+" "+l.GetPath())
		}
	}
	return out
}

func staleRefs(err error) []*hashlinev1.StaleRef {
	var out []*hashlinev1.StaleRef
	for _, d := range status.Convert(err).Details() {
		if s, ok := d.(*hashlinev1.StaleRef); ok {
			out = append(out, s)
		}
	}
	return out
}

func TestRevert(t *testing.T) {
	t.Parallel()
	orig := numberedLines(60)
	abc := map[string]string{"a.txt": numberedLines(20), "b.txt": numberedLines(20), "c.txt": numberedLines(20)}
	// setA is A's change set: line 5 of each of a.txt, b.txt and c.txt.
	setA := func(e *env) string {
		return e.doAs("A", func(ctx context.Context, rpc hashlinev1.FileServiceClient) error {
			var changes []*hashlinev1.Change
			for _, p := range []string{"a.txt", "b.txt", "c.txt"} {
				if _, err := rpc.Read(ctx, &hashlinev1.ReadRequest{Path: p}); err != nil {
					return err
				}
				changes = append(changes, &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{Path: p,
					Edits: []*hashlinev1.FileEdit{{Op: &hashlinev1.FileEdit_Replace{Replace: &hashlinev1.ReplaceOp{Start: tag(abc[p], 5), Text: "A's " + p + "\n"}}}}}}})
			}
			_, err := rpc.Apply(ctx, &hashlinev1.ApplyRequest{Changes: changes})
			return err
		})
	}
	cases := []struct {
		name  string
		files map[string]string
		// change makes the change A reverts, and what follows it; it returns
		// its id, and for a refusal the later changes it must name
		// ("ID AGENT PATH").
		change func(e *env) (id string, later []string)
		dryRun bool
		// want are files after the revert; nil for a refusal.
		want  map[string]string
		kinds []string // the revert's results, in order
	}{
		{
			name: "another agent's later lines stay", files: map[string]string{"f.txt": orig},
			change: func(e *env) (string, []string) {
				id := e.linesAs("A", "f.txt", 10, 12, "A ten\nA eleven\nA twelve\n")
				e.linesAs("B", "f.txt", 40, 45, "B forty\n")
				return id, nil
			},
			want: map[string]string{"f.txt": withLines(orig, 40, 45, "B forty\n")}, kinds: []string{"edit"},
		},
		{
			name: "another agent changed a line since", files: map[string]string{"f.txt": orig},
			change: func(e *env) (string, []string) {
				id := e.linesAs("A", "f.txt", 10, 12, "A ten\nA eleven\nA twelve\n")
				idB := e.linesAs("B", "f.txt", 11, 11, "B eleven\n")
				return id, []string{idB + " B f.txt"}
			},
		},
		{
			name: "a set, one file edited since in other lines", files: abc,
			change: func(e *env) (string, []string) {
				id := setA(e)
				e.linesAs("B", "b.txt", 15, 16, "B\n")
				return id, nil
			},
			want:  map[string]string{"a.txt": abc["a.txt"], "b.txt": withLines(abc["b.txt"], 15, 16, "B\n"), "c.txt": abc["c.txt"]},
			kinds: []string{"edit", "edit", "edit"},
		},
		{
			name: "a set, one file's lines changed since", files: abc,
			change: func(e *env) (string, []string) {
				id := setA(e)
				idB := e.linesAs("B", "c.txt", 5, 5, "B five\n")
				return id, []string{idB + " B c.txt"}
			},
		},
		{
			name: "a delete", files: map[string]string{"f.txt": "one\ntwo\n"},
			change: func(e *env) (string, []string) {
				return e.doAs("A", func(ctx context.Context, rpc hashlinev1.FileServiceClient) error {
					_, err := rpc.Delete(ctx, &hashlinev1.DeleteRequest{Path: "f.txt"})
					return err
				}), nil
			},
			want: map[string]string{"f.txt": "one\ntwo\n"}, kinds: []string{"write"},
		},
		{
			name: "a delete whose path was taken since", files: map[string]string{"f.txt": "one\ntwo\n"},
			change: func(e *env) (string, []string) {
				id := e.doAs("A", func(ctx context.Context, rpc hashlinev1.FileServiceClient) error {
					_, err := rpc.Delete(ctx, &hashlinev1.DeleteRequest{Path: "f.txt"})
					return err
				})
				idB := e.doAs("B", func(ctx context.Context, rpc hashlinev1.FileServiceClient) error {
					_, err := rpc.Write(ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "B's\n"})
					return err
				})
				return id, []string{idB + " B f.txt"}
			},
		},
		{
			name: "a move", files: map[string]string{"f.txt": "one\n"},
			change: func(e *env) (string, []string) {
				return e.doAs("A", func(ctx context.Context, rpc hashlinev1.FileServiceClient) error {
					_, err := rpc.Move(ctx, &hashlinev1.MoveRequest{From: "f.txt", To: "d/g.txt"})
					return err
				}), nil
			},
			want: map[string]string{"f.txt": "one\n"}, kinds: []string{"move"},
		},
		{
			name: "a move whose file was edited since", files: map[string]string{"f.txt": "one\ntwo\n"},
			change: func(e *env) (string, []string) {
				id := e.doAs("A", func(ctx context.Context, rpc hashlinev1.FileServiceClient) error {
					_, err := rpc.Move(ctx, &hashlinev1.MoveRequest{From: "f.txt", To: "g.txt"})
					return err
				})
				idB := e.linesAs("B", "g.txt", 1, 1, "ONE\n")
				return id, []string{idB + " B g.txt"}
			},
		},
		{
			name: "a created file", files: map[string]string{"f.txt": "one\n"},
			change: func(e *env) (string, []string) {
				return e.doAs("A", func(ctx context.Context, rpc hashlinev1.FileServiceClient) error {
					_, err := rpc.Write(ctx, &hashlinev1.WriteRequest{Path: "new/n.txt", Content: "new\n"})
					return err
				}), nil
			},
			want: map[string]string{"f.txt": "one\n", "new/n.txt": "<none>"}, kinds: []string{"delete"},
		},
		{
			name: "a created file edited since", files: map[string]string{"f.txt": "one\n"},
			change: func(e *env) (string, []string) {
				id := e.doAs("A", func(ctx context.Context, rpc hashlinev1.FileServiceClient) error {
					_, err := rpc.Write(ctx, &hashlinev1.WriteRequest{Path: "n.txt", Content: "new\n"})
					return err
				})
				idB := e.linesAs("B", "n.txt", 1, 1, "B's\n")
				return id, []string{idB + " B n.txt"}
			},
		},
		{
			name: "a dry run", files: map[string]string{"f.txt": orig}, dryRun: true,
			change: func(e *env) (string, []string) {
				return e.linesAs("A", "f.txt", 3, 3, "A three\n"), nil
			},
			want: map[string]string{"f.txt": withLines(orig, 3, 3, "A three\n")}, kinds: []string{"edit"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, historyOpt(t))
			for p, content := range c.files {
				e.write(p, content)
			}
			id, later := c.change(e)
			before := e.snapshot()
			newest := e.newestChange().GetChangeId()
			resp, err := e.c.RPC().Revert(asAgent(e.ctx, "A"), &hashlinev1.RevertRequest{ChangeId: id, DryRun: c.dryRun})
			if c.want == nil {
				if codeOf(err) != codes.Aborted || reasonOf(err) != server.ReasonRevertConflict {
					t.Fatalf("Revert = %v, want REVERT_CONFLICT", err)
				}
				if got := laterChanges(err); strings.Join(got, ",") != strings.Join(later, ",") {
					t.Errorf("later changes %q, want %q", got, later)
				}
				if !strings.Contains(status.Convert(err).Message(), later[0][:strings.IndexByte(later[0], ' ')]+" (agent B)") {
					t.Errorf("the message does not name B's change:\n%s", status.Convert(err).Message())
				}
				e.assertUnchanged(before)
				if got := e.newestChange().GetChangeId(); got != newest {
					t.Errorf("a refused revert recorded %s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range c.want {
				got := "<none>"
				if _, ok := e.snapshot()[filepath.FromSlash(p)]; ok {
					got = e.read(p)
				}
				if got != want {
					t.Errorf("%s:\n%s\nwant\n%s", p, got, want)
				}
			}
			var kinds []string
			for _, r := range resp.GetResults() {
				switch {
				case r.GetEdit() != nil:
					kinds = append(kinds, "edit")
				case r.GetWrite() != nil:
					kinds = append(kinds, "write")
				case r.GetDelete() != nil:
					kinds = append(kinds, "delete")
				case r.GetMove() != nil:
					kinds = append(kinds, "move")
				}
			}
			if strings.Join(kinds, ",") != strings.Join(c.kinds, ",") || resp.GetReverted() != id || resp.GetDryRun() != c.dryRun {
				t.Errorf("response %v, want results %q", resp, c.kinds)
			}
			h := e.newestChange()
			if c.dryRun {
				if h.GetChangeId() != newest || resp.GetChangeId() != "" || !strings.Contains(resp.GetResults()[0].GetEdit().GetTaggedDiff(), "-A three") {
					t.Errorf("a dry run recorded %v, or answered %v", h, resp)
				}
				e.assertUnchanged(before)
				return
			}
			if h.GetChangeId() != resp.GetChangeId() || h.GetKind() != hashlinev1.ChangeKind_CHANGE_KIND_REVERT || h.GetReverts() != id || h.GetAgent() != "A" ||
				len(h.GetFiles()) != len(c.kinds) {
				t.Errorf("the revert's history entry %v (response %v)", h, resp)
			}
		})
	}
}

// TestRevertConflictShowsTheLinesWithFreshTags: the StaleRef details of a
// REVERT_CONFLICT are the lines as they are now, tagged as a Read tags
// them, the line the later change wrote among them.
func TestRevertConflictShowsTheLinesWithFreshTags(t *testing.T) {
	t.Parallel()
	e := newEnv(t, historyOpt(t))
	e.write("f.txt", numberedLines(30))
	id := e.linesAs("A", "f.txt", 10, 12, "A ten\nA eleven\nA twelve\n")
	e.linesAs("B", "f.txt", 11, 11, "B eleven\n")
	now := e.read("f.txt")
	_, err := e.c.RPC().Revert(asAgent(e.ctx, "A"), &hashlinev1.RevertRequest{ChangeId: id})
	refs := staleRefs(err)
	if len(refs) == 0 {
		t.Fatalf("no StaleRef details: %v", err)
	}
	found := false
	for _, r := range refs {
		for _, f := range r.GetFresh() {
			n := 0
			fmt.Sscanf(f, "%d:", &n)
			if !strings.HasPrefix(f, tag(now, n)+"|") {
				t.Errorf("fresh line %q is not tagged as the file is now (%s)", f, tag(now, n))
			}
			found = found || f == tag(now, 11)+"|B eleven"
		}
	}
	if !found {
		t.Errorf("the fresh lines %v do not show B's line", refs)
	}
}

// TestRevertOfARevertOfARevertOverGRPC: every revert is a change of its
// own with its own id, and reverting it undoes it.
func TestRevertOfARevertOfARevertOverGRPC(t *testing.T) {
	t.Parallel()
	e := newEnv(t, historyOpt(t))
	orig := numberedLines(8)
	e.write("f.txt", orig)
	id := e.linesAs("A", "f.txt", 2, 2, "A two\n")
	edited := e.read("f.txt")
	for i, want := range []string{orig, edited, orig} {
		resp, err := e.c.RPC().Revert(asAgent(e.ctx, "A"), &hashlinev1.RevertRequest{ChangeId: id})
		if err != nil {
			t.Fatalf("revert %d: %v", i+1, err)
		}
		if got := e.read("f.txt"); got != want {
			t.Fatalf("after revert %d: %q, want %q", i+1, got, want)
		}
		h := e.newestChange()
		if h.GetKind() != hashlinev1.ChangeKind_CHANGE_KIND_REVERT || h.GetReverts() != id || h.GetChangeId() != resp.GetChangeId() {
			t.Fatalf("revert %d's entry %v", i+1, h)
		}
		id = resp.GetChangeId()
	}
}

// TestRevertRequestIDReturnsTheFirstOutcome: a retry with the same
// request_id gets the first revert's response and reverts nothing again.
func TestRevertRequestIDReturnsTheFirstOutcome(t *testing.T) {
	t.Parallel()
	e := newEnv(t, historyOpt(t))
	e.write("f.txt", numberedLines(5))
	id := e.linesAs("A", "f.txt", 2, 2, "A two\n")
	req := &hashlinev1.RevertRequest{ChangeId: id, RequestId: "0123456789abcdef"}
	first, err := e.c.RPC().Revert(asAgent(e.ctx, "A"), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.c.RPC().Revert(asAgent(e.ctx, "A"), req)
	if err != nil || !proto.Equal(first, again) {
		t.Fatalf("the retry answered %v, %v; the first %v", again, err, first)
	}
	h := e.newestChange()
	if h.GetChangeId() != first.GetChangeId() || h.GetRequestId() != req.GetRequestId() {
		t.Fatalf("newest change %v, want the one revert, with its request_id", h)
	}
	if got := e.read("f.txt"); got != numberedLines(5) {
		t.Fatalf("f.txt: %q", got)
	}
}

// TestRevertRefusals: ids the history cannot name, and changes it cannot
// undo, each with the reason that says which; nothing is written.
func TestRevertRefusals(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var clock = func() time.Time { return now }
	log, err := history.Open(filepath.Join(t.TempDir(), "history"), history.Options{MaxAge: time.Hour, Now: func() time.Time { return clock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	e := newEnv(t, engine.WithHistory(log), engine.WithSnapshotCacheBytes(0))
	e.write("f.txt", "a\nb\n")
	old := e.linesAs("A", "f.txt", 1, 1, "A\n")
	clock = func() time.Time { return now.Add(2 * time.Hour) }
	e.write("f.txt", "A\nB\n")
	if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil { // records the external change, without hunks
		t.Fatal(err)
	}
	external := e.newestChange().GetChangeId()
	x, err := history.ParseID(external)
	if err != nil {
		t.Fatal(err)
	}
	unknown := fmt.Sprintf("c%d-%s", x.Seq()+3, external[strings.IndexByte(external, '-')+1:])
	before := e.snapshot()
	for _, c := range []struct {
		id     string
		code   codes.Code
		reason hashlinev1.ErrorReason
	}{
		{"not-an-id", codes.InvalidArgument, server.ReasonMalformedChangeID},
		{unknown, codes.NotFound, server.ReasonUnknownChange},
		{old, codes.NotFound, server.ReasonChangeExpired},
		{external, codes.FailedPrecondition, server.ReasonNotRevertible},
	} {
		_, err := e.c.RPC().Revert(e.ctx, &hashlinev1.RevertRequest{ChangeId: c.id})
		if codeOf(err) != c.code || reasonOf(err) != c.reason {
			t.Errorf("Revert(%s) = %v, want %v %v", c.id, err, c.code, c.reason)
		}
	}
	e.assertUnchanged(before)

	plain := newEnv(t)
	if _, err := plain.c.RPC().Revert(plain.ctx, &hashlinev1.RevertRequest{ChangeId: "c1-0000000a"}); err == nil || !strings.Contains(err.Error(), "keeps no change history") {
		t.Errorf("Revert without a history: %v", err)
	}
}

// TestRevertUnderTokens: a read-only token may not revert; a path-prefix
// token may revert a change all of whose paths it may write, and not one
// with a path outside its prefixes, even if it may write the others.
func TestRevertUnderTokens(t *testing.T) {
	t.Parallel()
	toks, err := server.ParseTokens([]byte(tokensYAML))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvConfig(t, server.GRPCConfig{Auth: server.NewAuthenticator(toks, nil)}, nil, historyOpt(t))
	e.write("src/a.go", "package a\n")
	e.write("secret/key.txt", "k\n")
	writer := withToken(e.ctx, writerToken)
	do := func(ctx context.Context, changes ...*hashlinev1.Change) string {
		t.Helper()
		for _, c := range changes {
			if w := c.GetWrite(); w != nil {
				if _, err := e.c.RPC().Read(ctx, &hashlinev1.ReadRequest{Path: w.GetPath()}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := e.c.RPC().Apply(ctx, &hashlinev1.ApplyRequest{Changes: changes}); err != nil {
			t.Fatal(err)
		}
		return e.history(writer, &hashlinev1.HistoryRequest{MaxEntries: 1})[0].GetChangeId()
	}
	write := func(p, content string) *hashlinev1.Change {
		return &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: &hashlinev1.WriteRequest{Path: p, Content: content}}}
	}
	both := do(writer, write("src/a.go", "package a // both\n"), write("secret/key.txt", "k2\n"))
	inside := do(withToken(e.ctx, scopedToken), write("src/a.go", "package a // scoped\n"))
	before := e.snapshot()
	for _, c := range []struct {
		tok, id string
		want    hashlinev1.ErrorReason
	}{
		{readerToken, inside, server.ReasonReadOnly},
		{scopedToken, both, server.ReasonPathNotAllowed},
	} {
		if _, err := e.c.RPC().Revert(withToken(e.ctx, c.tok), &hashlinev1.RevertRequest{ChangeId: c.id}); codeOf(err) != codes.PermissionDenied || reasonOf(err) != c.want {
			t.Errorf("Revert(%s) with %s: %v, want %v", c.id, c.tok, err, c.want)
		}
	}
	e.assertUnchanged(before)
	resp, err := e.c.RPC().Revert(withToken(e.ctx, scopedToken), &hashlinev1.RevertRequest{ChangeId: inside})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.read("src/a.go"); got != "package a // both\n" {
		t.Errorf("src/a.go: %q", got)
	}
	if h := e.history(writer, &hashlinev1.HistoryRequest{MaxEntries: 1})[0]; h.GetAgent() != "scoped" || h.GetChangeId() != resp.GetChangeId() {
		t.Errorf("the revert's entry %v", h)
	}
}
