package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/watch"
	"github.com/hashline/hashline/internal/workspace"
)

// The change history (internal/history): History lists the changes the
// engine recorded, Blame says which change last wrote each line of a
// file. The engine records the changes made outside the server that it
// learns of (a file the watcher saw change, or a read that found bytes
// other than the version the engine last knew there) as the agent
// history.External; record is where the changes the server commits are
// appended.

// ErrHistoryOff is History's and Blame's refusal by an engine that keeps
// no change history (one made with New without WithHistory).
var ErrHistoryOff = errors.New("this server keeps no change history, so it cannot list changes, say who wrote a line or revert a change; an engine started by hashlined (engine.Open) keeps one in its state directory")

// Bounds of History.
const (
	// DefaultHistoryEntries is the most entries a History page holds when
	// the request says none.
	DefaultHistoryEntries = 100
	// MaxHistoryEntries is the most entries a History page holds.
	MaxHistoryEntries = history.MaxLimit
	// historyRounds bounds the queries of the log one History call makes
	// while the caller's visibility filter drops changes: past them the
	// page is returned short, with a token to continue.
	historyRounds = 16
)

// HistoryRequest asks for a page of the change history.
type HistoryRequest struct {
	// Path is a file or a directory; "" (or ".") the whole workspace. A
	// file's history follows it back through the moves that brought it to
	// its path. A path that is not there now is taken as a file, or as a
	// directory when no file was ever there.
	Path string
	// Agent, when set, selects that agent's changes only (history.External
	// for those made outside the server).
	Agent string
	// Since and Until, when set, select changes made at or after Since and
	// before Until.
	Since, Until time.Time
	// MaxEntries is the most entries of the page: 0 means
	// DefaultHistoryEntries, and more than MaxHistoryEntries means that.
	MaxEntries int
	// PageToken continues from a page's NextPageToken; the request must be
	// otherwise the same.
	PageToken string
	// Diff asks for each file's hunks as a tagged diff (HistoryFile.Diff).
	Diff bool
	// Visible, when set, reports whether the caller may see the file at a
	// path (slash-separated, symlink-free, relative to the root): a change
	// none of whose files it may see is left out, and of a change set only
	// the files it may see are shown. A move between a path it may see and
	// one it may not is shown as the file appearing (From and Before
	// empty) or disappearing (at its old path, After empty, no lines),
	// never naming the other path. nil sees everything.
	Visible func(path string) bool
}

// HistoryResult is a page of the history, newest change first.
type HistoryResult struct {
	Entries []HistoryEntry
	// NextPageToken continues the listing; "" on its last page. A page
	// may hold fewer entries than asked and still have a token, when the
	// caller's visibility left many changes out.
	NextPageToken string
	// OlderDropped is set on the last page when the history has let older
	// changes go (past its bound in bytes or age).
	OlderDropped bool
}

// HistoryEntry is one committed change.
type HistoryEntry struct {
	// ID is the change's id (history.ID's form), which Revert takes and
	// the change's Watch events carry.
	ID    string
	Agent string
	Time  time.Time
	Kind  history.Kind
	// Files are the files the change touched that the caller may see.
	Files []HistoryFile
	// RequestID is the request_id of the call that made the change.
	RequestID string
	// Reverts is, for a revert, the id of the change it reverted.
	Reverts string
}

// HistoryFile is what a change did to one file.
type HistoryFile struct {
	// Path is the file's path after the change; From, for a move, its
	// path before.
	Path, From string
	// Before and After are its versions before and after; "" where there
	// was no file (or, for an external change, where the engine did not
	// know the file before).
	Before, After string
	// Added and Removed count the lines the change added and removed.
	Added, Removed int
	// Diff, with HistoryRequest.Diff, is the change's hunks as a unified
	// diff whose "-" lines carry the tags they had in Before and "+" lines
	// those they got in After. DiffOmitted says lines changed but the
	// history holds only their places: a change too large for its log, or
	// an external change whose earlier content the engine no longer held.
	Diff        string
	DiffOmitted bool
}

