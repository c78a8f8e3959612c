package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// Revert undoes one change of the history (a call's change, a change set,
// a change made outside the server, or a revert) as a change of its own,
// rebased over everything since: each file's inverse is planned as the
// change a single call would make, and the files are one change set
// through the one commit path (change.go), so a revert of several files
// is all or nothing, across a crash too. Per file of the change:
//
//   - lines changed: the inverse of its hunks is an edit of the file now at
//     the path, made against the version the change left (its After). That
//     edit is rebased onto the file as it is exactly as an Edit with that
//     baseVersion would be (versions.Resolve): a later change to the same
//     lines is a conflict, never overwritten. The base is the snapshot the
//     cache holds, or else is rebuilt from the file as it is now, back
//     through the hunks of every later change of the path. A file moved
//     away since is not followed: its path no longer holds it, and the
//     revert is refused naming the move.
//   - created: deleted, when it is still the version the change wrote.
//   - deleted: written again at its path, which must be free, with the
//     bytes of the snapshot of its version, or else with the lines the
//     history holds (and "\n" line endings, which a warning says).
//   - moved: moved back, when it is still the version it was moved with
//     and its old path is free. A file the move replaced is not restored:
//     the history never held its content.
//
// A refusal because of later changes is a *RevertConflictError naming
// them; a change whose inverse the history cannot give (its lines not
// kept, a file that was not text) is ErrNotRevertible.

// ErrNotRevertible is wrapped by the refusal of a change the history holds
// but cannot undo: it kept the change's places but not its lines (a change
// too large for the log, a file that was not text, a change made outside
// the server whose earlier content the server did not hold), or it cannot
// rebuild the version the change left to rebase from.
var ErrNotRevertible = errors.New("the change cannot be reverted")

// RevertRequest asks to undo one change of the history.
type RevertRequest struct {
	// ChangeID names the change, as History, Blame and Watch events give
	// it (history.ID's form).
	ChangeID string
	// DryRun plans the revert and returns what it would write, and writes
	// nothing.
	DryRun bool
}

// RevertResult is what a Revert did (or, with DryRun, would do).
type RevertResult struct {
	// ChangeID is the revert's own id in the history, which can be
	// reverted in turn; "" for a dry run.
	ChangeID string
	// Reverted is the id of the change undone.
	Reverted string
	// Results has one result per file of the change, in its order:
	// *EditResult for lines put back (its TaggedDiff shows them),
	// *WriteResult for a deleted file written again, *DeleteResult for a
	// created file deleted, *MoveResult for a file moved back.
	Results []ChangeResult
	DryRun  bool
	// Warnings say where the revert is not byte for byte what the change
	// undone found: a deleted file restored from the history's lines.
	Warnings []string
}

// LaterChange is a change made after the one a revert would undo that
// touched the same lines or paths.
type LaterChange struct {
	ID, Agent string
	// Path is where it meets the revert.
	Path string
}

// RevertConflict is where a refused revert met later changes in one file.
type RevertConflict struct {
	// Index is the file's place in the change reverted; Path the path the
	// revert would change.
	Index int
	Path  string
	// What says what happened at the path since, and what to do.
	What string
	// Lines, for lines that later changes rewrote, is the rebase's
	// refusal: the lines as they are now, with fresh tags, those the later
	// changes wrote among them marked. nil when the path itself met a
	// later change (the file gone, changed, or another in the way).
	Lines *versions.ConflictError
}

// RevertConflictError is a revert refused because later changes touched
// the lines or paths it would undo. Nothing was written.
type RevertConflictError struct {
	// ID is the change the revert would undo.
	ID string
	// Later are the later changes met, oldest first, once per path.
	Later []LaterChange
	// Files are the files where they were met, in the change's order.
	Files []RevertConflict
}

func (e *RevertConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "reverting %s would undo what later changes wrote, so nothing was written:\n", e.ID)
	for _, f := range e.Files {
		fmt.Fprintf(&b, "%s: %s\n", f.Path, f.What)
		if f.Lines != nil {
			writeConflictLines(&b, f.Lines)
		}
	}
	b.WriteString("Revert the later changes first (the newest first), or make the change you want by hand")
	if slices.ContainsFunc(e.Files, func(f RevertConflict) bool { return f.Lines != nil }) {
		b.WriteString(" with the refs shown (>>> marks the lines later changes wrote)")
	}
	return b.String()
}

