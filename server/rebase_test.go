package server_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
)

// tenLines is the file the rebase cases start from.
const tenLines = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n"

// agent returns a client on the env's connection that calls as name.
func (e *env) agent(name string) *client.Client {
	return client.New(e.conn, client.WithAgentID(name))
}

// readAs reads path as c and returns the response.
func (e *env) readAs(c *client.Client, path string) *hashlinev1.ReadResponse {
	e.t.Helper()
	r, err := c.Read(e.ctx, &hashlinev1.ReadRequest{Path: path})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// editAs edits path as c and fails the test on error.
func (e *env) editAs(c *client.Client, path string, edits ...*hashlinev1.FileEdit) *hashlinev1.EditResponse {
	e.t.Helper()
	resp, err := c.Edit(e.ctx, &hashlinev1.EditRequest{Path: path, Edits: edits})
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestEditRebasesAcrossAnotherAgentsEdit: agents A and B read the same
// version; B edits first; A's edit, made from the old tags, is rebased.
func TestEditRebasesAcrossAnotherAgentsEdit(t *testing.T) {
	tests := []struct {
		name  string
		other *hashlinev1.FileEdit // B's edit, from tags of tenLines
		mine  *hashlinev1.FileEdit // A's edit, from tags of tenLines
		want  string               // the file after both
		moved []*hashlinev1.MovedRef
	}{
		{
			name:  "an edit below another agent's insertion moves down",
			other: client.InsertAfter(tag(tenLines, 2), "b1\nb2"),
			mine:  client.Replace(tag(tenLines, 8), "", "A8"),
			want:  "l1 l2 b1 b2 l3 l4 l5 l6 l7 A8 l9 l10",
			moved: []*hashlinev1.MovedRef{{Ref: tag(tenLines, 8), From: 8, To: 10}},
		},
		{
			name:  "an edit above another agent's change keeps its number",
			other: client.Replace(tag(tenLines, 9), "", "B9\nB9b"),
			mine:  client.Delete(tag(tenLines, 2), tag(tenLines, 3)),
			want:  "l1 l4 l5 l6 l7 l8 B9 B9b l10",
		},
		{
			name:  "an insertion next to another agent's deletion lands by its anchor",
			other: client.Delete(tag(tenLines, 5), tag(tenLines, 6)),
			mine:  client.InsertBefore(tag(tenLines, 7), "A"),
			want:  "l1 l2 l3 l4 A l7 l8 l9 l10",
			moved: []*hashlinev1.MovedRef{{Ref: tag(tenLines, 7), From: 7, To: 5}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("f.txt", tenLines)
			a, b := e.agent("a"), e.agent("b")
			base := e.readAs(a, "f.txt").GetVersion()
			e.readAs(b, "f.txt")
			e.editAs(b, "f.txt", tt.other)
			resp := e.editAs(a, "f.txt", tt.mine)
			if got := oneLine(e.read("f.txt")); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
			if resp.GetRebasedFrom() != base {
				t.Errorf("rebasedFrom = %q, want A's read version %q", resp.GetRebasedFrom(), base)
			}
			if len(resp.GetMoved()) != len(tt.moved) {
				t.Fatalf("moved = %v, want %v", resp.GetMoved(), tt.moved)
			}
			for i, m := range tt.moved {
				if g := resp.GetMoved()[i]; g.GetRef() != m.GetRef() || g.GetFrom() != m.GetFrom() || g.GetTo() != m.GetTo() {
					t.Errorf("moved[%d] = %v, want %v", i, g, m)
				}
			}
			if resp.GetVersion() != e.readAs(a, "f.txt").GetVersion() {
				t.Error("the response's version is not the file's")
			}
		})
	}
}

// TestEditConflictsWithAnotherAgentsChange: references that another
// agent's change touched come back as STALE_REF with one StaleRef each,
// its reason, and fresh lines; nothing is written.
func TestEditConflictsWithAnotherAgentsChange(t *testing.T) {
	tests := []struct {
		name    string
		other   *hashlinev1.FileEdit
		mine    *hashlinev1.FileEdit
		reason  string
		line    int32
		current string // StaleRef.currentLine
	}{
		{
			name:    "editing a line another agent changed",
			other:   client.Replace(tag(tenLines, 5), "", "B5"),
			mine:    client.Replace(tag(tenLines, 5), "", "A5"),
			reason:  "CHANGED",
			line:    5,
			current: tag("l1\nl2\nl3\nl4\nB5\n", 5) + "|B5",
		},
		{
			name:   "deleting a line another agent deleted",
			other:  client.Delete(tag(tenLines, 5), ""),
			mine:   client.Delete(tag(tenLines, 4), tag(tenLines, 5)),
			reason: "DELETED",
			line:   5,
		},
		{
			name:    "a range spanning a line another agent changed",
			other:   client.Replace(tag(tenLines, 5), "", "B5"),
			mine:    client.Replace(tag(tenLines, 3), tag(tenLines, 7), "A"),
			reason:  "CONFLICT",
			line:    3,
			current: tag(tenLines, 3) + "|l3",
		},
		{
			name:    "inserting where another agent inserted",
			other:   client.InsertAfter(tag(tenLines, 5), "B"),
			mine:    client.InsertAfter(tag(tenLines, 5), "A"),
			reason:  "CONFLICT",
			line:    5,
			current: tag(tenLines, 5) + "|l5",
		},
		{
			name:    "inserting before a line where another agent inserted",
			other:   client.InsertAfter(tag(tenLines, 5), "B"),
			mine:    client.InsertBefore(tag(tenLines, 6), "A"),
			reason:  "CONFLICT",
			line:    6,
			current: tag("l1\nl2\nl3\nl4\nl5\nB\nl6\n", 7) + "|l6",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("f.txt", tenLines)
			a, b := e.agent("a"), e.agent("b")
			base := e.readAs(a, "f.txt").GetVersion()
			e.readAs(b, "f.txt")
			cur := e.editAs(b, "f.txt", tt.other).GetVersion()
			before := e.snapshot()
			_, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{tt.mine}})
			var stale client.StaleRefError
			if !errors.As(err, &stale) || stale.Err.Code != codes.Aborted {
				t.Fatalf("err = %v, want ABORTED STALE_REF", err)
			}
			e.assertUnchanged(before)
			if len(stale.Refs) != 1 {
				t.Fatalf("refs = %v, want one", stale.Refs)
			}
			r := stale.Refs[0]
			if r.GetReason() != tt.reason || r.GetLine() != tt.line || r.GetCurrentLine() != tt.current ||
				r.GetCurrentVersion() != cur || len(r.GetFresh()) == 0 {
				t.Errorf("stale ref = %v\nwant reason %s line %d currentLine %q version %s", r, tt.reason, tt.line, tt.current, cur)
			}
			if stale.CurrentVersion != cur || stale.Err.Metadata["baseVersion"] != base {
				t.Errorf("metadata = %v, want currentVersion %s and baseVersion %s", stale.Err.Metadata, cur, base)
			}
			if !strings.Contains(stale.Err.Message, "changed since last read") {
				t.Errorf("message: %s", stale.Err.Message)
			}
			// The conflict showed A the current lines: retrying from the
			// fresh tags works without a Read.
			retry := r.GetCurrentLine()
			if retry == "" {
				retry = r.GetFresh()[0]
			}
			if _, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.InsertAfter(retry, "A")}}); err != nil {
				t.Fatalf("retry from fresh tag %q: %v", retry, err)
			}
		})
	}
}

