package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// EditRequest is an Edit: a batch of edits to one file, all or nothing.
type EditRequest struct {
	// Path is the file, relative to the workspace root.
	Path  string
	Edits []hashline.Edit
	// BaseVersion is the version the references were read from; "" is the
	// version this agent last saw.
	BaseVersion string
	// Context is the lines of context around each change (and each stale
	// reference of a refusal); nil is DefaultContext.
	Context *int
	// Strict applies the texts exactly as sent, with no repairs.
	Strict bool
	// Full returns the whole new file in Lines.
	Full bool
	// DryRun checks and computes everything but writes nothing.
	DryRun bool
	// StrictSyntax refuses the edit, with a *SyntaxError, when it would
	// introduce syntax errors, whatever the engine's mode (WithSyntax).
	StrictSyntax bool

	// revert, set by Revert, makes the edit the inverse of a change's
	// hunks, built and rebased under the file's lock (revert.go): Edits
	// are then none.
	revert *revertEdit
}

// EditResult is what an Edit did (or, with DryRun, would do).
type EditResult struct {
	// Path is the cleaned path; Version the new file's.
	Path, Version string
	// Diff is a unified diff from the old file to the new one; TaggedDiff
	// the changes with the references to use next.
	Diff, TaggedDiff string
	// Windows are fresh tagged lines around every change.
	Windows []hashline.Window
	// Replaced are the lines removed or overwritten, with their old numbers.
	Replaced []hashline.TaggedLine
	Warnings []string
	// Lines is the whole new file, with Full.
	Lines      []hashline.TaggedLine
	TotalLines int
	DryRun     bool
	// RebasedFrom is the older version the references were rebased from,
	// "" when none was; Moved the references whose numbers changed.
	RebasedFrom string
	Moved       []versions.Move
	Repairs     []hashline.Repair
	Shifts      []hashline.Shift
	// Diagnostics are the syntax errors the edit introduced (syntax.go);
	// SyntaxNotChecked says why the file was not checked, when that
	// matters.
	Diagnostics      []Diagnostic
	SyntaxNotChecked string
}

func (*EditRequest) isChange()      {}
func (*EditResult) isChangeResult() {}

// Edit checks every reference of the batch against the file, applies the
// batch in memory and writes the file once: a change set of one change
// (change.go). References made against an older version (BaseVersion, else
// the version this agent last saw) are rebased onto the current file when
// the server holds that version, and refused with fresh tags when it does
// not (versions.go rebase).
func (s *Engine) Edit(ctx context.Context, req *EditRequest) (*EditResult, error) {
	return applyOne[*EditResult](ctx, s, req, req.DryRun)
}

// editPlan is an edit change: its request, and once planned (planEdit)
// the edit checked and applied in memory, not yet written.
type editPlan struct {
	req     *EditRequest
	context int
	key     string
	f       *workspace.File
	doc     *hashline.Document
	res     *hashline.Result
	hist    []versions.Seen
	out     []byte // the new text
	raw     []byte // the new file's bytes
	reply   *EditResult
	rb      *rebased
	written
	syntaxState
	commandState
}

func (p *editPlan) before() []byte             { return p.f.Text }
func (p *editPlan) newDoc() *hashline.Document { return p.res.Doc }

// newEditPlan checks what can be checked of an edit before anything is
// read: the number of edits, the context and the texts.
func (s *Engine) newEditPlan(req *EditRequest) (*editPlan, error) {
	if n := len(req.Edits); n > s.opts.maxEdits {
		return nil, BadRequest("edits", "%d edits in one batch; the most is %d, split the batch", n, s.opts.maxEdits)
	}
	context := DefaultContext
	if req.Context != nil {
		if *req.Context < 0 {
			return nil, BadRequest("context", "context %d is negative; use 0 for no context lines", *req.Context)
		}
		context = *req.Context
	}
	if err := checkEditTexts(req.Edits); err != nil {
		return nil, err
	}
	return &editPlan{req: req, context: context}, nil
}

// editWritten records an edit's write wr (of change set set, if any): the
// version in its result, the Watch event, and what its author saw.
func (s *Engine) editWritten(ctx context.Context, p *editPlan, wr *workspace.WriteResult, set string) {
	p.reply.Version = wr.Version
	s.publishEdit(ctx, p.f, wr, p.out, set)
	s.saw(ctx, p.key, p.res.Doc, exactText(p.f.Encoding), versions.EditShown(wr.Version, p.doc, p.res, p.req.Full, p.hist, p.f.Version))
	s.opts.logger.DebugContext(ctx, "edit", "path", p.f.Path, "edits", len(p.req.Edits), "changeSet", set, "version", wr.Version, "rebasedFrom", p.rb.from)
}

