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

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/watch"
	"github.com/hashline/hashline/internal/workspace"
)

// Delete, Move and Apply are one engine: Delete and Move are change sets
// of one change, and a change set is planned whole before anything is
// written. Its changes are checked without locks first (their fields, and
// that no two touch one path), then every path is locked, in sorted
// order, with the locks Edit and Write take (after the tree lock, held
// exclusively by a set that removes a directory), and each change is planned
// under them exactly as the single call would be (planEdit rebases an
// edit's references as Edit does). Any failure refuses the set, with every
// failing change reported. Then the set is committed: one change by the
// single call's own atomic write, rename or removal; several by staging
// every new content beside its file, recording the steps in the intent
// log (the commit point), doing them, and removing the record.

// change is one change of a set, as it is planned and committed.
type change struct {
	index int
	kind  string // "edit", "write", "delete" or "move"
	path  string // the path named (a move's from), for errors
	// rel and key are the cleaned path and its lock key (a move's from);
	// toRel and toKey a move's to.
	rel, key     string
	toRel, toKey string

	edits   []hashline.Edit // an edit's
	context int

	edit   *editPlan
	write  *writePlan
	del    *deletePlan
	move   *movePlan
	staged *workspace.Staged
	wr     *workspace.WriteResult // a set of one edit or write: its write
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

// apply is Delete, Move and Apply. single is set for Delete and Move,
// whose one failure is their error as it is.
func (s *Engine) Apply(ctx context.Context, reqs []*hashlinev1.Change, dryRun, single bool) (*hashlinev1.ApplyResponse, error) {
	if len(reqs) == 0 {
		return nil, BadRequest("changes", "the change set is empty; give at least one change")
	}
	if len(reqs) > s.opts.maxChanges {
		return nil, fmt.Errorf("%w: %d changes in one set; the most is %d, split the set", workspace.ErrTooLarge, len(reqs), s.opts.maxChanges)
	}
	changes := make([]*change, len(reqs))
	var failures []ChangeFailure
	fail := func(c *change, err error) {
		failures = append(failures, ChangeFailure{Index: c.index, Path: c.path, Err: err})
	}
	refused := func() error {
		if single {
			return failures[0].Err
		}
		slices.SortStableFunc(failures, func(a, b ChangeFailure) int { return a.Index - b.Index })
		return &ChangeSetError{Failures: failures}
	}
	for i, r := range reqs {
		c := &change{index: i}
		changes[i] = c
		if err := s.resolveChange(c, r); err != nil {
			fail(c, err)
		} else if r.GetEdit().GetDryRun() && !dryRun {
			// A change that asks only to be checked must not be written
			// with the rest.
			fail(c, BadRequest("dry_run", "the edit of %s sets dry_run, which a change of a set cannot: set dry_run on the whole set (ApplyRequest.dry_run), or drop it to apply the set", c.path))
		}
	}
	if len(failures) > 0 {
		return nil, refused()
	}
	for _, f := range conflicts(changes) {
		fail(changes[f.Index], f.Err)
	}
	if len(failures) > 0 {
		return nil, refused()
	}
	// The set's size and the memory it will hold are known from the files'
	// metadata before any of them is read, and checked first: a set too
	// large, or larger than the whole memory budget, is refused without
	// reading its files, and the others wait for memory before they take
	// any lock.
	writes, hold := s.setBytes(changes)
	if writes > s.opts.maxSetBytes {
		return nil, fmt.Errorf("%w: the change set writes at least %d bytes (each edit counted at the current size of its file, each write at its content's), over the %d-byte limit for one set; split it", workspace.ErrTooLarge, writes, s.opts.maxSetBytes)
	}
	what := "this change set"
	if single {
		what = "this " + changes[0].kind
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
	var unlock func()
	var total int64
	for {
		var err error
		if unlock, err = s.lockAll(ctx, changes, exclusive); err != nil {
			return nil, err
		}
		total = 0
		for _, c := range changes {
			if err := s.planChange(ctx, c, exclusive); err != nil {
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
	defer unlock()
	if len(failures) > 0 {
		return nil, refused()
	}
	if total > s.opts.maxSetBytes {
		return nil, fmt.Errorf("%w: the change set writes %d bytes, over the %d-byte limit for one set; split it", workspace.ErrTooLarge, total, s.opts.maxSetBytes)
	}
	resp := &hashlinev1.ApplyResponse{DryRun: dryRun}
	for _, c := range changes {
		resp.Results = append(resp.Results, c.result(dryRun))
	}
	if size := proto.Size(resp) + len(changes)*versionFieldBound; size > s.opts.maxResponseBytes {
		return nil, fmt.Errorf("%w: the response would be %d bytes, over the %d-byte limit; nothing was written. Retry with smaller contexts, without full, or as smaller sets",
			workspace.ErrTooLarge, size, s.opts.maxResponseBytes)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dryRun {
		return resp, nil
	}
	set := ""
	if len(changes) == 1 {
		err = s.commitOne(changes[0])
	} else {
		set = newChangeSetID()
		err = s.commitSet(ctx, set, changes)
	}
	if err != nil {
		return nil, err
	}
	resp.ChangeSet = set
	for i, c := range changes {
		resp.Results[i] = s.committed(ctx, c, set)
	}
	s.opts.logger.DebugContext(ctx, "apply", "changes", len(changes), "changeSet", set)
	return resp, nil
}

// setBytes estimates, from the files' metadata and the request alone,
// before anything is read, the bytes the set writes (its edits counted at
// their files' current sizes, its writes at their contents') and the
// memory it holds while it is planned and committed (see memory.go).
func (s *Engine) setBytes(changes []*change) (writes, hold int64) {
	for _, c := range changes {
		switch c.kind {
		case "edit":
			n := s.fileBytes(c.rel)
			writes += n
			hold += n * editHoldFactor
		case "write":
			n := int64(len(c.write.req.GetContent()))
			writes += n
			hold += n*writeHoldFactor + s.fileBytes(c.rel)*readHoldFactor
		case "delete":
			hold += s.fileBytes(c.rel) * readHoldFactor
		case "move":
			hold += (s.fileBytes(c.rel) + s.fileBytes(c.toRel)) * readHoldFactor
		}
	}
	return writes, hold
}

// newChangeSetID returns a new random change set id.
func newChangeSetID() string { return rand.Text() }

// resolveChange checks a change's fields and cleans its paths, before
// anything is locked or read.
func (s *Engine) resolveChange(c *change, r *hashlinev1.Change) error {
	var err error
	switch ch := r.GetChange().(type) {
	case *hashlinev1.Change_Edit:
		req := ch.Edit
		c.kind, c.path = "edit", req.GetPath()
		if n := len(req.GetEdits()); n > s.opts.maxEdits {
			return BadRequest("edits", "%d edits in one batch; the most is %d, split the batch", n, s.opts.maxEdits)
		}
		c.context = DefaultContext
		if req.Context != nil {
			if req.GetContext() < 0 {
				return BadRequest("context", "context %d is negative; use 0 for no context lines", req.GetContext())
			}
			c.context = int(req.GetContext())
		}
		c.edits = toCoreEdits(req.GetEdits())
		if err := checkEditTexts(c.edits); err != nil {
			return err
		}
		c.rel, c.key, err = s.resolve(req.GetPath())
	case *hashlinev1.Change_Write:
		c.kind, c.path = "write", ch.Write.GetPath()
		if err := checkWrite(ch.Write); err != nil {
			return err
		}
		c.rel, c.key, err = s.resolve(ch.Write.GetPath())
	case *hashlinev1.Change_Delete:
		c.kind, c.path = "delete", ch.Delete.GetPath()
		c.del = &deletePlan{req: ch.Delete}
		if c.rel, c.key, err = s.resolve(ch.Delete.GetPath()); err == nil && c.rel == "." {
			return errRoot
		}
	case *hashlinev1.Change_Move:
		c.kind, c.path = "move", ch.Move.GetFrom()
		c.move = &movePlan{req: ch.Move}
		if c.rel, c.key, err = s.resolve(ch.Move.GetFrom()); err != nil {
			return err
		}
		if c.rel == "." {
			return errRoot
		}
		if c.toRel, c.toKey, err = s.resolve(ch.Move.GetTo()); err != nil {
			c.path = ch.Move.GetTo()
			return err
		}
		if c.toRel == c.rel || c.toKey == c.key {
			return BadRequest("to", "%s: a file cannot be moved onto itself; give another path as to", c.rel)
		}
	default:
		c.kind = "change"
		return BadRequest("changes", "change %d has none of edit, write, delete or move; set one", c.index)
	}
	if err == nil && c.kind == "edit" {
		c.edit = &editPlan{req: r.GetEdit()}
	}
	if err == nil && c.kind == "write" {
		c.write = &writePlan{req: r.GetWrite()}
	}
	return err
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
		touching[c.key] = append(touching[c.key], c.index)
		if c.toKey != "" && c.toKey != c.key {
			touching[c.toKey] = append(touching[c.toKey], c.index)
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
			c.index, c.kind, c.path, strings.Join(names, ", "))})
	}
	return out
}

// removesDir reports whether a delete of the set names a directory now.
func (s *Engine) removesDir(changes []*change) bool {
	for _, c := range changes {
		if c.kind != "delete" {
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
		keys = append(keys, c.key)
		if c.toKey != "" {
			keys = append(keys, c.toKey)
		}
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
// computes what it will write.
// exclusive says whether the set holds the tree lock exclusively, as a
// directory delete must.
func (s *Engine) planChange(ctx context.Context, c *change, exclusive bool) error {
	var err error
	switch c.kind {
	case "edit":
		c.edit, err = s.planEdit(ctx, c.edit.req, c.edits, c.context, c.rel, c.key)
	case "write":
		c.write, err = s.planWrite(ctx, c.write.req, c.rel, c.key)
	case "delete":
		c.del = &deletePlan{req: c.del.req}
		err = s.planDelete(c, exclusive)
	case "move":
		c.move = &movePlan{req: c.move.req}
		c.path = c.move.req.GetFrom()
		err = s.planMove(c)
	}
	if err == nil && (c.edit != nil || c.write != nil) {
		// The mode, size, encoding and permissions are checked when the
		// content is written; a set checks them here, before any change is.
		text, opts := c.content()
		err = s.ws.CheckWrite(c.rel, text, opts)
	}
	return err
}

// content is the new content of an edit or write change and how it is
// written.
func (c *change) content() ([]byte, workspace.WriteOptions) {
	if c.edit != nil {
		return c.edit.out, c.edit.writeOptions()
	}
	return c.write.content, c.write.opts
}

// newBytes is what the change will write.
func (c *change) newBytes() int64 {
	switch {
	case c.edit != nil:
		return int64(len(c.edit.raw))
	case c.write != nil:
		return int64(len(c.write.content))
	}
	return 0
}

// result is the change's result before it is committed (a dry run's).
func (c *change) result(dryRun bool) *hashlinev1.ChangeResult {
	switch c.kind {
	case "edit":
		if dryRun && c.edit.resp.Version == "" {
			c.edit.resp.Version = workspace.Version(c.edit.raw)
		}
		return &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Edit{Edit: c.edit.resp}}
	case "write":
		r := &hashlinev1.WriteResponse{Path: c.rel, Created: !c.write.exists,
			TotalLines: int32(hashline.ParseText(c.write.req.GetContent()).Len())}
		if raw, err := workspace.Encode(c.write.content, c.write.opts.Encoding); err == nil {
			r.Version = workspace.Version(raw)
		}
		return &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Write{Write: r}}
	case "delete":
		return &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Delete{Delete: c.del.response()}}
	default:
		return &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Move{Move: c.move.response()}}
	}
}

// commitOne commits a set of one change by the single call's own atomic
// write, removal or rename: it needs no intent record.
func (s *Engine) commitOne(c *change) error {
	switch c.kind {
	case "edit", "write":
		text, opts := c.content()
		var err error
		c.wr, err = s.ws.WriteFile(c.rel, text, opts)
		return err
	case "delete":
		return s.ws.Remove(c.del.rel, c.del.target)
	default:
		m := c.move
		return s.ws.Rename(m.fromRel, m.from, m.to, m.req.GetOverwrite())
	}
}

// stage writes the new content of an edit or write change beside its file.
func (s *Engine) stage(c *change) (*workspace.Staged, error) {
	text, opts := c.content()
	return s.ws.Stage(c.rel, text, opts)
}

// writeOptions are the options of an edit's write.
func (p *editPlan) writeOptions() workspace.WriteOptions {
	return workspace.WriteOptions{Mode: workspace.ReplaceOnly, Encoding: p.f.Encoding}
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
// finished by Recover at the next start.
func (s *Engine) commitSet(ctx context.Context, set string, changes []*change) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxParallelStages)
	errs := make([]error, len(changes))
	for i, c := range changes {
		if c.edit == nil && c.write == nil {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c.staged, errs[i] = s.stage(c)
		})
	}
	wg.Wait()
	discard := func() {
		var staged []*workspace.Staged
		for _, c := range changes {
			if c.staged != nil {
				staged = append(staged, c.staged)
				c.staged = nil
			}
		}
		s.ws.Discard(staged...)
	}
	if err := errors.Join(errs...); err != nil {
		discard()
		return err
	}
	var dirs []string
	// steps[i] is the step of changes[i]: each change has exactly one.
	steps := make([]workspace.Step, 0, len(changes))
	for _, c := range changes {
		switch {
		case c.staged != nil:
			dirs = append(dirs, c.staged.SyncBefore()...)
			replaces, err := s.replacedVersion(c)
			if err != nil {
				discard()
				return err
			}
			steps = append(steps, c.staged.Step(replaces))
		case c.del != nil:
			steps = append(steps, workspace.Step{Kind: workspace.StepRemove, Path: c.del.rel, To: c.del.target, Version: c.del.version})
		case c.move != nil:
			m := c.move
			steps = append(steps, workspace.Step{Kind: workspace.StepRename, Path: m.fromRel, From: m.from, To: m.to, Version: m.version,
				New: m.version, Replaces: m.replacedVersion})
		}
	}
	if err := s.ws.SyncDirs(dirs); err != nil {
		discard()
		return err
	}
	if err := ctx.Err(); err != nil {
		discard()
		return err
	}
	done := func() error { return nil }
	if s.opts.intents != nil {
		var err error
		if done, err = s.opts.intents.Record(state.Intent{ID: set, Steps: intentSteps(steps)}); err != nil {
			discard()
			return fmt.Errorf("%w: %v; nothing was written", workspace.ErrIO, err)
		}
	}
	if s.opts.recorded != nil {
		s.opts.recorded(set)
	}
	if err := s.ws.Commit(steps); err != nil {
		return s.finishSet(ctx, set, changes, steps, done, err)
	}
	if err := done(); err != nil {
		s.keepRecord(ctx, set, changes, steps, true, done, err)
	}
	return nil
}