// TestEditReportsEveryConflictOfABatch: all failing references at once,
// and the message lists the references that still hold.
func TestEditReportsEveryConflictOfABatch(t *testing.T) {
	e := newEnv(t)
	e.write("f.txt", tenLines)
	a, b := e.agent("a"), e.agent("b")
	e.readAs(a, "f.txt")
	e.readAs(b, "f.txt")
	e.editAs(b, "f.txt", client.Prepend("top"), client.Replace(tag(tenLines, 3), "", "B3"), client.Delete(tag(tenLines, 9), ""))
	_, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{
		client.Replace(tag(tenLines, 3), "", "A3"),
		client.Replace(tag(tenLines, 6), "", "A6"),
		client.InsertAfter(tag(tenLines, 9), "A9"),
	}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) || len(stale.Refs) != 2 {
		t.Fatalf("err = %v, want two stale refs", err)
	}
	if r := stale.Refs[0]; r.GetEditIndex() != 0 || r.GetReason() != "CHANGED" {
		t.Errorf("first = %v", r)
	}
	if r := stale.Refs[1]; r.GetEditIndex() != 2 || r.GetReason() != "DELETED" {
		t.Errorf("second = %v", r)
	}
	if !strings.Contains(stale.Err.Message, tag(tenLines, 6)+" is now line 7") {
		t.Errorf("message does not say where the holding reference moved:\n%s", stale.Err.Message)
	}
}

