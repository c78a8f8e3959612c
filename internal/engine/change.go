package engine

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/watch"
	"github.com/hashline/hashline/internal/workspace"
)

// Edit, Write, Delete, Move and Apply are one engine: a call of Edit,
// Write, Delete or Move is a change set of its one change, and a change
// set is planned whole before anything is written. Its changes are checked
// without locks first (their fields, and that no two touch one path), then
// every path is locked, in sorted order, after the tree lock (held
// exclusively by a set that removes a directory), and each change is
// planned under them (planEdit rebases an edit's references). Any failure
// refuses the set, with every failing change reported. Then the set is
// committed: one change by its own atomic write, rename or removal;
// several by staging every new content beside its file, recording the
// steps in the intent log (the commit point), doing them, and removing the
// record. A call of its own skips what is about sets only: the set's byte
// limit, its response size (an edit checks its own, and the other results
// are a few paths and versions), and the check of every content before the
// first is written (its one write checks its content itself).

// Change is one change of a set: *EditRequest, *WriteRequest,
// *DeleteRequest or *MoveRequest. A nil Change names no change, which
// refuses its set.
type Change interface{ isChange() }

// ChangeResult is what one change of a set did: *EditResult,
// *WriteResult, *DeleteResult or *MoveResult.
type ChangeResult interface{ isChangeResult() }

// ApplyRequest is a change set, applied all or nothing.
type ApplyRequest struct {
	Changes []Change
	// DryRun checks and computes every change but writes nothing.
	DryRun bool
	// StrictSyntax refuses the set when an edit or write of it would
	// introduce syntax errors, as each change's own StrictSyntax.
	StrictSyntax bool
}

// ApplyResult is what a change set did.
type ApplyResult struct {
	// Results has one result per change, in the request's order.
	Results []ChangeResult
	DryRun  bool
	// ChangeSet names the set in its changes' Watch events; "" for a set
	// of one change and for a dry run.
	ChangeSet string
}

// Apply makes a change set all or nothing.
func (s *Engine) Apply(ctx context.Context, req *ApplyRequest) (*ApplyResult, error) {
	return s.apply(ctx, req.Changes, req.DryRun, false, req.StrictSyntax)
}

// applyOne is a call of its own (Edit, Write, Delete, Move): the change
// set of its one change c, whose one failure is its error as it is.
func applyOne[R ChangeResult](ctx context.Context, s *Engine, c Change, dryRun bool) (R, error) {
	res, err := s.apply(ctx, []Change{c}, dryRun, true, false)
	if err != nil {
		var none R
		return none, err
	}
	return res.Results[0].(R), nil
}

// change is one change of a set, as it is planned and committed.
type change struct {
	index int
	// path is the path the change names, as given (a move's from). An
	// error about another path carries that path itself (named).
	path string
	// rel and key are the cleaned path and its lock key (a move's from).
	rel, key string
	// target is, for an edit or a write, the file it writes: rel with
	// the links on its way followed (Engine.target), set under the
	// set's locks before anything reads it.
	target string
	plan   plan
}

// plan is the part of a change that depends on what it does: *editPlan,
// *writePlan, *deletePlan or *movePlan.
type plan interface {
	// kind names the change in messages: "edit", "write", "delete" or
	// "move".
	kind() string
	// sizes estimates, from the files' metadata and the request alone,
	// before anything is read, the bytes the change writes and the memory
	// it holds while it is planned and committed (memory.go).
	sizes(s *Engine, c *change) (writes, hold int64)
	// check plans the change against the disk, under the set's locks, and
	// computes what it will write. exclusive says whether the set holds
	// the tree lock exclusively, as a directory delete must. It may be
	// called again, when the set is planned again.
	check(ctx context.Context, s *Engine, c *change, exclusive bool) error
	// result is the change's result before it is committed (a dry run's).
	result(c *change, dryRun bool) ChangeResult
	// commit commits a set of this one change by its own atomic write,
	// removal or rename: it needs no intent record. It calls committing
	// right before that write, removal or rename, once it knows what it
	// will make (a write's version).
	commit(s *Engine, c *change, committing func()) error
	// step is the change's step in a set of several, done after every new
	// content was staged (contentPlan).
	step(s *Engine, c *change) (workspace.Step, error)
	// committed records the committed change (of set set, if any): the
	// Watch event, the views, and its result.
	committed(ctx context.Context, s *Engine, c *change, set string) ChangeResult
	// recorded is the change's file in the change history and the kind
	// of a set of it alone; false for what the history does not record
	// (record.go). It is called before the change is committed, once its
	// new content's version is known (a content plan's newVersion).
	recorded(s *Engine, c *change) (history.File, history.Kind, bool)
}

// contentPlan is a plan that writes a new content: an edit or a write.
type contentPlan interface {
	plan
	// content is the new content and how it is written.
	content() ([]byte, workspace.WriteOptions)
	// writing is what was written of it.
	writing() *written
}

// written is what a content change wrote: by its own write (a set of one
// change) or staged beside its file (a set of several); version is the
// new content's version, known before its write replaces the file.
type written struct {
	wr      *workspace.WriteResult
	staged  *workspace.Staged
	version string
}

func (w *written) writing() *written { return w }

// newVersion is the version of the new content.
func (w *written) newVersion() string {
	switch {
	case w.wr != nil:
		return w.wr.Version
	case w.staged != nil:
		return w.staged.Version
	}
	return w.version
}

