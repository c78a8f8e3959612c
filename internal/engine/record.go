package engine

import (
	"context"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/versions"
)

// Recording committed changes in the change history (history.go): every
// set the one commit path commits, of one change or many, is one history
// entry, appended right after the commit and before the changes' Watch
// events, which carry its id.
//
// The history is written without fsync and apart from the intent log: a
// crash can lose the last few milliseconds of entries, and a set a crash
// left to recovery is finished without one. The file's next read then
// finds the change and records it as made outside the server.

type requestIDKey struct{}

// WithRequestID returns ctx naming id as the request_id of the call, which
// the change history records with the change the call makes.
func WithRequestID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, requestIDKey{}, id)
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

type changeIDKey struct{}

// withChangeID is ctx carrying the history id of the change being
// published, for its Watch events (publish and the others read it).
func withChangeID(ctx context.Context, id history.ID) context.Context {
	if id.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, changeIDKey{}, id.String())
}

func changeID(ctx context.Context) string {
	id, _ := ctx.Value(changeIDKey{}).(string)
	return id
}

// recordSet appends the committed changes as one history entry and
// returns ctx carrying its id. A change that cannot be recorded is logged
// (record); the set stands.
func (s *Engine) recordSet(ctx context.Context, changes []*change) context.Context {
	if s.opts.history == nil {
		return ctx
	}
	c := history.Change{Kind: history.KindSet, RequestID: requestID(ctx)}
	for _, ch := range changes {
		f, kind, ok := ch.plan.recorded(s, ch)
		if !ok {
			continue
		}
		if len(changes) == 1 {
			c.Kind = kind
		}
		c.Files = append(c.Files, f)
	}
	if len(c.Files) == 0 {
		return ctx
	}
	id, _ := s.record(ctx, asRevert(ctx, c))
	revertRecorded(ctx, id)
	return withChangeID(ctx, id)
}

// recorded is the history's file of a committed edit: its versions and
// the lines it removed and added, at the hunks the edit itself made (no
// diff of the whole file is run again).
func (p *editPlan) recorded(s *Engine, c *change) (history.File, history.Kind, bool) {
	return history.File{Path: s.canonical(c.rel), Before: p.f.Version, After: p.wrote().Version,
		Hunks: history.HunksAt(p.doc, p.res.Doc, versions.EditHunks(p.doc, p.res))}, history.KindEdit, true
}

// recorded is the history's file of a committed write: a file it created
// has all its lines added; one it replaced without being able to read it
// as text (binary, too large) is recorded without hunks.
func (p *writePlan) recorded(s *Engine, c *change) (history.File, history.Kind, bool) {
	f := history.File{Path: s.canonical(c.rel), After: p.wrote().Version}
	newDoc := hashline.ParseDocument(p.text)
	switch {
	case p.cur != nil:
		f.Before = p.cur.Version
		f.Hunks = history.HunksOf(hashline.ParseDocument(p.cur.Text), newDoc)
	case !p.exists:
		f.Hunks = history.HunksOf(nil, newDoc)
	}
	return f, history.KindWrite, true
}

// recorded is the history's file of a committed delete: every line the
// file had, removed. A directory is not a file and is not recorded.
func (d *deletePlan) recorded(s *Engine, c *change) (history.File, history.Kind, bool) {
	if d.dir {
		return history.File{}, history.KindDelete, false
	}
	f := history.File{Path: d.target, Before: d.version}
	if d.state.HasText {
		f.Hunks = history.HunksOf(hashline.ParseDocument(d.state.Text), nil)
	}
	return f, history.KindDelete, true
}

// recorded is the history's file of a committed move: its two paths, its
// version unchanged, no lines.
func (m *movePlan) recorded(s *Engine, c *change) (history.File, history.Kind, bool) {
	return history.File{Path: m.to, From: m.from, Before: m.version, After: m.version}, history.KindMove, true
}
