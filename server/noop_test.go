package server_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// noChangeError calls Edit and wants NO_CHANGE; it returns the decoded
// error and checks that the disk did not change.
func noChangeError(t *testing.T, e *env, req *hashlinev1.EditRequest) *client.Error {
	t.Helper()
	before := e.snapshot()
	_, err := e.c.Edit(e.ctx, req)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Reason != "NO_CHANGE" || ce.Code != codes.FailedPrecondition {
		t.Fatalf("want FAILED_PRECONDITION NO_CHANGE, got %v", err)
	}
	e.assertUnchanged(before)
	return ce
}

// TestNoChangeShowsTheLinesAsTheyAre: a refused no-op carries, in the
// message and in its EditError, the lines it targeted with fresh tags and
// the places where the text it sent already stands; the shown tags work for
// the next edit.
func TestNoChangeShowsTheLinesAsTheyAre(t *testing.T) {
	e := newEnv(t)
	const text = "func a() {\n\tretry()\n}\n\nfunc b() {\n\tretry()\n}\n"
	e.seed("f.go", text)
	for _, tc := range []struct {
		name   string
		line   int
		textAt []*hashlinev1.LineSpan
		say    []string
		unsaid []string
	}{
		{"text standing elsewhere too is named there", 2, []*hashlinev1.LineSpan{{Start: 2, End: 2}, {Start: 6, End: 6}},
			[]string{"line 2 already holds the text you sent", "the change may already be made", "It also stands at line 6 (4 lines below)", "\n    " + tag(text, 2) + "|\tretry()"}, nil},
		{"text standing only at its target is not said to stand elsewhere", 5, []*hashlinev1.LineSpan{{Start: 5, End: 5}},
			[]string{"line 5 already holds the text you sent", "\n    " + tag(text, 5) + "|func b() {"}, []string{"also stands"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content := strings.Split(text, "\n")[tc.line-1]
			ce := noChangeError(t, e, &hashlinev1.EditRequest{Path: "f.go", Edits: []*hashlinev1.FileEdit{client.Replace(tag(text, tc.line), "", content)}})
			for _, s := range tc.say {
				if !strings.Contains(ce.Message, s) {
					t.Errorf("the message lacks %q:\n%s", s, ce.Message)
				}
			}
			for _, s := range tc.unsaid {
				if strings.Contains(ce.Message, s) {
					t.Errorf("the message says %q:\n%s", s, ce.Message)
				}
			}
			if len(ce.Edits) != 1 {
				t.Fatalf("want one EditError, got %v", ce.Edits)
			}
			ee := ce.Edits[0]
			if want := []string{tag(text, tc.line) + "|" + content}; !slices.Equal(ee.GetFresh(), want) {
				t.Errorf("fresh %q, want %q", ee.GetFresh(), want)
			}
			if got := ee.GetTextAt(); !slices.EqualFunc(got, tc.textAt, func(a, b *hashlinev1.LineSpan) bool {
				return a.GetStart() == b.GetStart() && a.GetEnd() == b.GetEnd()
			}) {
				t.Errorf("textAt %v, want %v", got, tc.textAt)
			}
			if ce.Metadata["currentVersion"] == "" {
				t.Error("no currentVersion in the ErrorInfo")
			}
		})
	}
	t.Run("the shown tags work for the next edit, even after another agent's change", func(t *testing.T) {
		// Another agent puts a line on top: every line moves down one. The
		// no-op, made against the version this agent read, is rebased and
		// refused, showing the line where it is now.
		other := metadata.AppendToOutgoingContext(e.ctx, client.AgentMetadataKey, "other")
		if _, err := e.c.Edit(other, &hashlinev1.EditRequest{Path: "f.go", Edits: []*hashlinev1.FileEdit{client.Prepend("// top")}}); err != nil {
			t.Fatal(err)
		}
		ce := noChangeError(t, e, &hashlinev1.EditRequest{Path: "f.go", Edits: []*hashlinev1.FileEdit{client.Replace(tag(text, 6), "", "\tretry()")}})
		now := "// top\n" + text
		if got, want := ce.Edits[0].GetFresh(), []string{tag(now, 7) + "|\tretry()"}; !slices.Equal(got, want) {
			t.Fatalf("fresh %q, want %q", got, want)
		}
		resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.go", Edits: []*hashlinev1.FileEdit{client.Replace(tag(now, 7), "", "\tgiveUp()")}})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetWarnings()) > 0 || resp.GetRebasedFrom() != "" {
			t.Errorf("the shown tags were not taken as this agent's view: warnings %q, rebased from %q", resp.GetWarnings(), resp.GetRebasedFrom())
		}
		if got, want := e.read("f.go"), strings.Replace(now, "b() {\n\tretry()", "b() {\n\tgiveUp()", 1); got != want {
			t.Errorf("file now %q, want %q", got, want)
		}
	})
}