// TestEditFromABaseEvictedFromTheCache: with no snapshot of the base, a
// reference is refused with STALE_REF even where it still matches the
// current file by number and hash, because nothing proves it is the line
// the agent read; nothing is written. The refusal shows the agent the
// current lines, so a retry from them is checked against the current file
// and lands.
func TestEditFromABaseEvictedFromTheCache(t *testing.T) {
	e := newEnv(t, engine.WithSnapshotCacheBytes(0))
	e.write("f.txt", tenLines)
	a, b := e.agent("a"), e.agent("b")
	base := e.readAs(a, "f.txt").GetVersion()
	e.readAs(b, "f.txt")
	cur := e.editAs(b, "f.txt", client.Replace(tag(tenLines, 9), "", "B9")).GetVersion()
	before := e.snapshot()
	// Line 2 is untouched and matches by number and hash, but only the
	// base could prove it.
	_, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(tenLines, 2), "", "A2")}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) || len(stale.Refs) != 1 {
		t.Fatalf("err = %v, want one STALE_REF", err)
	}
	e.assertUnchanged(before)
	r := stale.Refs[0]
	if r.GetCurrentLine() != tag(tenLines, 2)+"|l2" || r.GetCurrentVersion() != cur || stale.Err.Metadata["baseVersion"] != base {
		t.Errorf("stale ref %v, metadata %v; want the current line 2, version %s, base %s", r, stale.Err.Metadata, cur, base)
	}
	resp, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(r.GetCurrentLine(), "", "A2")}})
	if err != nil || resp.GetRebasedFrom() != "" {
		t.Fatalf("retry from the fresh tag: resp %v, err %v", resp, err)
	}
	if got := oneLine(e.read("f.txt")); got != "l1 A2 l3 l4 l5 l6 l7 l8 B9 l10" {
		t.Errorf("file = %q", got)
	}
	if s := e.svc.Engine().CacheStats(); s.Entries != 0 || s.Hits != 0 || s.Misses == 0 {
		t.Errorf("cache stats %+v: want nothing kept and misses counted", s)
	}
}

// TestEditRebasesAcrossAChangeMadeOutsideTheServer: another process edits
// the file; the agent's read version is cached, so the edit is rebased.
func TestEditRebasesAcrossAChangeMadeOutsideTheServer(t *testing.T) {
	e := newEnv(t)
	e.write("f.txt", tenLines)
	a := e.agent("a")
	base := e.readAs(a, "f.txt").GetVersion()
	e.write("f.txt", "# header\n# more\n"+tenLines) // behind the server's back
	resp := e.editAs(a, "f.txt", client.Replace(tag(tenLines, 10), "", "A10"))
	if resp.GetRebasedFrom() != base || len(resp.GetMoved()) != 1 || resp.GetMoved()[0].GetTo() != 12 {
		t.Errorf("rebasedFrom %q moved %v", resp.GetRebasedFrom(), resp.GetMoved())
	}
	if got := oneLine(e.read("f.txt")); got != "# header # more l1 l2 l3 l4 l5 l6 l7 l8 l9 A10" {
		t.Errorf("file = %q", got)
	}
	if s := e.svc.Engine().CacheStats(); s.Hits == 0 {
		t.Errorf("cache stats %+v: the base was not read from the cache", s)
	}
}