// History returns a page of the changes req selects, newest first.
func (s *Engine) History(ctx context.Context, req HistoryRequest) (*HistoryResult, error) {
	log := s.opts.history
	if log == nil {
		return nil, ErrHistoryOff
	}
	switch {
	case req.MaxEntries < 0:
		return nil, BadRequest("max_entries", "max_entries %d is negative; use 0 for the default of %d entries", req.MaxEntries, DefaultHistoryEntries)
	case !req.Since.IsZero() && !req.Until.IsZero() && !req.Since.Before(req.Until):
		return nil, BadRequest("until", "until (%s) is not after since (%s): no change can be in between", req.Until.Format(time.RFC3339Nano), req.Since.Format(time.RFC3339Nano))
	}
	limit := req.MaxEntries
	if limit == 0 {
		limit = DefaultHistoryEntries
	}
	limit = min(limit, MaxHistoryEntries)
	q := history.Query{Agent: req.Agent, Since: req.Since, Until: req.Until, PageToken: req.PageToken, Hunks: req.Diff}
	missing := false
	if req.Path != "" {
		target, fi, err := s.ws.Resolve(req.Path)
		if err != nil {
			return nil, err
		}
		switch {
		case target == ".":
		case fi != nil && fi.IsDir():
			q.Dir = target
		default:
			q.Path, missing = target, fi == nil
		}
	}
	res, err := s.historyPage(ctx, q, limit, req.Visible)
	if missing && (errors.Is(err, history.ErrBadPageToken) || err == nil && len(res.Entries) == 0 && res.NextPageToken == "" && req.PageToken == "") {
		// No file was ever at the path, or the token is a directory's:
		// the path names a directory that is gone.
		q.Dir, q.Path = q.Path, ""
		res, err = s.historyPage(ctx, q, limit, req.Visible)
	}
	if errors.Is(err, history.ErrBadPageToken) {
		return nil, BadRequest("page_token", "page_token is not one a History call with this path, agent and times returned; repeat the request without it")
	}
	if err != nil {
		return nil, err
	}
	if res.NextPageToken == "" && log.Horizon() > 1 {
		res.OlderDropped = true
	}
	return res, nil
}