// writeConflictLines writes the current lines a rebase's conflicts show,
// in order, those other changes wrote marked ">>> ", "..." between runs.
func writeConflictLines(b *strings.Builder, ce *versions.ConflictError) {
	lines := map[int]hashline.TaggedLine{}
	marked := map[int]bool{}
	for _, c := range ce.Conflicts {
		for _, t := range c.Fresh {
			lines[t.Number] = t
		}
		for _, n := range c.Marked {
			marked[n] = true
		}
	}
	hashline.WriteMarkedLines(b, lines, marked)
}

// reverting is the revert a change set is (its history entry's kind and
// reverted change are recordAs's): the change it undoes, and once
// recorded its own id.
type reverting struct{ of, id history.ID }

type revertKey struct{}

func withRevert(ctx context.Context, r *reverting) context.Context {
	return context.WithValue(ctx, revertKey{}, r)
}

// revertRecorded notes id, the history id the set was recorded under, for
// the revert the set is, if it is one (apply).
func revertRecorded(ctx context.Context, id history.ID) {
	if r, ok := ctx.Value(revertKey{}).(*reverting); ok {
		r.id = id
	}
}

// revertEdit is what an edit that reverts lines carries to planEdit, which
// builds its edits under the file's lock, against the version the change
// left.
type revertEdit struct {
	id    history.ID // the change reverted
	path  string     // the file's path in the history
	after string     // the version the change left: the base
	// hunks are the change's hunks of the file, in the numbering of after,
	// adjacent ones merged.
	hunks []history.Hunk
}

// undo is one file of the change reverted and the change that undoes it.
type undo struct {
	f      history.File
	change Change
	edit   *revertEdit // for lines
	// lines says a deleted file is written again from the history's lines,
	// not from a snapshot of its bytes.
	lines bool
}

// Revert undoes the change req names, rebased over every change since.
func (s *Engine) Revert(ctx context.Context, req RevertRequest) (*RevertResult, error) {
	log := s.opts.history
	if log == nil {
		return nil, ErrHistoryOff
	}
	c, err := log.Get(req.ChangeID)
	if err != nil {
		return nil, err
	}
	undos := make([]*undo, len(c.Files))
	changes := make([]Change, len(c.Files))
	for i, f := range c.Files {
		u, err := s.inverse(c, f, req.DryRun)
		if err != nil {
			return nil, err
		}
		undos[i], changes[i] = u, u.change
	}
	r := &reverting{of: c.ID}
	res, err := s.apply(withRevert(recordAs(ctx, history.KindRevert, c.ID), r), changes, req.DryRun, len(changes) == 1, false)
	if err != nil {
		return nil, s.revertRefused(c, undos, err)
	}
	out := &RevertResult{ChangeID: r.id.String(), Reverted: c.ID.String(), Results: res.Results, DryRun: res.DryRun}
	for i, u := range undos {
		if w, ok := res.Results[i].(*WriteResult); ok && w.Version != u.f.Before {
			why := "its encoding was not UTF-8"
			if u.lines {
				why = "the server no longer held its bytes, so it was written from the history's lines, with \\n line endings and a final newline"
			}
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s was restored with the lines it had, but not byte for byte (%s): it is version %s, not %s",
				w.Path, why, w.Version, u.f.Before))
		}
	}
	return out, nil
}

// inverse is the change that undoes f, a file of change c.
func (s *Engine) inverse(c history.Change, f history.File, dryRun bool) (*undo, error) {
	u := &undo{f: f}
	switch {
	case f.From != "":
		if f.Before != f.After || len(f.Hunks) > 0 {
			return nil, fmt.Errorf("%w: %s: %s moved %s and changed it in one change, which this server does not undo", ErrNotRevertible, c.ID, c.ID, f.From)
		}
		u.change = &MoveRequest{From: f.Path, To: f.From, ExpectedVersion: f.After}
	case f.After == "":
		content, fromLines, err := s.deletedContent(c, f)
		if err != nil {
			return nil, err
		}
		u.lines = fromLines
		u.change = &WriteRequest{Path: f.Path, Content: content, Mode: WriteCreate}
	case f.Before == "":
		switch {
		case c.Kind == history.KindExternal && len(f.Hunks) == 0:
			return nil, fmt.Errorf("%w: %s changed %s outside the server when the server did not know the file, so what it was before is not known; write the content you want instead",
				ErrNotRevertible, c.ID, f.Path)
		case len(f.Hunks) == 0 && f.After != workspace.Version(nil):
			return nil, fmt.Errorf("%w: %s replaced %s, which was not text, and the history does not hold what it was; write the content you want instead",
				ErrNotRevertible, c.ID, f.Path)
		}
		u.change = &DeleteRequest{Path: f.Path, ExpectedVersion: f.After}
	default:
		if c.LinesOmitted || len(f.Hunks) == 0 {
			return nil, fmt.Errorf("%w: the history holds where %s changed %s but not its lines (%s); make the change you want by hand",
				ErrNotRevertible, c.ID, f.Path, omittedWhy(c))
		}
		u.edit = &revertEdit{id: c.ID, path: f.Path, after: f.After, hunks: mergeAdjacent(f.Hunks)}
		u.change = &EditRequest{Path: f.Path, BaseVersion: f.After, Strict: true, DryRun: dryRun, revert: u.edit}
	}
	return u, nil
}