// planEdit is the part of an edit of the file rel (view key key) before
// the write, under its lock: it loads the file, checks read-before-edit,
// rebases the batch, plans and applies it in memory, checks the result's
// size and builds the result. Everything that can refuse the edit runs
// here, so an error means the file was not changed.
func (s *Engine) planEdit(ctx context.Context, p *editPlan, rel, key string) error {
	req, edits, context := p.req, p.req.Edits, p.context
	f, doc, err := s.load(rel, key)
	if err != nil {
		if errors.Is(err, workspace.ErrNotFound) {
			return errors.Join(err, errors.New("Edit changes existing files; create it with Write"))
		}
		return err
	}
	s.noticeLoaded(ctx, rel, key, f, doc)
	h := s.opts.hasher
	agent := Agent(ctx)
	hist := s.views.History(agent, key)
	// A revert's references are the change's, not lines the agent read.
	if i := needsRead(edits); s.opts.requireRead && len(hist) == 0 && i >= 0 && req.revert == nil {
		return &NotReadError{Path: f.Path, Agent: agent, Edit: i, Op: edits[i].Op}
	}
	s.known(key, f.Version, doc, exactText(f.Encoding)) // a base for whoever reads it next
	var rb *rebased
	span := s.startRebase(ctx, f.Path, req.BaseVersion, f.Version)
	if req.revert != nil {
		edits, rb, err = s.revertRebase(req.revert, f, doc)
		req.Edits = edits
	} else {
		rb, err = s.rebase(req.BaseVersion, f, doc, agent, key, hist, edits)
	}
	endRebase(span, rb, err)
	if err != nil {
		return s.refused(agent, key, f.Version, staleContext(err, doc, h, context))
	}
	plan, err := hashline.PlanEdits(doc, rb.edits, h, hashline.Strict(req.Strict))
	if err != nil {
		markAsRead(err, hist, f.Version)
		return s.refused(agent, key, f.Version, s.planError(staleContext(err, doc, h, context), f.Version))
	}
	res, err := plan.Apply(doc, hashline.ApplyOptions{
		Hasher:       h,
		Context:      context,
		OldLabel:     "a/" + f.Path,
		NewLabel:     "b/" + f.Path,
		MaxLineBytes: s.opts.maxLineBytes,
	})
	if err != nil {
		// A no-op shows the lines it targeted, as a stale ref does.
		return s.refused(agent, key, f.Version, s.noteNoChange(agent, key, edits, s.planError(err, f.Version)))
	}
	// The new document's bytes are written as they are, not copied: the
	// write only reads them.
	out := res.Doc.View()
	// UTF-8 is written as it is: the file's text was checked when it was
	// read, the edits' texts were checked above, and joining valid UTF-8
	// at line breaks (or replacing a valid substring) keeps it valid.
	// Other encodings are encoded here, so that size and version are exact.
	raw := out
	if f.Encoding != workspace.UTF8 {
		if raw, err = workspace.Encode(out, f.Encoding); err != nil {
			return err
		}
	}
	// Everything that can refuse the edit is checked before the write, so
	// an error always means the file was not changed.
	if limit := s.ws.MaxFileBytes(); int64(len(raw)) > limit {
		return fmt.Errorf("%w: %s would be %d bytes after this edit, over the %d-byte limit; split the file or write less",
			workspace.ErrTooLarge, f.Path, len(raw), limit)
	}
	result, err := s.editReply(req, f, res, rb, raw)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.key, p.f, p.doc, p.res, p.hist, p.out, p.raw, p.reply, p.rb = key, f, doc, res, hist, out, raw, result, rb
	return nil
}

// editReply is the result of the edit of f that res applied (rebased by
// rb), whose new file's bytes are raw, refused TOO_LARGE when it would be
// over the response size limit.
func (s *Engine) editReply(req *EditRequest, f *workspace.File, res *hashline.Result, rb *rebased, raw []byte) (*EditResult, error) {
	h := s.opts.hasher
	result := &EditResult{
		Path:        f.Path,
		Diff:        res.Diff,
		Replaced:    s.editLines(res.Replaced, true),
		Warnings:    append(rb.warnings, res.Warnings...),
		TotalLines:  res.Doc.Len(),
		DryRun:      req.DryRun,
		RebasedFrom: rb.from,
		Moved:       rb.moved,
		Repairs:     res.Repairs,
		TaggedDiff:  res.TaggedDiff,
		Shifts:      res.Shifts,
	}
	if len(res.Windows) > 0 {
		result.Windows = make([]hashline.Window, len(res.Windows))
		for i, w := range res.Windows {
			result.Windows[i] = hashline.Window{Start: w.Start, End: w.End, Lines: s.editLines(w.Lines, true)}
		}
	}
	if req.Full {
		result.Lines = s.editLines(res.Doc.Tagged(h, 1, res.Doc.Len()), false)
	}
	// The new version is hashed once: by the write, while it waits for the
	// disk, or here for a dry run. Until then the size check allows for it,
	// and counts it exactly when the result is near the limit.
	if req.DryRun {
		result.Version = workspace.Version(raw)
	}
	if size := s.opts.responseSize; size != nil {
		n := size(result)
		if result.Version == "" && n+versionFieldBound > s.opts.maxResponseBytes {
			result.Version = workspace.Version(raw)
			n = size(result)
		}
		if n > s.opts.maxResponseBytes {
			return nil, fmt.Errorf("%w: the response would be %d bytes, over the %d-byte limit; nothing was written. Retry without full, with a smaller context, or as smaller batches",
				workspace.ErrTooLarge, n, s.opts.maxResponseBytes)
		}
	}
	return result, nil
}