// TestRepeatedNoChangeSaysSo: the same agent sending the same no-op again
// (the same path and edits, however spelt) is told plainly that this exact
// edit was refused before; another agent, or another edit, is not.
func TestRepeatedNoChangeSaysSo(t *testing.T) {
	e := newEnv(t)
	const text = "one\ntwo\nthree\n"
	e.seed("f.txt", text)
	e.seed("g.txt", text)
	req := func(path string, edits ...*hashlinev1.FileEdit) *hashlinev1.EditRequest {
		return &hashlinev1.EditRequest{Path: path, Edits: edits}
	}
	two := tag(text, 2)
	const again = "this exact edit was already refused"
	for _, step := range []struct {
		name     string
		agent    string // "" is the env's agent
		req      *hashlinev1.EditRequest
		repeated string // the ErrorInfo's "repeated", "" for a first refusal
		say      string
	}{
		{"a first no-op is a plain refusal", "", req("f.txt", client.Replace(two, "", "two")), "", "line 2 already holds"},
		{"the same no-op again is called a repeat", "", req("f.txt", client.Replace(two, "", "two")), "1", again + " (once before)"},
		{"spelt differently it is the same edit", "", req("f.txt", client.Replace(" "+strings.ToUpper(two)+"|two", two, "two\n")), "2", again + " (twice before)"},
		{"another agent's same no-op is its first", "other", req("f.txt", client.Replace(two, "", "two")), "", "line 2 already holds"},
		{"the same edits to another file are another edit", "", req("g.txt", client.Replace(two, "", "two")), "", "line 2 already holds"},
		{"another no-op of the same file is another edit", "", req("f.txt", client.Replace(tag(text, 3), "", "three")), "", "line 3 already holds"},
		{"a dry run of the same no-op is still a repeat", "", &hashlinev1.EditRequest{Path: "f.txt", DryRun: true, Edits: []*hashlinev1.FileEdit{client.Replace(two, "", "two")}}, "3", again + " (3 times before)"},
	} {
		t.Run(step.name, func(t *testing.T) {
			if step.agent != "" {
				ctx := metadata.AppendToOutgoingContext(e.ctx, client.AgentMetadataKey, step.agent)
				if _, err := e.c.Read(ctx, &hashlinev1.ReadRequest{Path: step.req.GetPath()}); err != nil {
					t.Fatal(err)
				}
				before := e.snapshot()
				_, err := e.c.Edit(ctx, step.req)
				var ce *client.Error
				if !errors.As(err, &ce) || ce.Reason != "NO_CHANGE" {
					t.Fatalf("want NO_CHANGE, got %v", err)
				}
				e.assertUnchanged(before)
				if ce.Metadata["repeated"] != step.repeated || !strings.Contains(ce.Message, step.say) || strings.Contains(ce.Message, again) {
					t.Errorf("repeated %q, message:\n%s", ce.Metadata["repeated"], ce.Message)
				}
				return
			}
			ce := noChangeError(t, e, step.req)
			if got := ce.Metadata["repeated"]; got != step.repeated {
				t.Errorf("repeated %q, want %q", got, step.repeated)
			}
			if !strings.Contains(ce.Message, step.say) {
				t.Errorf("the message lacks %q:\n%s", step.say, ce.Message)
			}
			if step.repeated == "" && strings.Contains(ce.Message, again) {
				t.Errorf("a first refusal says it is a repeat:\n%s", ce.Message)
			}
			if step.repeated != "" && (!strings.Contains(ce.Message, "Stop sending it") || len(ce.Edits[0].GetFresh()) == 0) {
				t.Errorf("a repeat should say to stop and still show the lines:\n%s", ce.Message)
			}
		})
	}
}