// omittedWhy says why a change's lines are not in the history.
func omittedWhy(c history.Change) string {
	switch {
	case c.LinesOmitted:
		return "the change was too large for the history to keep its lines"
	case c.Kind == history.KindExternal:
		return "it was made outside the server when the server no longer held the file's earlier content"
	}
	return "the file was not text"
}

// deletedContent is what the file f, which change c deleted, held: the
// bytes of the snapshot of its version, or else its lines as the history
// holds them, joined by "\n" (fromLines).
func (s *Engine) deletedContent(c history.Change, f history.File) (content string, fromLines bool, err error) {
	if d, ok := s.cache.Get(f.Before); ok {
		return string(d.Bytes()), false, nil
	}
	if f.Before == workspace.Version(nil) {
		return "", false, nil
	}
	var lines []string
	next := 0
	for _, h := range f.Hunks {
		if h.A0 != next || h.B0 != h.B1 || h.Removed == nil {
			lines = nil
			break
		}
		lines, next = append(lines, h.Removed...), h.A1
	}
	if c.LinesOmitted || lines == nil {
		return "", false, fmt.Errorf("%w: the history does not hold the content of %s, which %s deleted (%s)", ErrNotRevertible, f.Path, c.ID, omittedWhy(c))
	}
	return linesText(lines), true, nil
}