// editLines are lines of an edit's result, their contents cut to the
// engine's line limit; copied, for a few lines of a file: a result can
// outlive its call (a request_id's outcome is kept, idempotency.go), and a
// line that still pointed into the file's text would keep all of that text
// alive with it.
func (s *Engine) editLines(lines []hashline.TaggedLine, copied bool) []hashline.TaggedLine {
	out := make([]hashline.TaggedLine, len(lines))
	for i, l := range lines {
		l.Content = hashline.CutLine(l.Content, s.opts.maxLineBytes)
		if copied {
			l.Content = strings.Clone(l.Content)
		}
		out[i] = l
	}
	return out
}

// maxStaleContext bounds the lines a refusal shows on each side of a stale
// reference. Unlike a response, an error is not checked against the
// response size limit, and every stale reference carries its own fresh
// lines (StaleRef.fresh): a batch of many stale references asking for a
// large context would otherwise make an error of refs × context lines.
const maxStaleContext = 10

// staleContext shows n lines (at most maxStaleContext) of doc, the file the
// references were checked against, on each side of every stale reference
// of err: the request's context applies to the fresh lines of a refusal as
// to those of a diff.
func staleContext(err error, doc *hashline.Document, h hashline.Hasher, n int) error {
	n = min(n, maxStaleContext)
	var c *versions.ConflictError
	var b *hashline.BatchError
	switch {
	case errors.As(err, &c):
		c.SetContext(doc, h, n)
	case errors.As(err, &b):
		b.SetContext(doc, h, n)
	}
	return err
}

// versionFieldBound is more than a version ("v2-" and 32 hex digits) adds
// to an encoded response with its field tag and length.
const versionFieldBound = 64

// markAsRead marks the stale references of err whose lines the agent was
// shown in version, the current one (hist has its view): those lines are
// as it read them, so the reference's hash is wrong, not the file changed.
func markAsRead(err error, hist []versions.Seen, version string) {
	var b *hashline.BatchError
	if !errors.As(err, &b) {
		return
	}
	for _, seen := range hist {
		if seen.Version != version {
			continue
		}
		for i := range b.Problems {
			p := &b.Problems[i]
			if p.Reason == hashline.ReasonStaleRef && p.CurrentLine != "" && seen.Lines.Has(p.Line) {
				p.AsRead = true
			}
		}
	}
}

// planError attaches the version the stale check ran against, so StaleRef
// details say which version their fresh lines come from.
func (s *Engine) planError(err error, version string) error {
	var b *hashline.BatchError
	if errors.As(err, &b) {
		return &StaleError{Batch: b, CurrentVersion: version}
	}
	return err
}

// checkEditTexts refuses, before anything is read or written, edits whose
// texts are not UTF-8, and texts an edit would put into the file that have a
// NUL byte, each of those at once (one EditError per edit, as the planner
// reports its problems). Over gRPC protobuf has refused invalid UTF-8
// already, but the rule is the service's, not the transport's, and the
// edited file is written without a second check of the whole text. An oldText is
// only looked for, so a NUL in it (a file may have one after its first
// 8 KiB) does no harm.
func checkEditTexts(edits []hashline.Edit) error {
	var nul []hashline.Problem
	for i, e := range edits {
		for _, t := range []string{e.Text, e.OldText, e.NewText} {
			if !utf8.ValidString(t) {
				return fmt.Errorf("%w: edit %d: its text is not valid UTF-8; send UTF-8 text", workspace.ErrNotText, i)
			}
		}
		field, text := "text", e.Text
		if e.Op == hashline.OpReplaceText {
			field, text = "newText", e.NewText
		}
		if refusal := nulRefusal(text); refusal != "" {
			nul = append(nul, hashline.Problem{EditIndex: i, Field: field, Reason: ReasonBinaryContent,
				Message: fmt.Sprintf("edit %d (%s): %s", i, field, refusal)})
		}
	}
	if len(nul) > 0 {
		return &hashline.BatchError{Problems: nul}
	}
	return nil
}

// nulRefusal is the check of text to be written for a NUL byte, for Write
// and Edit alike (reason BINARY_CONTENT): a file with a NUL byte in its
// first 8 KiB is binary, so from then on every agent's Read and Edit would
// refuse it and Grep would skip it. It returns what to say about the text,
// or "" if it has no NUL.
func nulRefusal(text string) string {
	at := strings.IndexByte(text, 0)
	if at < 0 {
		return ""
	}
	return fmt.Sprintf("has a NUL byte at byte offset %d; hashline writes text files only (a NUL byte makes a file binary, and unreadable to every agent), so remove it, or write it as an escape sequence of the file's language such as \\0", at)
}