// TestTagsOfAnEarlierReadAreRebasedFromIt: the agent read the file twice,
// but its tags come from the first read. They do not match the second
// (another agent prepended a line in between), and they all match lines
// the first read showed: they are rebased from it, whether or not
// baseVersion names it; without baseVersion a warning says which version
// the server took.
func TestTagsOfAnEarlierReadAreRebasedFromIt(t *testing.T) {
	for _, explicit := range []bool{false, true} {
		t.Run(fmt.Sprintf("baseVersion given: %v", explicit), func(t *testing.T) {
			e := newEnv(t)
			e.write("f.txt", tenLines)
			a, b := e.agent("a"), e.agent("b")
			v1 := e.readAs(a, "f.txt").GetVersion()
			e.readAs(b, "f.txt")
			e.editAs(b, "f.txt", client.Prepend("top"))
			v2 := e.readAs(a, "f.txt").GetVersion() // A's last view is the current version
			req := &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(tenLines, 5), "", "A5")}}
			if explicit {
				req.BaseVersion = v1
			}
			resp, err := a.Edit(e.ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetRebasedFrom() != v1 || len(resp.GetMoved()) != 1 || resp.GetMoved()[0].GetTo() != 6 {
				t.Errorf("rebasedFrom %q moved %v, want from %s, 5 -> 6", resp.GetRebasedFrom(), resp.GetMoved(), v1)
			}
			warned := strings.Contains(strings.Join(resp.GetWarnings(), "\n"), "version "+v1)
			if warned == explicit {
				t.Errorf("warnings %q: want one naming %s only when baseVersion was not given", resp.GetWarnings(), v1)
			}
			if !explicit && !strings.Contains(resp.GetWarnings()[0], v2) {
				t.Errorf("warning %q does not name the last version A saw, %s", resp.GetWarnings()[0], v2)
			}
			if got := oneLine(e.read("f.txt")); got != "top l1 l2 l3 l4 A5 l6 l7 l8 l9 l10" {
				t.Errorf("file = %q", got)
			}
		})
	}
}

// TestATagTheAgentWasNeverShownIsStale: a tag taken from another agent's
// edit reply (here: passed on, or guessed) names a line this agent never
// saw, in any version: STALE_REF with reason NOT_SHOWN and fresh tags,
// nothing written; a retry from those tags lands.
func TestATagTheAgentWasNeverShownIsStale(t *testing.T) {
	e := newEnv(t)
	e.write("f.txt", tenLines)
	a, b := e.agent("a"), e.agent("b")
	e.readAs(a, "f.txt")
	e.readAs(b, "f.txt")
	bResp := e.editAs(b, "f.txt", client.Replace(tag(tenLines, 5), "", "B5"))
	var fresh *hashlinev1.Line // 5:..|B5, a tag of the current file only
	for _, l := range bResp.GetWindows()[0].GetLines() {
		if l.GetNumber() == 5 {
			fresh = l
		}
	}
	before := e.snapshot()
	_, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(client.Ref(fresh), "", "A5")}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) || len(stale.Refs) != 1 || stale.Refs[0].GetReason() != "NOT_SHOWN" {
		t.Fatalf("err = %v, want STALE_REF with one NOT_SHOWN ref", err)
	}
	e.assertUnchanged(before)
	r := stale.Refs[0]
	if r.GetCurrentLine() != client.Ref(fresh)+"|B5" || !slices.Contains(r.GetFresh(), r.GetCurrentLine()) || r.GetCurrentVersion() != bResp.GetVersion() {
		t.Errorf("stale ref %v", r)
	}
	if !strings.Contains(stale.Err.Message, "never saw") {
		t.Errorf("message %q does not say the line was never shown", stale.Err.Message)
	}
	if _, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(r.GetCurrentLine(), "", "A5")}}); err != nil {
		t.Fatalf("retry from the fresh tag: %v", err)
	}
	if got := oneLine(e.read("f.txt")); got != "l1 l2 l3 l4 A5 l6 l7 l8 l9 l10" {
		t.Errorf("file = %q", got)
	}
}