// linesText is lines as an edit's or a write's text: each followed by "\n".
func linesText(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// mergeAdjacent returns hs with hunks that touch in the new numbering (one
// ends where the next starts) merged into one, so that their inverses are
// one edit each: an insertion at the edge of a range another edit replaces
// would be planned as touching it.
func mergeAdjacent(hs []history.Hunk) []history.Hunk {
	var out []history.Hunk
	for _, h := range hs {
		if k := len(out) - 1; k >= 0 && out[k].B1 == h.B0 {
			p := &out[k]
			p.A1, p.B1 = h.A1, h.B1
			p.Removed = append(slices.Clip(p.Removed), h.Removed...)
			p.Added = append(slices.Clip(p.Added), h.Added...)
			continue
		}
		out = append(out, h)
	}
	return out
}

// revertRebase is planEdit's resolution of an edit that reverts lines
// (re), against the file f (text doc) under its lock: the inverse of the
// change's hunks as edits of the version it left, rebased onto the file
// as it is, as versions.Resolve rebases an Edit made against that
// version. The agent's views play no part: the references are the
// change's, not what the agent read.
func (s *Engine) revertRebase(re *revertEdit, f *workspace.File, doc *hashline.Document) ([]hashline.Edit, *rebased, error) {
	base, err := s.revertBase(re, f.Version, doc)
	if err != nil {
		return nil, nil, err
	}
	edits, err := s.inverseEdits(re, base)
	if err != nil {
		return nil, nil, err
	}
	if !versions.HasLineRefs(edits) {
		// The change left the file empty: its lines go back into the file
		// only as it left it.
		if f.Version != re.after {
			return edits, nil, errRefilled
		}
		return edits, &rebased{edits: edits}, nil
	}
	r, err := versions.Resolve(versions.Batch{
		Edits: edits, Hasher: s.opts.hasher, BaseVersion: re.after, Current: f.Version, Doc: doc,
		Snapshot: func(v string) (*hashline.Document, bool) { return base, v == re.after },
	})
	if err != nil {
		return edits, nil, err
	}
	if r.From == "" && f.Version != re.after {
		return edits, nil, fmt.Errorf("%w: the edits that undo %s do not match %s as the change left it", ErrNotRevertible, re.id, re.path)
	}
	return edits, &rebased{edits: r.Edits, from: r.From}, nil
}

// errRefilled refuses the revert of a change that emptied a file which
// has lines again.
var errRefilled = errors.New("the change emptied the file, which has lines again since")

// inverseEdits are the edits that undo re's hunks in base, the version
// the change left: each hunk's lines there replaced by (or, for lines it
// only removed, inserted again as) the lines it removed. An insertion is
// anchored on the line before it, or before the first line.
func (s *Engine) inverseEdits(re *revertEdit, base *hashline.Document) ([]hashline.Edit, error) {
	h := s.opts.hasher
	ref := func(n int) string { return hashline.Ref{Line: n, Hash: base.Hash(h, n)}.String() }
	out := make([]hashline.Edit, 0, len(re.hunks))
	for _, k := range re.hunks {
		if k.B1 > base.Len() || len(k.Added) != k.B1-k.B0 || len(k.Removed) != k.A1-k.A0 {
			return nil, fmt.Errorf("%w: the history's lines of %s do not fit %s as the change left it (version %s)", ErrNotRevertible, re.id, re.path, re.after)
		}
		for i, l := range k.Added {
			if base.Line(k.B0+1+i) != l {
				return nil, fmt.Errorf("%w: the history's lines of %s do not match %s as the change left it (version %s, line %d)", ErrNotRevertible, re.id, re.path, re.after, k.B0+1+i)
			}
		}
		text := linesText(k.Removed)
		switch {
		case k.B1 > k.B0 && text == "":
			out = append(out, hashline.Edit{Op: hashline.OpDelete, Start: ref(k.B0 + 1), End: ref(k.B1)})
		case k.B1 > k.B0:
			out = append(out, hashline.Edit{Op: hashline.OpReplace, Start: ref(k.B0 + 1), End: ref(k.B1), Text: text})
		case base.Len() == 0:
			out = append(out, hashline.Edit{Op: hashline.OpAppend, Text: text})
		case k.B0 == 0:
			out = append(out, hashline.Edit{Op: hashline.OpInsertBefore, Start: ref(1), Text: text})
		default:
			out = append(out, hashline.Edit{Op: hashline.OpInsertAfter, Start: ref(k.B0), Text: text})
		}
	}
	return out, nil
}

// revertBase is the text of re.after, the version the change left, for
// the rebase: the file's own when it is still that version, else the
// snapshot cache's, else rebuilt from the file as it is now (version cur,
// text doc) back through the later changes' hunks.
func (s *Engine) revertBase(re *revertEdit, cur string, doc *hashline.Document) (*hashline.Document, error) {
	if re.after == cur {
		return doc, nil
	}
	if d, ok := s.cache.Get(re.after); ok {
		return d, nil
	}
	later, complete, err := s.opts.history.Since(re.id, re.path)
	if err != nil {
		return nil, err
	}
	cannot := func(why string) error {
		return fmt.Errorf("%w: the server no longer holds %s as %s left it (version %s), and cannot rebuild it from the history: %s. Make the change you want by hand (the change's diff is in the history)",
			ErrNotRevertible, re.path, re.id, re.after, why)
	}
	if !complete {
		return nil, cannot("changes after it were lost to a damaged history file")
	}
	lines := make([]string, doc.Len())
	for i := range lines {
		lines[i] = doc.Line(i + 1)
	}
	v := cur
	for i := len(later) - 1; i >= 0; i-- {
		l := later[i]
		var f *history.File
		for j := range l.Files {
			if l.Files[j].Path == re.path || l.Files[j].From == re.path {
				f = &l.Files[j]
			}
		}
		switch {
		case f == nil || f.From != "":
			return nil, cannot(fmt.Sprintf("%s moved a file to or from that path", l.ID))
		case f.After != v:
			return nil, cannot(fmt.Sprintf("the file changed without the history seeing it, after %s", l.ID))
		case f.Before != f.After && (l.LinesOmitted || len(f.Hunks) == 0):
			return nil, cannot(fmt.Sprintf("the history holds where %s changed it but not its lines", l.ID))
		}
		var ok bool
		if lines, ok = unapply(lines, f.Hunks); !ok {
			return nil, cannot(fmt.Sprintf("the lines %s wrote are not in the file where the history says", l.ID))
		}
		v = f.Before
	}
	if v != re.after {
		return nil, cannot("the file changed without the history seeing it, before the changes it holds")
	}
	return hashline.ParseText(linesText(lines)), nil
}

// unapply undoes hunks on lines, the text they made: each hunk's added
// lines are replaced by the lines it removed. false when the added lines
// are not there.
func unapply(lines []string, hs []history.Hunk) ([]string, bool) {
	out := make([]string, 0, len(lines))
	prev := 0
	for _, h := range hs {
		if h.B0 < prev || h.B1 > len(lines) || !slices.Equal(lines[h.B0:h.B1], h.Added) {
			return nil, false
		}
		out = append(append(out, lines[prev:h.B0]...), h.Removed...)
		prev = h.B1
	}
	return append(out, lines[prev:]...), true
}

// maxLater bounds the later changes a conflict names per path: the newest.
const maxLater = 20

// revertRefused is the error of a revert of c whose set (the undos' changes)
// was refused with err: a *RevertConflictError when every failure is one
// of a later change in the way, else err as it is.
func (s *Engine) revertRefused(c history.Change, undos []*undo, err error) error {
	failures := []ChangeFailure{{Index: 0, Err: err}}
	var setE *ChangeSetError
	if errors.As(err, &setE) {
		failures = setE.Failures
	} else if len(undos) != 1 {
		return err // refused before any change was planned
	}
	out := &RevertConflictError{ID: c.ID.String()}
	seen := map[[2]string]bool{}
	var later []history.Change
	for _, f := range failures {
		rc, met, ok := s.revertConflict(c, undos[f.Index], f.Err)
		if !ok {
			return err
		}
		rc.Index = f.Index
		out.Files = append(out.Files, rc)
		for _, l := range met {
			if !seen[[2]string{l.ID.String(), rc.Path}] {
				seen[[2]string{l.ID.String(), rc.Path}] = true
				later = append(later, l)
				out.Later = append(out.Later, LaterChange{ID: l.ID.String(), Agent: l.Agent, Path: rc.Path})
			}
		}
	}
	// Oldest first, across the files.
	order := make([]int, len(later))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := later[a].ID.Seq(), later[b].ID.Seq()
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	sorted := make([]LaterChange, len(order))
	for i, k := range order {
		sorted[i] = out.Later[k]
	}
	out.Later = sorted
	return out
}

// revertConflict is u's failure err as a conflict with later changes, and
// those changes; false for a failure of another kind.
func (s *Engine) revertConflict(c history.Change, u *undo, err error) (RevertConflict, []history.Change, bool) {
	var ce *versions.ConflictError
	var vm *VersionMismatchError
	f := u.f
	switch {
	case errors.As(err, &ce) && u.edit != nil:
		met := s.linesMet(c.ID, u.edit)
		return RevertConflict{Path: f.Path, Lines: ce,
			What: "lines the revert would put back were changed since by " + changeList(met)}, met, true
	case errors.Is(err, errRefilled):
		met := s.pathMet(c.ID, f.Path, func(history.File) bool { return true })
		return RevertConflict{Path: f.Path, What: fmt.Sprintf("%s emptied the file, and it has lines again since, written by %s: the revert would put its old lines among them", c.ID, changeList(met))}, met, true
	case errors.Is(err, workspace.ErrNotFound):
		met := s.pathMet(c.ID, f.Path, func(l history.File) bool { return l.After == "" || l.From == f.Path })
		what := "the file is no longer there (removed outside the server)"
		if len(met) > 0 {
			last := met[len(met)-1]
			what = "the file is no longer there: " + goneHow(last, f.Path) + "; a revert does not follow a file moved since: revert " + last.ID.String() + " first, or make the change by hand where the file is now"
		}
		return RevertConflict{Path: f.Path, What: what}, met, true
	case errors.Is(err, workspace.ErrExists):
		at := f.Path
		if f.From != "" {
			at = f.From
		}
		met := s.pathMet(c.ID, at, func(l history.File) bool { return l.Path == at && (l.Before == "" || l.From != "") })
		what := "a file is at " + at + " again"
		if len(met) > 0 {
			what += ", put there by " + changeList(met)
		}
		what += ": the revert would put the file back over it; move or delete it first"
		return RevertConflict{Path: at, What: what}, met, true
	case errors.As(err, &vm):
		met := s.pathMet(c.ID, f.Path, func(l history.File) bool { return l.Before != l.After || l.From == f.Path })
		what := "the file was changed since"
		if len(met) > 0 {
			what += " by " + changeList(met)
		}
		if f.From != "" {
			what += ": moving it back would move those changes with it"
		} else {
			what += ": deleting it would delete those changes with it"
		}
		return RevertConflict{Path: f.Path, What: what}, met, true
	}
	return RevertConflict{}, nil, false
}

// goneHow says how change l took the file away from path.
func goneHow(l history.Change, path string) string {
	for _, f := range l.Files {
		if f.From == path {
			return fmt.Sprintf("%s (agent %s) moved it to %s", l.ID, l.Agent, f.Path)
		}
	}
	return fmt.Sprintf("%s (agent %s) deleted it", l.ID, l.Agent)
}

// changeList names changes for a message: "c5-0a1b2c3d (agent b), ...".
func changeList(cs []history.Change) string {
	if len(cs) == 0 {
		return "changes the history does not name (made outside the server, or lost)"
	}
	parts := make([]string, len(cs))
	for i, l := range cs {
		parts[i] = fmt.Sprintf("%s (agent %s)", l.ID, l.Agent)
	}
	return strings.Join(parts, ", ")
}

// pathMet returns the changes after id whose file at path (or moved from
// it) match says are in the way, oldest first: the newest maxLater.
func (s *Engine) pathMet(id history.ID, path string, match func(history.File) bool) []history.Change {
	later, _, err := s.opts.history.Since(id, path)
	if err != nil {
		return nil
	}
	var out []history.Change
	for _, l := range later {
		for _, f := range l.Files {
			if (f.Path == path || f.From == path) && match(f) {
				out = append(out, l)
				break
			}
		}
	}
	if len(out) > maxLater {
		out = out[len(out)-maxLater:]
	}
	return out
}

// linesMet returns the changes after id that touched the lines re puts
// back, oldest first: their hunks are followed from the version the
// change left, and a change whose hunk overlaps the lines re replaces, or
// inserts inside them or at a point where re inserts, meets them. A
// change that moved a file to or from the path, or changed it without
// hunks, meets them too. If none is found so (a diff may align lines
// otherwise than the hunks), every later change of the path's lines is
// named.
func (s *Engine) linesMet(id history.ID, re *revertEdit) []history.Change {
	later, _, err := s.opts.history.Since(id, re.path)
	if err != nil {
		return nil
	}
	spans := make([][2]int, len(re.hunks))
	for i, k := range re.hunks {
		spans[i] = [2]int{k.B0, k.B1}
	}
	var met, changed []history.Change
	for _, l := range later {
		var f *history.File
		for j := range l.Files {
			if l.Files[j].Path == re.path || l.Files[j].From == re.path {
				f = &l.Files[j]
			}
		}
		if f == nil {
			continue
		}
		if f.From != "" || f.Before != f.After {
			changed = append(changed, l)
		}
		switch {
		case f.From != "" || f.Before != f.After && len(f.Hunks) == 0:
			met = append(met, l)
			continue
		case meets(spans, f.Hunks):
			met = append(met, l)
		}
		for i := range spans {
			spans[i] = [2]int{mapLine(f.Hunks, spans[i][0], false), mapLine(f.Hunks, spans[i][1], spans[i][1] > spans[i][0])}
		}
	}
	if len(met) == 0 {
		met = changed
	}
	if len(met) > maxLater {
		met = met[len(met)-maxLater:]
	}
	return met
}

// meets reports whether a hunk of hs touches one of spans, runs of lines
// [lo, hi) in the numbering hs start from: it rewrites a line of a span,
// inserts strictly inside one, or, for an empty span (an insertion point),
// rewrites the line before it or inserts at it.
func meets(spans [][2]int, hs []history.Hunk) bool {
	for _, sp := range spans {
		lo, hi := sp[0], sp[1]
		for _, h := range hs {
			switch {
			case lo == hi && h.A0 == h.A1 && h.A0 == lo:
				return true
			case lo == hi && h.A0 < h.A1 && h.A0 <= lo-1 && lo-1 < h.A1:
				return true
			case lo == hi && lo == 0 && h.A0 == 0 && h.A1 > 0:
				return true
			case lo < hi && h.A0 < h.A1 && h.A0 < hi && lo < h.A1:
				return true
			case lo < hi && h.A0 == h.A1 && lo < h.A0 && h.A0 < hi:
				return true
			}
		}
	}
	return false
}

// mapLine carries the boundary x (x lines before it) across hs, from the
// numbering they start from to the one they make: a boundary inside a
// hunk goes to the hunk's start, or, for the end of a span (end), to its
// end, so that a span grows over what a hunk rewrote inside it.
func mapLine(hs []history.Hunk, x int, end bool) int {
	delta := 0
	for _, h := range hs {
		if x <= h.A0 {
			return x + delta
		}
		if x < h.A1 {
			if end {
				return h.B1
			}
			return h.B0
		}
		delta = h.B1 - h.A1
	}
	return x + delta
}