// replacedVersion is the version of the file an edit or write change
// replaces, "" when it creates one: its step renames over nothing else.
func (s *Engine) replacedVersion(c *change) (string, error) {
	switch {
	case c.staged.Created:
		return "", nil
	case c.edit != nil:
		return c.edit.f.Version, nil
	case c.write.cur != nil:
		return c.write.cur.Version, nil
	}
	// A file the plan could not read as text (binary, too large).
	return s.ws.FileVersion(c.rel)
}

// finishSet is a set whose Commit failed past the commit point (err). Its
// locks are still held, so every step is tried again now (Redo: done
// steps are found done, and nothing is renamed over a change made by
// another process meanwhile). The record is removed once no step is left
// to do; one whose step still fails is kept, for the next start. The error
// names the changes that were applied and those that were not.
func (s *Engine) finishSet(ctx context.Context, set string, changes []*change, steps []workspace.Step, done func() error, commitErr error) error {
	var applied, missed []string
	left := false
	for i, st := range steps {
		c := changes[i]
		name := fmt.Sprintf("%d (%s %s)", c.index, c.kind, c.path)
		out, why, err := s.ws.Redo(st)
		switch {
		case err != nil:
			left = true
			missed = append(missed, fmt.Sprintf("%s: %v", name, err))
		case out == workspace.RedoDone || out == workspace.RedoDid:
			applied = append(applied, name)
		default:
			missed = append(missed, fmt.Sprintf("%s: %s", name, why))
			s.opts.logger.ErrorContext(ctx, "apply: a change of a committed set could not be applied", "changeSet", set, "path", c.path, "why", why)
			if c.staged != nil {
				s.ws.Discard(c.staged)
			}
		}
	}
	if len(missed) == 0 {
		s.opts.logger.WarnContext(ctx, "apply: a change set was finished on a second try", "changeSet", set, "err", commitErr)
		if err := done(); err != nil {
			s.keepRecord(ctx, set, changes, steps, true, done, err)
		}
		return nil
	}
	next := "the other changes will not be applied: Read their files and send them again"
	if left {
		// Kept, with its steps, until the next change to one of its paths
		// or the next start finishes it.
		next = "the server tries the changes not applied again before it next changes one of the set's files, or when it next starts, unless their files change before"
		s.keepRecord(ctx, set, changes, steps, false, done, nil)
	} else if err := done(); err != nil {
		s.keepRecord(ctx, set, changes, steps, true, done, err)
	}
	appliedList := "none"
	if len(applied) > 0 {
		appliedList = strings.Join(applied, ", ")
	}
	return fmt.Errorf("%w: change set %s was applied only in part (%v). Applied: %s. Not applied: %s. %s",
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

// committed records a committed change (of set set, if any) as the single
// call does: the Watch event, the views, and its result.
func (s *Engine) committed(ctx context.Context, c *change, set string) *hashlinev1.ChangeResult {
	switch c.kind {
	case "edit":
		s.editWritten(ctx, c.edit, c.writeResult(), set)
		return &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Edit{Edit: c.edit.resp}}
	case "write":
		return &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Write{Write: s.written(ctx, c.write, c.writeResult(), set)}}
	case "delete":
		d := c.del
		if !d.dir {
			s.views.Forget(c.key)
			s.latest.Forget(c.key)
			s.publishDelete(ctx, d.target, d.state, set)
		}
		return &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Delete{Delete: d.response()}}
	default:
		m := c.move
		// The key of the new path is taken again: a directory the move
		// created has its own real name now.
		to := s.viewKey(m.toRel)
		s.views.Move(c.key, to)
		s.latest.Move(c.key, to)
		s.publishMove(ctx, m.from, m.to, m.state, set)
		return &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Move{Move: m.response()}}
	}
}