// TestWithoutAnyViewTheBaseVersionIsTakenAtItsWord: with read-before-edit
// off, an agent that saw nothing of the file has only its baseVersion to
// go by; references that do not match it are checked against the current
// file by line and hash, with a warning, as before views remembered lines.
func TestWithoutAnyViewTheBaseVersionIsTakenAtItsWord(t *testing.T) {
	e := newEnv(t, engine.WithRequireRead(false))
	e.write("f.txt", tenLines)
	b := e.agent("b")
	v1 := e.readAs(b, "f.txt").GetVersion()
	bResp := e.editAs(b, "f.txt", client.Replace(tag(tenLines, 5), "", "B5"))
	now := e.read("f.txt")
	resp, err := e.agent("a").Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", BaseVersion: v1,
		Edits: []*hashlinev1.FileEdit{client.Replace(tag(now, 5), "", "A5")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetRebasedFrom() != "" || len(resp.GetWarnings()) == 0 || !strings.Contains(resp.GetWarnings()[0], "checked against the current file "+bResp.GetVersion()) {
		t.Errorf("rebasedFrom %q warnings %q", resp.GetRebasedFrom(), resp.GetWarnings())
	}
	if got := oneLine(e.read("f.txt")); got != "l1 l2 l3 l4 A5 l6 l7 l8 l9 l10" {
		t.Errorf("file = %q", got)
	}
}

// TestReadBeforeEdit: NOT_READ until the agent has seen the file through
// Read, Grep, Edit or Write; append and prepend never need it; the flag
// turns it off. Once the agent has seen the file, a line it was not shown
// is another matter (TestTheLinesAnAgentWasShown): each edit here names
// a line the agent saw.
func TestReadBeforeEdit(t *testing.T) {
	replace1 := client.Replace(tag(tenLines, 1), "", "x")
	tests := []struct {
		name    string
		opts    []engine.Option
		see     func(e *env, c *client.Client) // what the agent did first
		edit    *hashlinev1.FileEdit
		notRead bool
	}{
		{name: "replace without a read", edit: replace1, notRead: true},
		{name: "replaceText without a read", edit: client.ReplaceText("l1", "x", false), notRead: true},
		{name: "insert without a read", edit: client.InsertAfter(tag(tenLines, 1), "x"), notRead: true},
		{name: "delete without a read", edit: client.Delete(tag(tenLines, 1), ""), notRead: true},
		{name: "another agent's read does not count", see: func(e *env, _ *client.Client) { e.readAs(e.agent("other"), "f.txt") }, edit: replace1, notRead: true},
		{name: "append needs no read", edit: client.Append("x")},
		{name: "prepend needs no read", edit: client.Prepend("x")},
		{name: "after a Read", see: func(e *env, c *client.Client) { e.readAs(c, "f.txt") }, edit: replace1},
		{name: "after a Read of one page", see: func(e *env, c *client.Client) {
			if _, err := c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "f.txt", Offset: 9, Limit: 1}); err != nil {
				t.Fatal(err)
			}
		}, edit: client.Replace(tag(tenLines, 9), "", "x")},
		{name: "after a Grep that showed the file", see: func(e *env, c *client.Client) {
			if _, err := c.Grep(e.ctx, &hashlinev1.GrepRequest{Pattern: "l10"}, nil); err != nil {
				t.Fatal(err)
			}
		}, edit: client.Replace(tag(tenLines, 10), "", "x")},
		{name: "after the agent's own append", see: func(e *env, c *client.Client) { e.editAs(c, "f.txt", client.Append("end")) }, edit: client.Replace(tag(tenLines, 10), "", "x")},
		{name: "after the agent wrote the file", see: func(e *env, c *client.Client) {
			if _, err := c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: tenLines}); err != nil {
				t.Fatal(err)
			}
		}, edit: replace1},
		{name: "with --require-read=false", opts: []engine.Option{engine.WithRequireRead(false)}, edit: replace1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts...)
			e.write("f.txt", tenLines)
			c := e.agent("a")
			if tt.see != nil {
				tt.see(e, c)
			}
			before := e.snapshot()
			_, err := c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{tt.edit}})
			if !tt.notRead {
				if err != nil {
					t.Fatalf("err = %v, want the edit applied", err)
				}
				return
			}
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Code != codes.FailedPrecondition || ce.Reason != "NOT_READ" ||
				!strings.Contains(ce.Message, "Read it") || ce.Metadata["agent"] != "a" {
				t.Fatalf("err = %v, want FAILED_PRECONDITION NOT_READ telling agent a to Read", err)
			}
			e.assertUnchanged(before)
		})
	}
}