// historyPage gathers up to limit entries visible to the caller, querying
// the log again for as many as the visibility filter dropped (each query
// asks for no more than are still wanted, so that its page token is
// exactly where the entries returned end).
func (s *Engine) historyPage(ctx context.Context, q history.Query, limit int, visible func(string) bool) (*HistoryResult, error) {
	res := &HistoryResult{}
	for round := 0; ; round++ {
		q.Limit = limit - len(res.Entries)
		p, err := s.opts.history.History(q)
		if err != nil {
			return nil, err
		}
		for _, c := range p.Changes {
			if e, ok := s.historyEntry(c, visible, q.Hunks); ok {
				res.Entries = append(res.Entries, e)
			}
		}
		res.NextPageToken = p.NextPageToken
		if p.NextPageToken == "" || len(res.Entries) >= limit || round+1 >= historyRounds {
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.PageToken = p.NextPageToken
	}
}

// historyEntry is c as the caller may see it (see HistoryRequest.Visible);
// false when it may see none of its files.
func (s *Engine) historyEntry(c history.Change, visible func(string) bool, diff bool) (HistoryEntry, bool) {
	e := HistoryEntry{ID: c.ID.String(), Agent: c.Agent, Time: c.Time, Kind: c.Kind, RequestID: c.RequestID, Reverts: c.Reverts.String()}
	for _, f := range c.Files {
		hf := HistoryFile{Path: f.Path, From: f.From, Before: f.Before, After: f.After, Added: f.Added, Removed: f.Removed}
		hunks := f.Hunks
		if visible != nil {
			to, from := visible(f.Path), f.From != "" && visible(f.From)
			switch {
			case to && f.From != "" && !from:
				hf.From, hf.Before = "", "" // came in from a path it may not see
			case !to && from:
				// Left for a path it may not see: gone, as far as it knows.
				hf = HistoryFile{Path: f.From, Before: f.Before}
				hunks = nil
			case !to:
				continue
			}
		}
		if diff {
			hf.Diff = s.hunkDiff(hunks)
			hf.DiffOmitted = len(hunks) > 0 && hf.Diff == "" ||
				c.Kind == history.KindExternal && len(hunks) == 0 && hf.Before != hf.After
		}
		e.Files = append(e.Files, hf)
	}
	return e, len(e.Files) > 0
}

// hunkDiff renders hunks as a unified diff with tagged lines: "-" lines
// with the numbers and hashes they had, "+" lines with those they got.
// It is "" when the hunks hold no lines (kept without them).
func (s *Engine) hunkDiff(hs []history.Hunk) string {
	var b strings.Builder
	h := s.opts.hasher
	for _, k := range hs {
		if k.Removed == nil && k.Added == nil {
			return ""
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", unifiedRange(k.A0, k.A1), unifiedRange(k.B0, k.B1))
		for i, l := range k.Removed {
			fmt.Fprintf(&b, "-%d:%s|%s\n", k.A0+1+i, h.Sum(l), hashline.CutLine(l, s.opts.maxLineBytes))
		}
		for i, l := range k.Added {
			fmt.Fprintf(&b, "+%d:%s|%s\n", k.B0+1+i, h.Sum(l), hashline.CutLine(l, s.opts.maxLineBytes))
		}
	}
	return b.String()
}

// unifiedRange is lines from..to (0-based, half-open) as a unified diff's
// hunk header gives them: the first line and the count, or for no lines
// the line before them.
func unifiedRange(from, to int) string {
	if from == to {
		return fmt.Sprintf("%d,0", from)
	}
	return fmt.Sprintf("%d,%d", from+1, to-from)
}

// BlameRequest asks who last wrote each line of a page of a file.
type BlameRequest struct {
	Path string
	// Offset and Limit are Read's: the first line (0 means 1) and the
	// most lines (0 means the read limit).
	Offset, Limit int
}

// BlameResult is a page of a file's lines, each with the change that
// last wrote it. The page is the one Read returns (and the caller is
// shown its lines as by a Read).
type BlameResult struct {
	Path, Version string
	Lines         []BlameLine
	TotalLines    int
	// Truncated says the page ended before the file; NextOffset is then
	// the offset to ask for next.
	Truncated  bool
	NextOffset int
}

// BlameLine is one line and the change that last wrote it.
type BlameLine struct {
	hashline.TaggedLine
	// ChangeID, Agent and Time are the change's; all empty, and
	// BeforeHistory set, when the line is older than the history: written
	// before its oldest change kept, or by a change it does not hold the
	// lines of (an external change whose earlier content the engine no
	// longer held).
	ChangeID      string
	Agent         string
	Time          time.Time
	BeforeHistory bool
}

// Blame returns a page of the file as Read does, each line with the
// change that last wrote it, computed from the history's hunks.
func (s *Engine) Blame(ctx context.Context, req BlameRequest) (*BlameResult, error) {
	log := s.opts.history
	if log == nil {
		return nil, ErrHistoryOff
	}
	r, err := s.Read(ctx, ReadRequest{Path: req.Path, Offset: req.Offset, Limit: req.Limit})
	if err != nil {
		return nil, err
	}
	spans, err := log.Blame(s.canonical(r.Path), r.TotalLines)
	if err != nil {
		return nil, err
	}
	res := &BlameResult{Path: r.Path, Version: r.Version, TotalLines: r.TotalLines, Truncated: r.Truncated, NextOffset: r.NextOffset,
		Lines: make([]BlameLine, len(r.Lines))}
	k := 0
	for i, l := range r.Lines {
		for k < len(spans)-1 && spans[k].End < l.Number {
			k++
		}
		bl := BlameLine{TaggedLine: l, BeforeHistory: true}
		if k < len(spans) && spans[k].Start <= l.Number && l.Number <= spans[k].End && !spans[k].ID.IsZero() {
			sp := spans[k]
			bl.ChangeID, bl.Agent, bl.Time, bl.BeforeHistory = sp.ID.String(), sp.Agent, sp.Time, false
		}
		res.Lines[i] = bl
	}
	return res, nil
}

// record appends a change to the history and returns its id: c's Kind,
// Files (paths symlink-free, as canonical gives them), RequestID and
// Reverts as the caller sets them; its Agent, when empty, is the caller's
// (Agent(ctx)). Without a history it records nothing and returns the zero
// ID. A change that cannot be recorded is logged and its error returned:
// the change itself stands.
func (s *Engine) record(ctx context.Context, c history.Change) (history.ID, error) {
	if s.opts.history == nil {
		return history.ID{}, nil
	}
	if c.Agent == "" {
		c.Agent = Agent(ctx)
	}
	got, err := s.opts.history.Append(c)
	if err != nil {
		s.opts.logger.WarnContext(ctx, "history: a change was made but could not be recorded", "kind", c.Kind, "agent", c.Agent, "err", err)
	}
	return got.ID, err // zero unless the change is recorded, its write failed
}

// noticeRead records the change a Read found made outside the server:
// the file rel (view key key), read as f with text doc, is not the
// version the engine last knew there. Reads take no lock, so the check is
// made again under the file's edit lock, where the engine's own writes
// have recorded their versions: a version one of them wrote is never
// taken for an external change. A check that cannot be made (the lock
// not had before ctx ends, the file changed again) records nothing; the
// next read or the watcher sees the change.
func (s *Engine) noticeRead(ctx context.Context, rel, key string, f *workspace.File, doc *hashline.Document) {
	if s.opts.history == nil || !exactText(f.Encoding) {
		return
	}
	old, ok := s.latest.Get(key)
	if !ok || old == "" || old == f.Version {
		return
	}
	unlock, err := s.locks.lock(ctx, key)
	if err != nil {
		return
	}
	defer unlock()
	if cur, _ := s.latest.Get(key); cur != old {
		return // recorded, or written by the server, since
	}
	if v, err := s.ws.FileVersion(rel); err != nil || v != f.Version {
		return
	}
	s.noticeLoaded(ctx, rel, key, f, doc)
}

// noticeLoaded is noticeRead for a change about to be planned, under the
// file's edit lock already: a file changed outside the server since the
// engine last knew it is recorded as that external change first, so that
// the server's change is recorded with only its own lines. doc is f's
// text, nil when not parsed yet.
func (s *Engine) noticeLoaded(ctx context.Context, rel, key string, f *workspace.File, doc *hashline.Document) {
	if s.opts.history == nil || !exactText(f.Encoding) {
		return
	}
	old, ok := s.latest.Get(key)
	if !ok || old == "" || old == f.Version {
		return
	}
	if doc == nil {
		doc = parseText(f.Text)
	}
	st := watch.State{Version: f.Version, Text: f.Text, HasText: true}
	id := s.noticeExternal(ctx, s.canonical(rel), key, old, st, doc, false)
	s.watchHub().Publish(watch.Change{Path: s.canonical(rel), External: true, New: st, ChangeID: id})
}

// noticeObserved records the change the file-system watcher saw at rel
// (view key key), which is now st (created: it was seen to appear), and
// returns its id: "" when there is no history, the version is the one the
// engine last knew (its own write, or a change a read recorded), or the
// file is not UTF-8 text. Called
// with the file's edit lock held.
func (s *Engine) noticeObserved(ctx context.Context, rel, key string, st watch.State, created bool, exact bool) string {
	if s.opts.history == nil {
		return ""
	}
	// A file the engine knew only as decoded text (UTF-16) has no latest
	// version (known), so its changes, the engine's own writes among
	// them, cannot be told apart: only UTF-8 files' are recorded.
	old, _ := s.latest.Get(key)
	if old == st.Version || st.Version != "" && (!st.HasText || !exact) {
		return ""
	}
	var doc *hashline.Document
	if st.Version != "" && exact {
		doc = parseText(st.Text)
	}
	return s.noticeExternal(ctx, rel, key, old, st, doc, created)
}

// noticeExternal records an external change of the file at path (view
// key key) from version old ("" when not known) to st (text doc, nil when
// not exact), and makes st the version the engine knows there. Its hunks
// are the diff of old's snapshot and doc when the cache still holds old;
// otherwise the change is recorded without hunks (the file changed, which
// lines is not known), except a file seen created, all of whose lines are
// new. It returns the change's id, "" when none was recorded.
func (s *Engine) noticeExternal(ctx context.Context, path, key, old string, st watch.State, doc *hashline.Document, created bool) string {
	if old == "" && st.Version == "" {
		return ""
	}
	f := history.File{Path: path, Before: old, After: st.Version}
	var oldDoc *hashline.Document
	if old != "" {
		oldDoc, _ = s.cache.Get(old)
	}
	switch {
	case st.Version == "" && oldDoc != nil:
		f.Hunks = history.HunksOf(oldDoc, nil)
	case st.Version != "" && doc != nil && oldDoc != nil:
		f.Hunks = history.HunksOf(oldDoc, doc)
	case old == "" && created && doc != nil:
		f.Hunks = history.HunksOf(nil, doc)
	}
	id, _ := s.record(ctx, history.Change{Kind: history.KindExternal, Agent: history.External, Files: []history.File{f}})
	switch {
	case st.Version == "":
		s.latest.Forget(key)
	case doc != nil:
		s.known(key, st.Version, doc, true)
	default:
		s.latest.Set(key, "")
	}
	return id.String()
}

// ChangePaths returns the paths a change of the history touched (both
// ends of a move), for the face to check the caller's access to them. An
// id the history cannot name is its error (history.ErrMalformed,
// ErrUnknown, ErrExpired); without a history, ErrHistoryOff.
func (s *Engine) ChangePaths(id string) ([]string, error) {
	if s.opts.history == nil {
		return nil, ErrHistoryOff
	}
	c, err := s.opts.history.Get(id)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range c.Files {
		out = append(out, f.Path)
		if f.From != "" {
			out = append(out, f.From)
		}
	}
	return out, nil
}