// wrote is what the change wrote.
func (w *written) wrote() *workspace.WriteResult {
	if w.wr != nil {
		return w.wr
	}
	st := w.staged
	return &workspace.WriteResult{Path: st.Path, Raw: st.Raw, Version: st.Version, Created: st.Created}
}

// commitContent writes a content change's new content as the set's one
// change, calling committing before the write replaces the file. Only an
// engine that records its changes (or a test that watches the moments of
// a commit) asks the workspace for the moment: with fsync on, the
// workspace runs it beside the write on a goroutine, which would be a
// cost for nothing to one that records nothing.
func (s *Engine) commitContent(c *change, p contentPlan, committing func()) error {
	text, opts := p.content()
	if s.opts.history != nil || s.opts.point != nil {
		opts.Committing = func(version string) {
			p.writing().version = version
			committing()
		}
	}
	wr, err := s.ws.WriteFile(c.rel, text, opts)
	p.writing().wr = wr
	return err
}

// namedError is an error of a change about a path other than the one the
// change names (a move's target), and that path.
type namedError struct {
	path string
	err  error
}

func (e *namedError) Error() string { return e.err.Error() }

// named says that err is about path, which the change's failure then names.
func named(path string, err error) error { return &namedError{path: path, err: err} }

// keys are the lock keys of the paths the change touches.
func (c *change) keys() []string {
	if m, ok := c.plan.(*movePlan); ok && m.destKey != "" {
		return []string{c.key, m.destKey}
	}
	return []string{c.key}
}

// ChangeFailure is a change that refuses its set.
type ChangeFailure struct {
	Index int    // the change's place in the set
	Path  string // the path the change names, as given
	Err   error
}

// ChangeSetError is a refused change set: every failing change, in order.
// A set of one change (Delete, Move) reports its error alone instead.
type ChangeSetError struct {
	Failures []ChangeFailure
}

func (e *ChangeSetError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the change set was refused and nothing was written: %d of its changes failed; fix them and send the whole set again", len(e.Failures))
	for _, f := range e.Failures {
		fmt.Fprintf(&b, "\nchange %d (%s): %v", f.Index, f.Path, f.Err)
	}
	return b.String()
}

// Unwrap is the first failure's error, whose code and reason the set's
// status carries.
func (e *ChangeSetError) Unwrap() error { return e.Failures[0].Err }