// TestAgentsWithoutAnIDShareTheAnonymousView documents the fallback
// identity: clients that send no x-agent-id are all "anonymous".
func TestAgentsWithoutAnIDShareTheAnonymousView(t *testing.T) {
	e := newEnv(t)
	e.write("f.txt", tenLines)
	x, y := client.New(e.conn), client.New(e.conn)
	e.readAs(x, "f.txt")
	if _, err := y.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.txt", Edits: []*hashlinev1.FileEdit{client.Replace(tag(tenLines, 1), "", "x")}}); err != nil {
		t.Fatalf("an anonymous edit after an anonymous read: %v", err)
	}
}

// TestCreatedFilesNeedNoRead: Write creates; Edit then works.
func TestCreatedFilesNeedNoRead(t *testing.T) {
	e := newEnv(t)
	c := e.agent("a")
	if _, err := c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "new.txt", Content: "one\n", Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE}); err != nil {
		t.Fatal(err)
	}
	e.editAs(c, "new.txt", client.Replace(tag("one\n", 1), "", "ONE"))
	if s := e.svc.Engine().ViewStats(); s.Entries != 1 {
		t.Errorf("view stats %+v, want one (agent, file) pair", s)
	}
}

// TestTagsAnErrorShowsAreReadAgainstItsVersion: an error that shows an
// agent tags of the current file (the lines an ambiguous oldText could
// mean, or lines like a missing one) moves that agent's view to the
// current version, as a stale reference's fresh lines do, so the next edit
// made from those tags lands on the line shown instead of being rebased
// from the version the agent read before. An error that shows no tags
// leaves the view, so tags of that older read are still rebased.
func TestTagsAnErrorShowsAreReadAgainstItsVersion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before string
		miss   *hashlinev1.FileEdit // refused, with or without tags
		shown  string               // what the error shows, in the file after the prepend ("" for nothing)
		next   func(before, now string) *hashlinev1.FileEdit
		want   string
	}{
		{
			name:   "ambiguous oldText",
			before: "func a() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			miss:   client.ReplaceText("}\n", "} // done\n", false),
			shown:  "5:", // the inner "\t}", line 5 once the header is on top
			next:   func(_, now string) *hashlinev1.FileEdit { return client.Replace(tag(now, 5), "", "\t} // end if") },
			want:   "// header\nfunc a() {\n\tif x {\n\t\ty()\n\t} // end if\n}\n",
		},
		{
			name:   "lines with similar text",
			before: "x\n\tfoo()\n\t\tfoo()\ny\n",
			miss:   client.ReplaceText("foo() ", "bar()", false),
			shown:  "|\tfoo()",
			next:   func(_, now string) *hashlinev1.FileEdit { return client.Replace(tag(now, 3), "", "\tbar()") },
			want:   "// header\nx\n\tbar()\n\t\tfoo()\ny\n",
		},
		{
			name:   "no tags shown",
			before: "x\n\tfoo()\n\t\tfoo()\ny\n",
			miss:   client.ReplaceText("nowhere", "bar()", false),
			next:   func(before, _ string) *hashlinev1.FileEdit { return client.Replace(tag(before, 2), "", "\tbar()") },
			want:   "// header\nx\n\tbar()\n\t\tfoo()\ny\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("f.go", tc.before)
			a, b := e.agent("a"), e.agent("b")
			e.readAs(a, "f.go")
			e.readAs(b, "f.go")
			e.editAs(b, "f.go", client.Prepend("// header\n"))
			now := e.read("f.go")
			_, err := a.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.go", Edits: []*hashlinev1.FileEdit{tc.miss}})
			if err == nil {
				t.Fatal("the edit was accepted; want it refused")
			}
			if tc.shown != "" && !strings.Contains(err.Error(), tc.shown) {
				t.Fatalf("the error does not show %q: %v", tc.shown, err)
			}
			e.editAs(a, "f.go", tc.next(tc.before, now))
			if got := e.read("f.go"); got != tc.want {
				t.Errorf("after the refused edit, the next one gave\n%q, want\n%q", got, tc.want)
			}
		})
	}
}
