package engine

import (
	"context"
	"errors"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// Recording committed changes in the change history (history.go): every
// set the one commit path commits, of one change or many, is one history
// entry, and a set is in the history if and only if it was applied,
// however the process ends. So the entry is prepared (history.Log.Prepare:
// pending, not shown) before the set's commit point, and resolved after
// it; the changes' Watch events carry its id.
//
//   - A set of one change: its entry is written to the history's file (a
//     write, no sync) before the change's own atomic write, rename or
//     removal, and resolved once that is done. A write's entry is prepared
//     and written while its content is written and synced beside the file
//     (workspace.WriteOptions.Committing, on a goroutine of the
//     workspace's), so that building it waits for the disk alongside the
//     sync rather than after it; the rename waits for it. A crash between
//     the two leaves the entry pending; at the next start
//     (recoverHistory) it is resolved from the disk: made if every file
//     is as the change left it. The entry is the last of its files' (a
//     later change of them is appended after the outcome, which the
//     history writes first), so what the disk shows is this change's
//     doing.
//   - A set of several: its entry is prepared in memory and carried in
//     the set's intent record (the commit point); it goes to the history's
//     file while the steps are done (and is synced, where the workspace
//     syncs its writes), before the record is removed. Replay records the
//     entry if the history lacks it, with its id (history.Log.Restore).
//
// A system crash (not the process's) can still lose a set of one change's
// entry, which is written without a sync: that would add a sync to every
// Edit. The file is then as the change left it and the history ends
// before it.

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

// recording is how a set is recorded: its kind (0: its one change's, or
// history.KindSet) and, for a revert, the change it reverts.
type recording struct {
	kind    history.Kind
	reverts history.ID
}

type recordingKey struct{}

// recordAs returns ctx asking that the set committed under it be recorded
// as kind, reverting reverts (a revert records history.KindRevert).
func recordAs(ctx context.Context, kind history.Kind, reverts history.ID) context.Context {
	return context.WithValue(ctx, recordingKey{}, recording{kind: kind, reverts: reverts})
}

func recordingOf(ctx context.Context) recording {
	r, _ := ctx.Value(recordingKey{}).(recording)
	return r
}

// recordSet is the history entry of a set about to be committed: its
// kind (kind, or when 0 its one change's, or history.KindSet), the change
// it reverts, the request's id and per file what the set does to it; false
// when the history records none of its changes.
func (s *Engine) recordSet(ctx context.Context, changes []*change, kind history.Kind, reverts history.ID) (history.Change, bool) {
	c := history.Change{Kind: history.KindSet, RequestID: requestID(ctx), Reverts: reverts}
	for _, ch := range changes {
		f, k, ok := ch.plan.recorded(s, ch)
		if !ok {
			continue
		}
		if len(changes) == 1 {
			c.Kind = k
		}
		c.Files = append(c.Files, f)
	}
	if kind != 0 {
		c.Kind = kind
	}
	return c, len(c.Files) > 0
}

// pending is a set's history entry, prepared before its commit point.
type pending struct{ c history.Change }

// prepareSet prepares the history entry of a set about to be committed
// (recordSet); write puts it in the history's file before it returns. It
// returns nil when there is no entry: no history, nothing recorded, or an
// entry the history refused (logged; the set goes on).
func (s *Engine) prepareSet(ctx context.Context, changes []*change, write bool) *pending {
	if s.opts.history == nil {
		return nil
	}
	rec := recordingOf(ctx)
	c, ok := s.recordSet(ctx, changes, rec.kind, rec.reverts)
	if !ok {
		return nil
	}
	if c.Agent == "" {
		c.Agent = Agent(ctx)
	}
	got, err := s.opts.history.Prepare(c, write)
	if err != nil {
		s.opts.logger.WarnContext(ctx, "history: a change about to be made could not be recorded", "kind", c.Kind, "agent", c.Agent, "err", err)
	}
	if got.ID.IsZero() {
		return nil
	}
	return &pending{c: got}
}

// id is p's id; the zero ID for nil.
func (p *pending) id() history.ID {
	if p == nil {
		return history.ID{}
	}
	return p.c.ID
}

// resolveEntry says whether the set of p was applied. p may be nil.
func (s *Engine) resolveEntry(ctx context.Context, p *pending, applied bool) {
	if p == nil {
		return
	}
	if err := s.opts.history.Resolve(p.c.ID, applied); err != nil {
		s.opts.logger.WarnContext(ctx, "history: a change's outcome could not be recorded", "change", p.c.ID.String(), "applied", applied, "err", err)
	}
}

// resolveSteps resolves the set of p, whose steps were done (or not, done
// false) after its commit point: applied when all were; otherwise its
// entry is dropped and, if some were done, one of their files alone is
// appended (a new id: the set's was never given out, the set having
// failed). Each file of the entry goes with the step whose target is its
// path. The history is written before it returns, so that the entry is
// on file before the set's intent record goes.
func resolveSteps(h *history.Log, c history.Change, steps []workspace.Step, done []bool) (history.ID, error) {
	if !contains(done, false) {
		_, err := h.Restore(history.Encode(c))
		return c.ID, errors.Join(err, h.Write())
	}
	err := h.Resolve(c.ID, false)
	var undone []string
	for i, st := range steps {
		if !done[i] {
			undone = append(undone, st.To)
		}
	}
	var kept []history.File
	for _, f := range c.Files {
		if !contains(undone, f.Path) {
			kept = append(kept, f)
		}
	}
	var id history.ID
	if len(kept) > 0 && contains(done, true) {
		part := history.Change{Kind: c.Kind, Agent: c.Agent, RequestID: c.RequestID, Reverts: c.Reverts, Files: kept}
		if len(kept) < len(c.Files) && part.Kind != history.KindRevert {
			part.Kind = history.KindSet
		}
		got, aerr := h.Append(part)
		id, err = got.ID, errors.Join(err, aerr)
	}
	return id, errors.Join(err, h.Write())
}

// recordSteps is resolveSteps of the set of p (nil: none), logged.
func (s *Engine) recordSteps(ctx context.Context, p *pending, steps []workspace.Step, done []bool) {
	if p == nil {
		return
	}
	id, err := resolveSteps(s.opts.history, p.c, steps, done)
	if err != nil {
		s.opts.logger.WarnContext(ctx, "history: a change set's outcome could not be recorded", "change", p.c.ID.String(), "err", err)
	}
	if id != p.c.ID {
		s.opts.logger.InfoContext(ctx, "history: a change set applied in part is recorded with the files it changed", "change", id.String(), "prepared", p.c.ID.String())
	}
}

// point calls the test hook at a named moment of a commit (options.point).
func (s *Engine) point(name string) {
	if s.opts.point != nil {
		s.opts.point(name)
	}
}

func contains[T comparable](s []T, v T) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// diskShows reports whether the files of ws are as change c left them:
// each of its files has the version it gave it (absent for one it
// deleted), and a file it moved is gone from where it was.
func diskShows(ws *workspace.Workspace, c history.Change) bool {
	for _, f := range c.Files {
		v, err := ws.FileVersion(f.Path)
		switch {
		case f.After == "" && !errors.Is(err, workspace.ErrNotFound):
			return false
		case f.After != "" && (err != nil || v != f.After):
			return false
		}
		if f.From != "" {
			if _, err := ws.FileVersion(f.From); !errors.Is(err, workspace.ErrNotFound) {
				return false
			}
		}
	}
	return true
}

// recorded is the history's file of an edit about to be committed: its
// versions and the lines it removes and adds, at the hunks the edit
// itself makes (no diff of the whole file is run again).
func (p *editPlan) recorded(s *Engine, c *change) (history.File, history.Kind, bool) {
	return history.File{Path: s.canonical(c.rel), Before: p.f.Version, After: p.newVersion(),
		Hunks: history.HunksAt(p.doc, p.res.Doc, versions.EditHunks(p.doc, p.res))}, history.KindEdit, true
}

// recorded is the history's file of a write about to be committed: a file
// it creates has all its lines added; one it replaces without being able
// to read it as text (binary, too large) is recorded without hunks.
func (p *writePlan) recorded(s *Engine, c *change) (history.File, history.Kind, bool) {
	f := history.File{Path: s.canonical(c.rel), After: p.newVersion()}
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

// recorded is the history's file of a delete: every line the file had,
// removed. A directory is not a file and is not recorded.
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

// recorded is the history's file of a move: its two paths, its version
// unchanged, no lines.
func (m *movePlan) recorded(s *Engine, c *change) (history.File, history.Kind, bool) {
	return history.File{Path: m.to, From: m.from, Before: m.version, After: m.version}, history.KindMove, true
}
