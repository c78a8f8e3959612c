package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// Edit checks every reference of the batch against the file, applies the
// batch in memory and writes the file once. References made against an
// older version (baseVersion, else the version this agent last saw) are
// rebased onto the current file when the server holds that version, and
// refused with fresh tags when it does not (versions.go rebase).
// A request_id makes a retry return the first call's outcome (idempotency.go).
func (s *Engine) Edit(ctx context.Context, req *hashlinev1.EditRequest) (*hashlinev1.EditResponse, error) {
	if n := len(req.GetEdits()); n > s.opts.maxEdits {
		return nil, BadRequest("edits", "%d edits in one batch; the most is %d, split the batch", n, s.opts.maxEdits)
	}
	context := DefaultContext
	if req.Context != nil {
		if req.GetContext() < 0 {
			return nil, BadRequest("context", "context %d is negative; use 0 for no context lines", req.GetContext())
		}
		context = int(req.GetContext())
	}
	edits := toCoreEdits(req.GetEdits())
	if err := checkEditTexts(edits); err != nil {
		return nil, err
	}
	// Charged before the lock, so that no call waits for memory while it
	// holds a path others wait for.
	release, err := s.memory.acquire(ctx, "this Edit of "+req.GetPath(), s.fileBytes(req.GetPath())*editHoldFactor)
	if err != nil {
		return nil, err
	}
	defer release()
	rel, key, unlock, err := s.lockPath(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.editFile(ctx, req, edits, context, rel, key)
}

// editPlan is an Edit checked and applied in memory, not yet written.
type editPlan struct {
	req  *hashlinev1.EditRequest
	key  string
	f    *workspace.File
	doc  *hashline.Document
	res  *hashline.Result
	hist []versions.Seen
	out  []byte // the new text
	raw  []byte // the new file's bytes
	resp *hashlinev1.EditResponse
	rb   *rebased
}

// editFile is Edit of the file rel (view key key), under its lock: it
// plans the edit (planEdit), writes it and responds.
func (s *Engine) editFile(ctx context.Context, req *hashlinev1.EditRequest, edits []hashline.Edit, context int, rel, key string) (*hashlinev1.EditResponse, error) {
	p, err := s.planEdit(ctx, req, edits, context, rel, key)
	if err != nil {
		return nil, err
	}
	if !req.GetDryRun() {
		wr, err := s.ws.WriteFile(rel, p.out, workspace.WriteOptions{Mode: workspace.ReplaceOnly, Encoding: p.f.Encoding})
		if err != nil {
			return nil, err
		}
		s.editWritten(ctx, p, wr, "")
	}
	s.opts.logger.DebugContext(ctx, "edit", "path", p.f.Path, "edits", len(edits), "dryRun", req.GetDryRun(), "version", p.resp.Version, "rebasedFrom", p.rb.from)
	return p.resp, nil
}

// editWritten records an Edit's write wr (of change set set, if any): the
// version in its response, the Watch event, and what its author saw.
func (s *Engine) editWritten(ctx context.Context, p *editPlan, wr *workspace.WriteResult, set string) {
	p.resp.Version = wr.Version
	s.publishEdit(ctx, p.f, wr, p.out, set)
	s.saw(ctx, p.key, p.res.Doc, exactText(p.f.Encoding), versions.EditShown(wr.Version, p.doc, p.res, p.req.GetFull(), p.hist, p.f.Version))
}

// planEdit is the part of Edit of the file rel (view key key) before the
// write, under its lock: it loads the file, checks read-before-edit,
// rebases the batch, plans and applies it in memory, checks the result's
// size and builds the response. Everything that can refuse the edit runs
// here, so an error means the file was not changed.
func (s *Engine) planEdit(ctx context.Context, req *hashlinev1.EditRequest, edits []hashline.Edit, context int, rel, key string) (*editPlan, error) {
	f, doc, err := s.load(rel, key)
	if err != nil {
		if errors.Is(err, workspace.ErrNotFound) {
			return nil, errors.Join(err, errors.New("Edit changes existing files; create it with Write"))
		}
		return nil, err
	}
	h := s.opts.hasher
	agent := Agent(ctx)
	hist := s.views.History(agent, key)
	if i := needsRead(edits); s.opts.requireRead && len(hist) == 0 && i >= 0 {
		return nil, &NotReadError{Path: f.Path, Agent: agent, Edit: i, Op: edits[i].Op}
	}
	s.known(key, f.Version, doc, exactText(f.Encoding)) // a base for whoever reads it next
	rb, err := s.rebase(req.GetBaseVersion(), f, doc, agent, key, hist, edits)
	if err != nil {
		return nil, s.refused(agent, key, f.Version, staleContext(err, doc, h, context))
	}
	plan, err := hashline.PlanEdits(doc, rb.edits, h, hashline.Strict(req.GetStrict()))
	if err != nil {
		markAsRead(err, hist, f.Version)
		return nil, s.refused(agent, key, f.Version, s.planError(staleContext(err, doc, h, context), f.Version))
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
		return nil, s.refused(agent, key, f.Version, s.noteNoChange(agent, key, edits, s.planError(err, f.Version)))
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
			return nil, err
		}
	}
	// Everything that can refuse the edit is checked before the write, so
	// an error always means the file was not changed.
	if limit := s.ws.MaxFileBytes(); int64(len(raw)) > limit {
		return nil, fmt.Errorf("%w: %s would be %d bytes after this edit, over the %d-byte limit; split the file or write less",
			workspace.ErrTooLarge, f.Path, len(raw), limit)
	}
	resp := &hashlinev1.EditResponse{
		Path:        f.Path,
		Diff:        res.Diff,
		Replaced:    s.taggedCopy(res.Replaced),
		Warnings:    append(rb.warnings, res.Warnings...),
		TotalLines:  int32(res.Doc.Len()),
		DryRun:      req.GetDryRun(),
		RebasedFrom: rb.from,
		Moved:       movedProto(rb.moved),
		Repairs:     repairsProto(res.Repairs),
		TaggedDiff:  res.TaggedDiff,
		Shifts:      shiftsProto(res.Shifts),
	}
	for _, w := range res.Windows {
		lines := s.taggedCopy(w.Lines)
		resp.Windows = append(resp.Windows, &hashlinev1.Window{
			Start: int32(w.Start),
			End:   int32(w.End),
			Lines: lines,
			Text:  joinTagged(lines),
		})
	}
	if req.GetFull() {
		resp.Lines = s.tagged(res.Doc.Tagged(h, 1, res.Doc.Len()))
	}
	// The new version is hashed by the write, while it waits for the disk,
	// or here for a dry run. Until then the size check allows for it, and
	// counts it exactly when the response is near the limit.
	if req.GetDryRun() {
		resp.Version = workspace.Version(raw)
	}
	size := proto.Size(resp)
	if resp.Version == "" && size+versionFieldBound > s.opts.maxResponseBytes {
		resp.Version = workspace.Version(raw)
		size = proto.Size(resp)
	}
	if size > s.opts.maxResponseBytes {
		return nil, fmt.Errorf("%w: the response would be %d bytes, over the %d-byte limit; nothing was written. Retry without full, with a smaller context, or as smaller batches",
			workspace.ErrTooLarge, size, s.opts.maxResponseBytes)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &editPlan{req: req, key: key, f: f, doc: doc, res: res, hist: hist, out: out, raw: raw, resp: resp, rb: rb}, nil
}

// repairsProto converts the core's repairs; their sentences are among the
// warnings already.
func repairsProto(rs []hashline.Repair) []*hashlinev1.Repair {
	if len(rs) == 0 {
		return nil
	}
	out := make([]*hashlinev1.Repair, len(rs))
	for i, r := range rs {
		out[i] = &hashlinev1.Repair{Kind: string(r.Kind), EditIndex: int32(r.EditIndex), Line: int32(r.Line), Detail: r.Detail}
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

func shiftsProto(shifts []hashline.Shift) []*hashlinev1.LineShift {
	out := make([]*hashlinev1.LineShift, len(shifts))
	for i, sh := range shifts {
		out[i] = &hashlinev1.LineShift{From: int32(sh.From), To: int32(sh.To), By: int32(sh.By)}
	}
	return out
}

func joinTagged(lines []*hashlinev1.Line) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(hashline.TaggedLine{Number: int(l.Number), Hash: l.Hash, Content: l.Content}.String())
	}
	return b.String()
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

// toCoreEdits converts the API's oneof edits. An edit with no operation set
// becomes Op 0, which the planner reports as INVALID_EDIT with its index.
func toCoreEdits(in []*hashlinev1.FileEdit) []hashline.Edit {
	out := make([]hashline.Edit, len(in))
	for i, e := range in {
		switch op := e.GetOp().(type) {
		case *hashlinev1.FileEdit_Replace:
			out[i] = hashline.Edit{Op: hashline.OpReplace, Start: op.Replace.GetStart(), End: op.Replace.GetEnd(), Text: op.Replace.GetText()}
		case *hashlinev1.FileEdit_InsertAfter:
			out[i] = hashline.Edit{Op: hashline.OpInsertAfter, Start: op.InsertAfter.GetAnchor(), Text: op.InsertAfter.GetText()}
		case *hashlinev1.FileEdit_InsertBefore:
			out[i] = hashline.Edit{Op: hashline.OpInsertBefore, Start: op.InsertBefore.GetAnchor(), Text: op.InsertBefore.GetText()}
		case *hashlinev1.FileEdit_Delete:
			out[i] = hashline.Edit{Op: hashline.OpDelete, Start: op.Delete.GetStart(), End: op.Delete.GetEnd()}
		case *hashlinev1.FileEdit_Append:
			out[i] = hashline.Edit{Op: hashline.OpAppend, Text: op.Append.GetText()}
		case *hashlinev1.FileEdit_Prepend:
			out[i] = hashline.Edit{Op: hashline.OpPrepend, Text: op.Prepend.GetText()}
		case *hashlinev1.FileEdit_ReplaceText:
			out[i] = hashline.Edit{Op: hashline.OpReplaceText, OldText: op.ReplaceText.GetOldText(), NewText: op.ReplaceText.GetNewText(), All: op.ReplaceText.GetAll()}
		}
	}
	return out
}
