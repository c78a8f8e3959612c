package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
)

// tracedEngine opens an engine over a new root holding files that records
// its spans with rec, when rec is set.
func tracedEngine(t *testing.T, rec *tracetest.SpanRecorder, files map[string]string) *engine.Engine {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var opts []engine.Option
	if rec != nil {
		opts = append(opts, engine.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	}
	e, err := engine.Open(engine.Config{Root: root, StateDir: t.TempDir(), NoSweep: true, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// callSpan starts a span standing for the call the face would trace, with
// agent named, from a provider of its own (so that only the engine's
// spans reach rec).
func callSpan(t *testing.T, agent string) (context.Context, trace.Span) {
	t.Helper()
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp.Tracer("test").Start(engine.WithRequestID(engine.WithAgent(context.Background(), agent), "req-1"), "call")
}

func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// byName returns spans by name; a name seen twice fails.
func byName(t *testing.T, spans []sdktrace.ReadOnlySpan) map[string]sdktrace.ReadOnlySpan {
	t.Helper()
	m := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		if _, dup := m[s.Name()]; dup {
			t.Fatalf("two spans named %s", s.Name())
		}
		m[s.Name()] = s
	}
	return m
}

// noContent fails if an attribute of a span holds one of the texts.
func noContent(t *testing.T, spans []sdktrace.ReadOnlySpan, texts ...string) {
	t.Helper()
	for _, s := range spans {
		for k, v := range attrs(s) {
			for _, text := range texts {
				if strings.Contains(v, text) {
					t.Errorf("span %s attribute %s = %q holds file content %q", s.Name(), k, v, text)
				}
			}
		}
		if strings.Contains(s.Status().Description, "secret") {
			t.Errorf("span %s status %q", s.Name(), s.Status().Description)
		}
	}
}

// An Edit is traced as plan (with the rebase inside it) and commit, under
// the call's span, with the agent, path, versions and the change id the
// history gave it, and none of the file's or the edit's text.
func TestEditSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	e := tracedEngine(t, rec, map[string]string{"f.txt": "secret one\nsecret two\nsecret three\n"})
	ctx, call := callSpan(t, "alice")
	r, err := e.Read(ctx, engine.ReadRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Edit(ctx, &engine.EditRequest{Path: "f.txt", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: r.Lines[1].Tag(), Text: "classified two"}}})
	if err != nil {
		t.Fatal(err)
	}
	call.End()
	spans := byName(t, rec.Ended())
	plan, rebase, commit := spans["hashline.plan"], spans["hashline.rebase"], spans["hashline.commit"]
	if plan == nil || rebase == nil || commit == nil || len(spans) != 3 {
		t.Fatalf("spans %v, want hashline.plan, hashline.rebase and hashline.commit", spans)
	}
	callID := call.SpanContext().SpanID()
	if plan.Parent().SpanID() != callID || commit.Parent().SpanID() != callID || rebase.Parent().SpanID() != plan.SpanContext().SpanID() {
		t.Errorf("parents: plan %s, commit %s (want the call's %s); rebase %s (want plan's %s)",
			plan.Parent().SpanID(), commit.Parent().SpanID(), callID, rebase.Parent().SpanID(), plan.SpanContext().SpanID())
	}
	if plan.SpanContext().TraceID() != call.SpanContext().TraceID() {
		t.Errorf("plan's trace %s, want the call's %s", plan.SpanContext().TraceID(), call.SpanContext().TraceID())
	}
	history, err := e.History(ctx, engine.HistoryRequest{Path: "f.txt"})
	if err != nil || len(history.Entries) != 1 {
		t.Fatalf("history %+v, %v", history, err)
	}
	for name, want := range map[string]map[string]string{
		"hashline.plan":   {"hashline.agent": "alice", "hashline.path": "f.txt", "hashline.change.kind": "edit", "hashline.changes": "1", "hashline.outcome": "planned", "hashline.failures": "0", "hashline.dry_run": "false"},
		"hashline.rebase": {"hashline.path": "f.txt", "hashline.version": r.Version, "hashline.base_version": "", "hashline.outcome": "current"},
		"hashline.commit": {"hashline.agent": "alice", "hashline.path": "f.txt", "hashline.outcome": "committed", "hashline.version": res.Version,
			"hashline.change_id": history.Entries[0].ID, "hashline.request_id": "req-1"},
	} {
		got := attrs(spans[name])
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q (all: %v)", name, k, got[k], v, got)
			}
		}
		if st := spans[name].Status(); st.Code != codes.Unset {
			t.Errorf("%s: status %+v, want unset", name, st)
		}
	}
	noContent(t, rec.Ended(), "secret", "classified")
}