// writeResult is what an edit or write change wrote.
func (c *change) writeResult() *workspace.WriteResult {
	if c.wr != nil {
		return c.wr
	}
	st := c.staged
	return &workspace.WriteResult{Path: st.Path, Raw: st.Raw, Version: st.Version, Created: st.Created}
}

// deletePlan is a Delete checked against the disk.
type deletePlan struct {
	req     *hashlinev1.DeleteRequest
	rel     string
	target  string
	dir     bool
	version string
	state   watch.State // the deleted file, for its Watch event
}

func (d *deletePlan) response() *hashlinev1.DeleteResponse {
	return &hashlinev1.DeleteResponse{Path: d.rel, Version: d.version, Directory: d.dir}
}

// planDelete checks a delete: a file (of the version expected, if given)
// or an empty directory, named as Entry names it.
func (s *Engine) planDelete(c *change, exclusive bool) error {
	d := c.del
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
	if want := d.req.GetExpectedVersion(); want != "" && want != d.version {
		return &VersionMismatchError{Path: rel, Expected: want, Current: d.version,
			Hint: "someone changed the file since you read it; Read it again and decide again whether to delete it"}
	}
	return nil
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

// movePlan is a Move checked against the disk.
type movePlan struct {
	req             *hashlinev1.MoveRequest
	fromRel, toRel  string
	from, to        string // symlink-free
	version         string
	replacedVersion string
	state           watch.State // the moved file
}

func (m *movePlan) response() *hashlinev1.MoveResponse {
	return &hashlinev1.MoveResponse{From: m.fromRel, To: m.toRel, Version: m.version, ReplacedVersion: m.replacedVersion}
}

// planMove checks a move: a regular file (of the version expected, if
// given) to a path that is not a directory, where a file is replaced only
// with overwrite.
func (s *Engine) planMove(c *change) error {
	m := c.move
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
	toRel, to, tfi, err := s.ws.Entry(c.toRel)
	if err != nil {
		c.path = m.req.GetTo()
		return err
	}
	m.fromRel, m.from, m.toRel, m.to = fromRel, from, toRel, to
	if to == from {
		return BadRequest("to", "%s and %s are the same file; a file cannot be moved onto itself", fromRel, toRel)
	}
	// The source leaves its name as a deleted file does.
	if err := s.ws.MayChange("move", fromRel, from); err != nil {
		return err
	}
	if tfi != nil {
		c.path = toRel
		switch {
		case tfi.IsDir():
			return fmt.Errorf("%w: %s is a directory; give the new file's whole path as to (e.g. %s/%s)", workspace.ErrNotRegular, toRel, toRel, filepath.Base(from))
		case !tfi.Mode().IsRegular():
			return fmt.Errorf("%w: %s is not a regular file; hashline replaces regular files only", workspace.ErrNotRegular, toRel)
		case !m.req.GetOverwrite():
			return fmt.Errorf("%w: %s: a file is already there; move to another path, or set overwrite to replace it", workspace.ErrExists, toRel)
		}
		if err := s.ws.MayChange("move", toRel, to); err != nil {
			return err
		}
		st, err := s.fileState(toRel, c.toKey)
		if err != nil {
			return err
		}
		m.replacedVersion = st.Version
		c.path = fromRel
	}
	st, err := s.fileState(fromRel, c.key)
	if err != nil {
		return err
	}
	m.state, m.version = st, st.Version
	if want := m.req.GetExpectedVersion(); want != "" && want != m.version {
		return &VersionMismatchError{Path: fromRel, Expected: want, Current: m.version,
			Hint: "someone changed the file since you read it; Read it again and decide again whether to move it"}
	}
	return nil
}