// apply is every call that changes files: Apply, and as a set of its
// one change (single) Edit, Write, Delete and Move. strictSyntax is the
// set's StrictSyntax.
func (s *Engine) apply(ctx context.Context, reqs []Change, dryRun, single, strictSyntax bool) (*ApplyResult, error) {
	if len(reqs) == 0 {
		return nil, BadRequest("changes", "the change set is empty; give at least one change")
	}
	if len(reqs) > s.opts.maxChanges {
		return nil, fmt.Errorf("%w: %d changes in one set; the most is %d, split the set", workspace.ErrTooLarge, len(reqs), s.opts.maxChanges)
	}
	changes := make([]*change, len(reqs))
	var failures []ChangeFailure
	fail := func(c *change, err error) {
		path := c.path
		if n, ok := err.(*namedError); ok {
			path, err = n.path, n.err
		}
		failures = append(failures, ChangeFailure{Index: c.index, Path: path, Err: err})
	}
	refused := func() error {
		if single {
			return failures[0].Err
		}
		slices.SortStableFunc(failures, func(a, b ChangeFailure) int { return a.Index - b.Index })
		return &ChangeSetError{Failures: failures}
	}
	for i, r := range reqs {
		c, err := s.resolveChange(i, r)
		changes[i] = c
		if err != nil {
			fail(c, err)
		} else if e, ok := r.(*EditRequest); ok && e.DryRun && !dryRun {
			// A change that asks only to be checked must not be written
			// with the rest.
			fail(c, BadRequest("dry_run", "the edit of %s sets dry_run, which a change of a set cannot: set dry_run on the whole set (ApplyRequest.dry_run), or drop it to apply the set", c.path))
		}
	}
	if len(failures) > 0 {
		return nil, refused()
	}
	if len(changes) > 1 {
		for _, f := range conflicts(changes) {
			fail(changes[f.Index], f.Err)
		}
		if len(failures) > 0 {
			return nil, refused()
		}
	}
	// The set's size and the memory it will hold are known from the files'
	// metadata before any of them is read, and checked first: a set too
	// large, or larger than the whole memory budget, is refused without
	// reading its files, and the others wait for memory before they take
	// any lock.
	writes, hold := s.setBytes(changes)
	if !single && writes > s.opts.maxSetBytes {
		return nil, fmt.Errorf("%w: the change set writes at least %d bytes (each edit counted at the current size of its file, each write at its content's), over the %d-byte limit for one set; split it", workspace.ErrTooLarge, writes, s.opts.maxSetBytes)
	}
	what := "this change set"
	if single {
		what = callName(changes[0])
	}
	release, err := s.memory.acquire(ctx, what, hold)
	if err != nil {
		return nil, err
	}
	defer release()
	// A set that removes a directory holds the tree lock exclusively, so
	// that no write puts a file in the directory between the plan's check
	// that it is empty and its removal. Whether a path is a directory is
	// looked at first without locks; a delete planned under the shared lock
	// that finds a directory plans the set again under the exclusive one.
	exclusive := s.removesDir(changes)
	planCtx, planSpan := s.startPlan(ctx, changes, dryRun)
	var unlock func()
	var total int64
	for {
		var err error
		if unlock, err = s.lockAll(planCtx, changes, exclusive); err != nil {
			endPlan(planSpan, failures, err)
			return nil, err
		}
		total = 0
		for _, c := range changes {
			if err := s.planChange(planCtx, c, exclusive, single); err != nil {
				fail(c, err)
				continue
			}
			total += c.newBytes()
		}
		if exclusive || !slices.ContainsFunc(failures, func(f ChangeFailure) bool { return errors.Is(f.Err, errNeedTree) }) {
			break
		}
		unlock()
		failures, exclusive = nil, true
	}
	// The locks are let go of once the set is written and recorded, before
	// the advisory checks are waited for (below); until then, on every
	// return.
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	endPlan(planSpan, failures, nil)
	if len(failures) > 0 {
		return nil, refused()
	}
	// How each content is checked, and the operator's commands for it,
	// are decided by the file it writes (links followed), under the locks.
	for _, c := range changes {
		s.syntaxMode(c, strictSyntax || askedStrictSyntax(reqs[c.index]))
	}
	// The operator's formatters make the contents to check and write:
	// under the locks, each run bounded by the commands' time limit.
	s.formatChanges(ctx, changes, fail)
	if len(failures) > 0 {
		return nil, refused()
	}
	// A strict check refuses before anything is written; a dry run's
	// reply has what the checks find.
	for _, c := range changes {
		if st := syntaxOf(c); st != nil && (st.strict || dryRun) {
			s.checkSyntax(c)
			s.runChecks(ctx, c)
			if err := s.syntaxRefusal(c); err != nil {
				fail(c, err)
			}
		}
	}
	if len(failures) > 0 {
		return nil, refused()
	}
	if !single && total > s.opts.maxSetBytes {
		return nil, fmt.Errorf("%w: the change set writes %d bytes, over the %d-byte limit for one set; split it", workspace.ErrTooLarge, total, s.opts.maxSetBytes)
	}
	res := &ApplyResult{DryRun: dryRun, Results: make([]ChangeResult, len(changes))}
	if dryRun || !single {
		for i, c := range changes {
			res.Results[i] = s.withChecks(c, s.withSyntax(c, c.plan.result(c, dryRun)))
		}
	}
	if size := s.opts.responseSize; !single && size != nil {
		if n := size(res) + len(changes)*versionFieldBound; n > s.opts.maxResponseBytes {
			return nil, fmt.Errorf("%w: the response would be %d bytes, over the %d-byte limit; nothing was written. Retry with smaller contexts, without full, or as smaller sets",
				workspace.ErrTooLarge, n, s.opts.maxResponseBytes)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dryRun {
		s.fitDiagnostics(res, single)
		return res, nil
	}
	// The advisory checks run while the set is written, mostly a wait
	// for the disk, and after: the reply waits for them, the locks do
	// not, so that a slow check command holds up no other change. They
	// check the contents written, and their findings carry the tags of
	// the versions the reply names.
	wait := s.checkSyntaxBeside(changes)
	checkCtx, stopChecks := context.WithCancel(ctx)
	defer stopChecks()
	waitChecks := s.runChecksBeside(checkCtx, changes)
	commitCtx, commitSpan := s.startCommit(ctx, changes)
	set := ""
	var id history.ID
	if len(changes) == 1 {
		id, err = s.commitOne(commitCtx, changes[0])
	} else {
		set = newChangeSetID()
		id, err = s.commitSet(commitCtx, set, changes)
	}
	if err != nil {
		stopChecks()
		wait()
		waitChecks()
		endCommit(ctx, commitSpan, changes, set, err)
		return nil, err
	}
	res.ChangeSet = set
	ctx = withChangeID(ctx, id)
	revertRecorded(ctx, id)
	endCommit(ctx, commitSpan, changes, set, nil)
	for i, c := range changes {
		res.Results[i] = c.plan.committed(ctx, s, c, set)
	}
	locked = false
	unlock()
	wait()
	waitChecks()
	for i, c := range changes {
		res.Results[i] = s.withChecks(c, s.withSyntax(c, res.Results[i]))
	}
	s.fitDiagnostics(res, single)
	if !single {
		s.opts.logger.DebugContext(ctx, "apply", "changes", len(changes), "changeSet", set)
	}
	return res, nil
}

// callName names a call of its own in an error about the memory it waits
// for.
func callName(c *change) string {
	switch c.plan.(type) {
	case *editPlan:
		return "this Edit of " + c.path
	case *writePlan:
		return "this Write of " + c.path
	}
	return "this " + c.plan.kind()
}

// setBytes estimates, from the files' metadata and the request alone,
// before anything is read, the bytes the set writes (its edits counted at
// their files' current sizes, its writes at their contents') and the
// memory it holds while it is planned and committed (see memory.go).
func (s *Engine) setBytes(changes []*change) (writes, hold int64) {
	for _, c := range changes {
		w, h := c.plan.sizes(s, c)
		writes += w
		hold += h
	}
	return writes, hold
}

// newChangeSetID returns a new random change set id.
func newChangeSetID() string { return rand.Text() }

// resolveChange checks the fields of r, change i of its set, and cleans
// its paths, before anything is locked or read.
func (s *Engine) resolveChange(i int, r Change) (*change, error) {
	c := &change{index: i}
	var err error
	switch r := r.(type) {
	case *EditRequest:
		c.path = r.Path
		p, err := s.newEditPlan(r)
		if err != nil {
			return c, err
		}
		c.plan = p
		c.rel, c.key, err = s.resolve(r.Path)
		return c, err
	case *WriteRequest:
		c.path = r.Path
		if err := checkWrite(r); err != nil {
			return c, err
		}
		c.plan = &writePlan{req: r}
		c.rel, c.key, err = s.resolve(r.Path)
		return c, err
	case *DeleteRequest:
		c.path = r.Path
		c.plan = &deletePlan{req: r}
		if c.rel, c.key, err = s.resolve(r.Path); err == nil && c.rel == "." {
			return c, errRoot
		}
		return c, err
	case *MoveRequest:
		c.path = r.From
		m := &movePlan{req: r}
		c.plan = m
		if c.rel, c.key, err = s.resolve(r.From); err != nil {
			return c, err
		}
		if c.rel == "." {
			return c, errRoot
		}
		if m.dest, m.destKey, err = s.resolve(r.To); err != nil {
			return c, named(r.To, err)
		}
		if m.dest == c.rel || m.destKey == c.key {
			return c, BadRequest("to", "%s: a file cannot be moved onto itself; give another path as to", c.rel)
		}
		return c, nil
	}
	return c, BadRequest("changes", "change %d has none of edit, write, delete or move; set one", i)
}

// errRoot refuses a delete or move of the workspace root.
var errRoot = fmt.Errorf("%w: the path names the workspace root itself, which cannot be deleted or moved; name a file or directory inside it", workspace.ErrInvalidPath)

// conflicts returns a CONFLICTING_CHANGES failure for every change that
// touches a path another change touches, or a path inside or above one
// (a deleted directory and a file in it): the steps of a set must be
// independent, so that they can be done, and redone after a crash, in any
// order. Each path is looked up with every directory above it, rather
// than found next to them in sorted order: names whose next byte sorts
// before the separator (" ", "-", ".") fall between a directory and the
// files inside it.
func conflicts(changes []*change) []ChangeFailure {
	touching := map[string][]int{} // key -> the changes that touch it
	for _, c := range changes {
		for _, k := range c.keys() {
			touching[k] = append(touching[k], c.index)
		}
	}
	with := map[int][]int{} // change index -> the changes it conflicts with
	pair := func(a, b []int) {
		for _, i := range a {
			for _, j := range b {
				if i != j {
					with[i] = append(with[i], j)
					with[j] = append(with[j], i)
				}
			}
		}
	}
	for key, here := range touching {
		pair(here, here)
		for dir := filepath.Dir(key); ; dir = filepath.Dir(dir) {
			pair(here, touching[dir])
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	var out []ChangeFailure
	for _, c := range changes {
		others := with[c.index]
		if len(others) == 0 {
			continue
		}
		slices.Sort(others)
		others = slices.Compact(others)
		names := make([]string, len(others))
		for i, o := range others {
			names[i] = fmt.Sprint(o)
		}
		out = append(out, ChangeFailure{Index: c.index, Path: c.path, Err: invalid(ReasonConflictingChanges, "changes",
			"change %d (%s %s) touches the same path as change(s) %s (or one inside the other); a path may be touched by one change of a set only (a move touches both its paths): merge them into one change, or send them as separate sets",
			c.index, c.plan.kind(), c.path, strings.Join(names, ", "))})
	}
	return out
}

// removesDir reports whether a delete of the set names a directory now.
func (s *Engine) removesDir(changes []*change) bool {
	for _, c := range changes {
		if _, ok := c.plan.(*deletePlan); !ok {
			continue
		}
		if _, _, fi, err := s.ws.Entry(c.rel); err == nil && fi != nil && fi.IsDir() {
			return true
		}
	}
	return false
}

// errNeedTree is a delete of a directory planned without the exclusive
// tree lock: the set is planned again with it.
var errNeedTree = errors.New("a directory delete needs the tree lock")

// lockAll takes the tree lock (exclusively for a set that removes a
// directory), then the edit lock of every path of the set, in sorted
// order, so that sets and single edits never deadlock nor interleave.
func (s *Engine) lockAll(ctx context.Context, changes []*change, exclusive bool) (func(), error) {
	var keys []string
	for _, c := range changes {
		keys = append(keys, c.keys()...)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	untree, err := s.tree.lock(ctx, exclusive)
	if err != nil {
		return nil, err
	}
	unlocks := make([]func(), 1, len(keys)+1)
	unlocks[0] = untree
	unlock := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, k := range keys {
		u, err := s.locks.lock(ctx, k)
		if err != nil {
			unlock()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	// A caller that gave up while queued must not have its change written.
	if err := ctx.Err(); err != nil {
		unlock()
		return nil, err
	}
	if err := s.settleRecords(ctx, keys); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// planChange checks a change against the disk, under the set's locks, and
// computes what it will write. exclusive says whether the set holds the
// tree lock exclusively, as a directory delete must; single that the set
// is a call of its own.
func (s *Engine) planChange(ctx context.Context, c *change, exclusive, single bool) error {
	if err := c.plan.check(ctx, s, c, exclusive); err != nil {
		return err
	}
	if p, ok := c.plan.(contentPlan); ok && !single {
		// The mode, size, encoding and permissions are checked when the
		// content is written; a set checks them here, before any change is.
		text, opts := p.content()
		return s.ws.CheckWrite(c.rel, text, opts)
	}
	return nil
}

// newBytes is what the change will write.
func (c *change) newBytes() int64 {
	switch p := c.plan.(type) {
	case *editPlan:
		return int64(len(p.raw))
	case *writePlan:
		return int64(len(p.text))
	}
	return 0
}

// commitOne commits a set of its one change c by the change's own atomic
// write, rename or removal, its history entry prepared and written before
// (for a write, beside its content's sync: record.go), and returns the
// entry's id.
func (s *Engine) commitOne(ctx context.Context, c *change) (history.ID, error) {
	var p *pending
	err := c.plan.commit(s, c, func() {
		s.point("committing")
		p = s.prepareSet(ctx, []*change{c}, true)
		s.point("prepared")
	})
	if p == nil {
		return history.ID{}, err
	}
	s.point("committed")
	// A commit that failed may have made its change still (the sync of
	// the directory failed after the rename): the disk says.
	applied := err == nil || diskShows(s.ws, p.c)
	s.resolveEntry(ctx, p, applied)
	s.point("resolved")
	if !applied {
		return history.ID{}, err
	}
	return p.c.ID, err
}

// maxParallelStages bounds the files one set writes and syncs at once.
const maxParallelStages = 16

// commitSet commits a set of several changes, all or nothing even across a
// crash: every new content is staged beside its file and synced (several
// at a time, so that their syncs overlap), with their directories; one
// record of the steps left is written to the intent log and synced (the
// commit point); the steps are done and their directories synced once
// each; the record is removed. Until the record is written an error
// removes the staged files and nothing has changed; after it, a crash is
// finished by Recover at the next start. The set's history entry is
// prepared before the record, which carries it, and written to the
// history while the steps are done (record.go); commitSet returns its id.
func (s *Engine) commitSet(ctx context.Context, set string, changes []*change) (history.ID, error) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxParallelStages)
	errs := make([]error, len(changes))
	for i, c := range changes {
		p, ok := c.plan.(contentPlan)
		if !ok {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			text, opts := p.content()
			p.writing().staged, errs[i] = s.ws.Stage(c.rel, text, opts)
		})
	}
	wg.Wait()
	discard := func() {
		var staged []*workspace.Staged
		for _, c := range changes {
			if p, ok := c.plan.(contentPlan); ok && p.writing().staged != nil {
				staged = append(staged, p.writing().staged)
				p.writing().staged = nil
			}
		}
		s.ws.Discard(staged...)
	}
	if err := errors.Join(errs...); err != nil {
		discard()
		return history.ID{}, err
	}
	var dirs []string
	// steps[i] is the step of changes[i]: each change has exactly one.
	steps := make([]workspace.Step, 0, len(changes))
	for _, c := range changes {
		if p, ok := c.plan.(contentPlan); ok {
			dirs = append(dirs, p.writing().staged.SyncBefore()...)
		}
		st, err := c.plan.step(s, c)
		if err != nil {
			discard()
			return history.ID{}, err
		}
		steps = append(steps, st)
	}
	if err := s.ws.SyncDirs(dirs); err != nil {
		discard()
		return history.ID{}, err
	}
	if err := ctx.Err(); err != nil {
		discard()
		return history.ID{}, err
	}
	s.point("committing")
	p := s.prepareSet(ctx, changes, false)
	in := state.Intent{ID: set, Steps: intentSteps(steps)}
	if p != nil {
		in.History = history.Encode(p.c)
	}
	s.point("prepared")
	done := func() error { return nil }
	if s.opts.intents != nil {
		var err error
		if done, err = s.opts.intents.Record(in); err != nil {
			discard()
			s.resolveEntry(ctx, p, false)
			return history.ID{}, fmt.Errorf("%w: %v; nothing was written", workspace.ErrIO, err)
		}
	}
	if s.opts.recorded != nil {
		s.opts.recorded(set)
	}
	s.point("recorded")
	written := s.writeHistory(ctx, p)
	err := s.ws.Commit(steps)
	written()
	if err != nil {
		return s.finishSet(ctx, set, changes, steps, done, err, p)
	}
	s.point("committed")
	s.resolveEntry(ctx, p, true)
	s.point("resolved")
	if err := done(); err != nil {
		s.keepRecord(ctx, set, changes, steps, true, done, err, nil)
	}
	return p.id(), nil
}

// writeHistory puts the prepared entry p of a set in the history's file
// (synced where the workspace syncs its writes, on another goroutine, so
// that the sync overlaps the set's steps) and returns the wait for it:
// the entry must be on file before the set's intent record, which carries
// it, is removed.
func (s *Engine) writeHistory(ctx context.Context, p *pending) func() {
	if p == nil {
		return func() {}
	}
	logged := func(err error) {
		if err != nil {
			s.opts.logger.WarnContext(ctx, "history: a change set's entry could not be written", "change", p.c.ID.String(), "err", err)
		}
	}
	if !s.ws.Fsync() {
		logged(s.opts.history.Write())
		return func() {}
	}
	synced := make(chan error, 1)
	go func() { synced <- s.opts.history.Sync() }()
	return func() { logged(<-synced) }
}

// finishSet is a set whose Commit failed past the commit point (err). Its
// locks are still held, so every step is tried again now (Redo: done
// steps are found done, and nothing is renamed over a change made by
// another process meanwhile). The record is removed once no step is left
// to do; one whose step still fails is kept, for the next start, with
// its history entry pending. The error names the changes that were
// applied and those that were not; the history records those alone.
func (s *Engine) finishSet(ctx context.Context, set string, changes []*change, steps []workspace.Step, done func() error, commitErr error, p *pending) (history.ID, error) {
	var applied, missed []string
	left := false
	did := make([]bool, len(steps))
	for i, st := range steps {
		c := changes[i]
		name := fmt.Sprintf("%d (%s %s)", c.index, c.plan.kind(), c.path)
		out, why, err := s.ws.Redo(st)
		switch {
		case err != nil:
			left = true
			missed = append(missed, fmt.Sprintf("%s: %v", name, err))
		case out == workspace.RedoDone || out == workspace.RedoDid:
			applied = append(applied, name)
			did[i] = true
		default:
			missed = append(missed, fmt.Sprintf("%s: %s", name, why))
			s.opts.logger.ErrorContext(ctx, "apply: a change of a committed set could not be applied", "changeSet", set, "path", c.path, "why", why)
			if p, ok := c.plan.(contentPlan); ok && p.writing().staged != nil {
				s.ws.Discard(p.writing().staged)
			}
		}
	}
	if len(missed) == 0 {
		s.opts.logger.WarnContext(ctx, "apply: a change set was finished on a second try", "changeSet", set, "err", commitErr)
		s.resolveEntry(ctx, p, true)
		if err := done(); err != nil {
			s.keepRecord(ctx, set, changes, steps, true, done, err, nil)
		}
		return p.id(), nil
	}
	next := "the other changes will not be applied: Read their files and send them again"
	if left {
		// Kept, with its steps and its history entry, until the next
		// change to one of its paths or the next start finishes it.
		next = "the server tries the changes not applied again before it next changes one of the set's files, or when it next starts, unless their files change before"
		s.keepRecord(ctx, set, changes, steps, false, done, nil, p)
	} else {
		s.recordSteps(ctx, p, steps, did)
		if err := done(); err != nil {
			s.keepRecord(ctx, set, changes, steps, true, done, err, nil)
		}
	}
	appliedList := "none"
	if len(applied) > 0 {
		appliedList = strings.Join(applied, ", ")
	}
	return history.ID{}, fmt.Errorf("%w: change set %s was applied only in part (%v). Applied: %s. Not applied: %s. %s",
		workspace.ErrIO, set, commitErr, appliedList, strings.Join(missed, "; "), next)
}

// intentSteps converts steps to their record.
func intentSteps(steps []workspace.Step) []state.IntentStep {
	out := make([]state.IntentStep, len(steps))
	for i, s := range steps {
		op := "rename"
		if s.Kind == workspace.StepRemove {
			op = "remove"
		}
		out[i] = state.IntentStep{Op: op, Path: s.Path, From: s.From, To: s.To, Version: s.Version, New: s.New, Replaces: s.Replaces}
	}
	return out
}

// The edit change (edit.go: planEdit).

func (*editPlan) kind() string { return "edit" }

func (p *editPlan) sizes(s *Engine, c *change) (writes, hold int64) {
	n := s.fileBytes(c.rel)
	return n, n * editHoldFactor
}

func (p *editPlan) check(ctx context.Context, s *Engine, c *change, _ bool) error {
	return s.planEdit(ctx, p, c.rel, c.key)
}

func (p *editPlan) result(_ *change, dryRun bool) ChangeResult {
	if dryRun && p.reply.Version == "" {
		p.reply.Version = workspace.Version(p.raw)
	}
	return p.reply
}

func (p *editPlan) content() ([]byte, workspace.WriteOptions) {
	return p.out, workspace.WriteOptions{Mode: workspace.ReplaceOnly, Encoding: p.f.Encoding}
}

func (p *editPlan) commit(s *Engine, c *change, committing func()) error {
	return s.commitContent(c, p, committing)
}

func (p *editPlan) step(_ *Engine, _ *change) (workspace.Step, error) {
	replaces := p.f.Version
	if p.staged.Created {
		replaces = ""
	}
	return p.staged.Step(replaces), nil
}

func (p *editPlan) committed(ctx context.Context, s *Engine, _ *change, set string) ChangeResult {
	s.editWritten(ctx, p, p.wrote(), set)
	return p.reply
}

// The write change (write.go: planWrite).

func (*writePlan) kind() string { return "write" }

func (p *writePlan) sizes(s *Engine, c *change) (writes, hold int64) {
	n := int64(len(p.req.Content))
	return n, n*writeHoldFactor + s.fileBytes(c.rel)*readHoldFactor
}

func (p *writePlan) check(ctx context.Context, s *Engine, c *change, _ bool) error {
	return s.planWrite(ctx, p, c.rel, c.key)
}

func (p *writePlan) result(c *change, _ bool) ChangeResult {
	r := &WriteResult{Path: c.rel, Created: !p.exists, TotalLines: p.newDoc().Len()}
	if raw, err := workspace.Encode(p.text, p.opts.Encoding); err == nil {
		r.Version = workspace.Version(raw)
	}
	return r
}

func (p *writePlan) content() ([]byte, workspace.WriteOptions) { return p.text, p.opts }

func (p *writePlan) commit(s *Engine, c *change, committing func()) error {
	return s.commitContent(c, p, committing)
}

func (p *writePlan) step(s *Engine, c *change) (workspace.Step, error) {
	switch {
	case p.staged.Created:
		return p.staged.Step(""), nil
	case p.cur != nil:
		return p.staged.Step(p.cur.Version), nil
	}
	// A file the plan could not read as text (binary, too large).
	v, err := s.ws.FileVersion(c.rel)
	return p.staged.Step(v), err
}

func (p *writePlan) committed(ctx context.Context, s *Engine, _ *change, set string) ChangeResult {
	return s.writeWritten(ctx, p, p.wrote(), set)
}

// DeleteRequest is a Delete: of a file or an empty directory.
type DeleteRequest struct {
	// Path is the file or directory, relative to the workspace root.
	Path string
	// ExpectedVersion, if set, is the version the file must have
	// (compare-and-swap).
	ExpectedVersion string
}

// DeleteResult is what a Delete removed.
type DeleteResult struct {
	// Path is the cleaned path; Version the deleted file's ("" for a
	// directory).
	Path, Version string
	Directory     bool
}

func (*DeleteRequest) isChange()      {}
func (*DeleteResult) isChangeResult() {}

// Delete removes a file or an empty directory: a change set of one change.
func (s *Engine) Delete(ctx context.Context, req *DeleteRequest) (*DeleteResult, error) {
	return applyOne[*DeleteResult](ctx, s, req, false)
}

// deletePlan is a delete change: its request, and once planned (check)
// what it removes.
type deletePlan struct {
	req     *DeleteRequest
	rel     string
	target  string
	dir     bool
	version string
	state   watch.State // the deleted file, for its Watch event
}

func (*deletePlan) kind() string { return "delete" }

func (d *deletePlan) sizes(s *Engine, c *change) (writes, hold int64) {
	return 0, s.fileBytes(c.rel) * readHoldFactor
}

// check checks a delete: a file (of the version expected, if given) or an
// empty directory, named as Entry names it.
func (d *deletePlan) check(_ context.Context, s *Engine, c *change, exclusive bool) error {
	*d = deletePlan{req: d.req}
	rel, target, fi, err := s.ws.Entry(c.rel)
	if err != nil {
		return err
	}
	d.rel, d.target = rel, target
	switch {
	case fi == nil:
		return fmt.Errorf("%w: %s: no such file or directory to delete; check the path (paths are relative to the workspace root)", workspace.ErrNotFound, rel)
	case fi.IsDir():
		d.dir = true
		if !exclusive {
			return errNeedTree
		}
		// Under the exclusive tree lock no write of the server can add an
		// entry until the set is committed.
		if !s.emptyDir(target) {
			return fmt.Errorf("%w: %s is a directory that is not empty; delete (or move) its entries first", workspace.ErrNotEmpty, rel)
		}
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file or a directory; hashline deletes files and empty directories only", workspace.ErrNotRegular, rel)
	default:
		if err := s.ws.MayChange("delete", rel, target); err != nil {
			return err
		}
		st, err := s.fileState(rel, c.key)
		if err != nil {
			return err
		}
		d.state, d.version = st, st.Version
	}
	if want := d.req.ExpectedVersion; want != "" && want != d.version {
		return &VersionMismatchError{Path: rel, Expected: want, Current: d.version,
			Hint: "someone changed the file since you read it; Read it again and decide again whether to delete it"}
	}
	return nil
}

func (d *deletePlan) result(*change, bool) ChangeResult {
	return &DeleteResult{Path: d.rel, Version: d.version, Directory: d.dir}
}

func (d *deletePlan) commit(s *Engine, _ *change, committing func()) error {
	committing()
	return s.ws.Remove(d.rel, d.target)
}

func (d *deletePlan) step(*Engine, *change) (workspace.Step, error) {
	return workspace.Step{Kind: workspace.StepRemove, Path: d.rel, To: d.target, Version: d.version}, nil
}

func (d *deletePlan) committed(ctx context.Context, s *Engine, c *change, set string) ChangeResult {
	if !d.dir {
		s.views.Forget(c.key)
		s.latest.Forget(c.key)
		s.publishDelete(ctx, d.target, d.state, set)
	}
	return d.result(c, false)
}

// emptyDir reports whether the directory target has no entries.
func (s *Engine) emptyDir(target string) bool {
	f, err := s.ws.Root().Open(target)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// fileState is the version (and text, when it is text) of the file rel.
func (s *Engine) fileState(rel, key string) (watch.State, error) {
	f, _, err := s.readKnown(rel, key)
	switch {
	case err == nil:
		return watch.State{Version: f.Version, Text: f.Text, HasText: true}, nil
	case errors.Is(err, workspace.ErrBinary), errors.Is(err, workspace.ErrNotText), errors.Is(err, workspace.ErrTooLarge):
		v, err := s.ws.FileVersion(rel)
		return watch.State{Version: v}, err
	}
	return watch.State{}, err
}

// MoveRequest is a Move: a file to another path.
type MoveRequest struct {
	// From and To are relative to the workspace root.
	From, To string
	// ExpectedVersion, if set, is the version the file must have
	// (compare-and-swap).
	ExpectedVersion string
	// Overwrite replaces a file at To.
	Overwrite bool
}

// MoveResult is what a Move did.
type MoveResult struct {
	// From and To are the cleaned paths; Version the moved file's;
	// ReplacedVersion the version of the file it replaced, if any.
	From, To, Version, ReplacedVersion string
}

func (*MoveRequest) isChange()      {}
func (*MoveResult) isChangeResult() {}

// Move renames a file inside the workspace, its history with it: a change
// set of one change.
func (s *Engine) Move(ctx context.Context, req *MoveRequest) (*MoveResult, error) {
	return applyOne[*MoveResult](ctx, s, req, false)
}

// movePlan is a move change: its request, its target's cleaned path and
// lock key, and once planned (check) the paths it renames.
type movePlan struct {
	req           *MoveRequest
	dest, destKey string // the target, from the request (resolveChange)
	// fromRel and toRel are the paths as Entry names them; from and to
	// their symlink-free forms.
	fromRel, toRel  string
	from, to        string
	version         string
	replacedVersion string
	state           watch.State // the moved file
}

func (*movePlan) kind() string { return "move" }

func (m *movePlan) sizes(s *Engine, c *change) (writes, hold int64) {
	return 0, (s.fileBytes(c.rel) + s.fileBytes(m.dest)) * readHoldFactor
}

// check checks a move: a regular file (of the version expected, if given)
// to a path that is not a directory, where a file is replaced only with
// overwrite. Its errors about the target name the target.
func (m *movePlan) check(_ context.Context, s *Engine, c *change, _ bool) error {
	*m = movePlan{req: m.req, dest: m.dest, destKey: m.destKey}
	fromRel, from, fi, err := s.ws.Entry(c.rel)
	if err != nil {
		return err
	}
	switch {
	case fi == nil:
		return fmt.Errorf("%w: %s: no such file to move; check the path (paths are relative to the workspace root)", workspace.ErrNotFound, fromRel)
	case fi.IsDir():
		return fmt.Errorf("%w: %s is a directory; hashline moves files only: move each file", workspace.ErrNotRegular, fromRel)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s is not a regular file (a symbolic link, FIFO or device); hashline moves regular files only", workspace.ErrNotRegular, fromRel)
	}
	toRel, to, tfi, err := s.ws.Entry(m.dest)
	if err != nil {
		return named(m.req.To, err)
	}
	m.fromRel, m.from, m.toRel, m.to = fromRel, from, toRel, to
	if to == from {
		return BadRequest("to", "%s and %s are the same file; a file cannot be moved onto itself", fromRel, toRel)
	}
	// The source leaves its name as a deleted file does.
	if err := s.ws.MayChange("move", fromRel, from); err != nil {
		return err
	}
	source := c.path // what an error about the source names
	if tfi != nil {
		switch {
		case tfi.IsDir():
			return named(toRel, fmt.Errorf("%w: %s is a directory; give the new file's whole path as to (e.g. %s/%s)", workspace.ErrNotRegular, toRel, toRel, filepath.Base(from)))
		case !tfi.Mode().IsRegular():
			return named(toRel, fmt.Errorf("%w: %s is not a regular file; hashline replaces regular files only", workspace.ErrNotRegular, toRel))
		case !m.req.Overwrite:
			return named(toRel, fmt.Errorf("%w: %s: a file is already there; move to another path, or set overwrite to replace it", workspace.ErrExists, toRel))
		}
		if err := s.ws.MayChange("move", toRel, to); err != nil {
			return named(toRel, err)
		}
		st, err := s.fileState(toRel, m.destKey)
		if err != nil {
			return named(toRel, err)
		}
		m.replacedVersion = st.Version
		source = fromRel
	}
	st, err := s.fileState(fromRel, c.key)
	if err != nil {
		return named(source, err)
	}
	m.state, m.version = st, st.Version
	if want := m.req.ExpectedVersion; want != "" && want != m.version {
		return named(source, &VersionMismatchError{Path: fromRel, Expected: want, Current: m.version,
			Hint: "someone changed the file since you read it; Read it again and decide again whether to move it"})
	}
	return nil
}

func (m *movePlan) result(*change, bool) ChangeResult {
	return &MoveResult{From: m.fromRel, To: m.toRel, Version: m.version, ReplacedVersion: m.replacedVersion}
}

func (m *movePlan) commit(s *Engine, _ *change, committing func()) error {
	committing()
	return s.ws.Rename(m.fromRel, m.from, m.to, m.req.Overwrite)
}

func (m *movePlan) step(*Engine, *change) (workspace.Step, error) {
	return workspace.Step{Kind: workspace.StepRename, Path: m.fromRel, From: m.from, To: m.to, Version: m.version,
		New: m.version, Replaces: m.replacedVersion}, nil
}

func (m *movePlan) committed(ctx context.Context, s *Engine, c *change, set string) ChangeResult {
	// The key of the new path is taken again: a directory the move
	// created has its own real name now.
	to := s.viewKey(m.toRel)
	s.views.Move(c.key, to)
	s.latest.Move(c.key, to)
	s.publishMove(ctx, m.from, m.to, m.state, set)
	return m.result(c, false)
}