// An edit made against an older version is rebased, and its rebase span
// says from which version and how many references moved; a stale one is
// refused at the rebase, and its plan is refused, with nothing committed.
func TestRebaseAndRefusalSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	e := tracedEngine(t, rec, map[string]string{"f.txt": "a\nb\nc\nd\n"})
	alice, call := callSpan(t, "alice")
	bob := engine.WithAgent(context.Background(), "bob")
	old, err := e.Read(alice, engine.ReadRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Read(bob, engine.ReadRequest{Path: "f.txt"})
	if err != nil {
		t.Fatal(err)
	}
	// Bob inserts a line at the top and rewrites c: alice's reference to d
	// moves, her reference to c is stale.
	if _, err := e.Edit(bob, &engine.EditRequest{Path: "f.txt", Edits: []hashline.Edit{
		{Op: hashline.OpInsertBefore, Start: b.Lines[0].Tag(), Text: "top"},
		{Op: hashline.OpReplace, Start: b.Lines[2].Tag(), Text: "C"},
	}}); err != nil {
		t.Fatal(err)
	}
	// Bob's edit, under no span, made root spans of its own.
	before := len(rec.Ended())
	if _, err := e.Edit(alice, &engine.EditRequest{Path: "f.txt", BaseVersion: old.Version, Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: old.Lines[3].Tag(), Text: "D"}}}); err != nil {
		t.Fatal(err)
	}
	spans := byName(t, rec.Ended()[before:])
	if s := spans["hashline.plan"]; s == nil || s.Parent().SpanID() != call.SpanContext().SpanID() {
		t.Fatalf("alice's spans %v: want a plan under her call", spans)
	}
	got := attrs(spans["hashline.rebase"])
	if got["hashline.outcome"] != "rebased" || got["hashline.rebased_from"] != old.Version || got["hashline.moved"] != "1" || got["hashline.base_version"] != old.Version {
		t.Errorf("rebase span of a rebased edit: %v", got)
	}

	rec2 := tracetest.NewSpanRecorder()
	e2 := tracedEngine(t, rec2, map[string]string{"f.txt": "a\nb\nc\nd\n"})
	old, _ = e2.Read(alice, engine.ReadRequest{Path: "f.txt"})
	b, _ = e2.Read(bob, engine.ReadRequest{Path: "f.txt"})
	if _, err := e2.Edit(bob, &engine.EditRequest{Path: "f.txt", Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: b.Lines[2].Tag(), Text: "C"}}}); err != nil {
		t.Fatal(err)
	}
	before = len(rec2.Ended())
	if _, err := e2.Edit(alice, &engine.EditRequest{Path: "f.txt", BaseVersion: old.Version, Edits: []hashline.Edit{{Op: hashline.OpReplace, Start: old.Lines[2].Tag(), Text: "see"}}}); err == nil {
		t.Fatal("a stale edit was applied")
	}
	call.End()
	spans = byName(t, rec2.Ended()[before:])
	if _, ok := spans["hashline.commit"]; ok {
		t.Error("a refused edit has a commit span")
	}
	for _, name := range []string{"hashline.rebase", "hashline.plan"} {
		s := spans[name]
		if s == nil {
			t.Fatalf("no %s span; spans %v", name, spans)
		}
		if got := attrs(s); got["hashline.outcome"] != "refused" || s.Status().Code != codes.Error || s.Status().Description != "refused" {
			t.Errorf("%s of a stale edit: status %+v, attributes %v", name, s.Status(), got)
		}
	}
	if got := attrs(spans["hashline.plan"]); got["hashline.failures"] != "1" {
		t.Errorf("plan of a stale edit: %v", got)
	}
}

// A change set's spans name its paths, and its commit the set's id.
func TestApplySpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	e := tracedEngine(t, rec, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	ctx, call := callSpan(t, "alice")
	res, err := e.Apply(ctx, &engine.ApplyRequest{Changes: []engine.Change{
		&engine.WriteRequest{Path: "c.txt", Content: "secret\n"},
		&engine.MoveRequest{From: "a.txt", To: "d.txt"},
		&engine.DeleteRequest{Path: "b.txt"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	call.End()
	spans := byName(t, rec.Ended())
	for _, name := range []string{"hashline.plan", "hashline.commit"} {
		got := attrs(spans[name])
		if got["hashline.paths"] != `["c.txt","a.txt","b.txt"]` || got["hashline.changes"] != "3" {
			t.Errorf("%s: %v", name, got)
		}
	}
	if got := attrs(spans["hashline.commit"]); got["hashline.change_set"] != res.ChangeSet || res.ChangeSet == "" || got["hashline.change_id"] == "" {
		t.Errorf("commit of set %q: %v", res.ChangeSet, got)
	}
	noContent(t, rec.Ended(), "secret")
}

// Without WithTracerProvider the engine starts no span, even under a
// recording one: it neither asks the call's span for its provider nor
// falls back to a global one.
func TestNoTracerNoSpans(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, call := tp.Tracer("test").Start(engine.WithAgent(context.Background(), "alice"), "call")
	e := tracedEngine(t, nil, map[string]string{"f.txt": "a\n"})
	if _, err := e.Write(ctx, &engine.WriteRequest{Path: "f.txt", Content: "b\n"}); err != nil {
		t.Fatal(err)
	}
	call.End()
	if n := len(rec.Ended()); n != 1 {
		t.Errorf("%d spans ended, want the call's alone", n)
	}
}
