package server

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
)

// The conversions of the calls that change files (Edit, Write, Delete,
// Move, Apply) between the API's messages and the engine's types. A nil
// message converts as an empty one, as its getters read it.

// answer is the API's response to an engine call's result r, or its error.
func answer[R, Resp any](r R, err error, to func(R) Resp) (Resp, error) {
	if err != nil {
		var none Resp
		return none, err
	}
	return to(r), nil
}

// responseSize is the encoded size of a result of the engine's as it is
// sent (engine.WithResponseSize): the response size limit is about the
// transport's messages.
func responseSize(result any) int {
	switch r := result.(type) {
	case *engine.EditResult:
		return editResponseSize(r)
	case *engine.ApplyResult:
		return applyResponseSize(r)
	case *engine.ListResult:
		return proto.Size(listResponse(r))
	}
	// A result the face cannot measure would go unchecked: a bug, which
	// the tests of every measured operation find.
	panic(fmt.Sprintf("server: no response message for a %T", result))
}

// editResponseSize is proto.Size(editResponse(r)), counted from r without
// building the message: an Edit's size is checked before it writes, and
// its response is built once, after. The field numbers are
// EditResponse's (and its messages'); TestResponseSizesAreTheEncodedSizes
// checks every field.
func editResponseSize(r *engine.EditResult) int {
	n := sizeString(1, r.Path) + sizeString(2, r.Version) + sizeString(3, r.Diff)
	for _, w := range r.Windows {
		text := max(len(w.Lines)-1, 0) // the line breaks of the window's text
		m := sizeInt(1, w.Start) + sizeInt(2, w.End)
		for _, l := range w.Lines {
			m += sizeMessage(3, sizeLine(l))
			text += len(strconv.Itoa(l.Number)) + len(":") + len(l.Hash) + len("|") + len(l.Content)
		}
		n += sizeMessage(4, m+sizeBytes(4, text))
	}
	for _, l := range r.Replaced {
		n += sizeMessage(5, sizeLine(l))
	}
	for _, w := range r.Warnings {
		n += protowire.SizeTag(6) + protowire.SizeBytes(len(w))
	}
	for _, l := range r.Lines {
		n += sizeMessage(7, sizeLine(l))
	}
	n += sizeInt(8, r.TotalLines) + sizeBool(9, r.DryRun) + sizeString(10, r.RebasedFrom)
	for _, m := range r.Moved {
		n += sizeMessage(11, sizeString(1, m.Ref)+sizeInt(2, m.From)+sizeInt(3, m.To))
	}
	for _, rp := range r.Repairs {
		n += sizeMessage(12, sizeString(1, string(rp.Kind))+sizeInt(2, rp.EditIndex)+sizeInt(3, rp.Line)+sizeString(4, rp.Detail))
	}
	n += sizeString(13, r.TaggedDiff)
	for _, sh := range r.Shifts {
		n += sizeMessage(14, sizeInt(1, sh.From)+sizeInt(2, sh.To)+sizeInt(3, sh.By))
	}
	for _, d := range r.Diagnostics {
		n += sizeMessage(15, proto.Size(diagnostic(d)))
	}
	return n + sizeString(16, r.SyntaxNotChecked)
}

// applyResponseSize is proto.Size(applyResponse(r)), its edits counted as
// editResponseSize counts them.
func applyResponseSize(r *engine.ApplyResult) int {
	n := sizeBool(2, r.DryRun) + sizeString(3, r.ChangeSet)
	for _, res := range r.Results {
		var c int // the ChangeResult: its one result
		switch res := res.(type) {
		case *engine.EditResult:
			c = sizeMessage(1, editResponseSize(res))
		case *engine.WriteResult:
			c = sizeMessage(2, proto.Size(writeResponse(res)))
		case *engine.DeleteResult:
			c = sizeMessage(3, proto.Size(deleteResponse(res)))
		case *engine.MoveResult:
			c = sizeMessage(4, proto.Size(moveResponse(res)))
		}
		n += sizeMessage(1, c)
	}
	return n
}

// sizeLine is the encoded size of a Line's fields.
func sizeLine(l hashline.TaggedLine) int {
	return sizeInt(1, l.Number) + sizeString(2, l.Hash) + sizeString(3, l.Content)
}

// sizeMessage is the size of a message field (of a repeated one, or a
// oneof's, present even when empty) whose own fields take n bytes.
func sizeMessage(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

// sizeString is the size of a singular string field; empty, it is not sent.
func sizeString(num protowire.Number, s string) int { return sizeBytes(num, len(s)) }

func sizeBytes(num protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

// sizeInt is the size of a singular int32 field holding v as the
// converters put it (int32(v)); a negative one takes ten bytes.
func sizeInt(num protowire.Number, v int) int {
	if int32(v) == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(uint64(int64(int32(v))))
}

func sizeBool(num protowire.Number, b bool) int {
	if !b {
		return 0
	}
	return protowire.SizeTag(num) + 1
}

func editRequest(req *hashlinev1.EditRequest) *engine.EditRequest {
	r := &engine.EditRequest{
		Path:         req.GetPath(),
		Edits:        toCoreEdits(req.GetEdits()),
		BaseVersion:  req.GetBaseVersion(),
		Strict:       req.GetStrict(),
		Full:         req.GetFull(),
		DryRun:       req.GetDryRun(),
		StrictSyntax: req.GetStrictSyntax(),
	}
	if req.Context != nil {
		n := int(req.GetContext())
		r.Context = &n
	}
	return r
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

func editResponse(r *engine.EditResult) *hashlinev1.EditResponse {
	resp := &hashlinev1.EditResponse{
		Path:        r.Path,
		Version:     r.Version,
		Diff:        r.Diff,
		Replaced:    editLines(r.Replaced),
		Warnings:    r.Warnings,
		Lines:       editLines(r.Lines),
		TotalLines:  int32(r.TotalLines),
		DryRun:      r.DryRun,
		RebasedFrom: r.RebasedFrom,
		TaggedDiff:  r.TaggedDiff,
	}
	for _, w := range r.Windows {
		resp.Windows = append(resp.Windows, &hashlinev1.Window{Start: int32(w.Start), End: int32(w.End), Lines: editLines(w.Lines), Text: joinTagged(w.Lines)})
	}
	for _, m := range r.Moved {
		resp.Moved = append(resp.Moved, &hashlinev1.MovedRef{Ref: m.Ref, From: int32(m.From), To: int32(m.To)})
	}
	// The repairs' sentences are among the warnings already.
	for _, rp := range r.Repairs {
		resp.Repairs = append(resp.Repairs, &hashlinev1.Repair{Kind: string(rp.Kind), EditIndex: int32(rp.EditIndex), Line: int32(rp.Line), Detail: rp.Detail})
	}
	for _, sh := range r.Shifts {
		resp.Shifts = append(resp.Shifts, &hashlinev1.LineShift{From: int32(sh.From), To: int32(sh.To), By: int32(sh.By)})
	}
	resp.Diagnostics, resp.SyntaxNotChecked = diagnostics(r.Diagnostics), r.SyntaxNotChecked
	return resp
}

// diagnostics are a result's syntax errors as the API's.
func diagnostics(ds []engine.Diagnostic) []*hashlinev1.Diagnostic {
	if len(ds) == 0 {
		return nil
	}
	out := make([]*hashlinev1.Diagnostic, len(ds))
	for i, d := range ds {
		out[i] = diagnostic(d)
	}
	return out
}

func diagnostic(d engine.Diagnostic) *hashlinev1.Diagnostic {
	return &hashlinev1.Diagnostic{Ref: diagnosticRef(d), Line: int32(d.Line.Number), Column: int32(d.Column), Message: d.Message, Checker: d.Checker, Content: d.Line.Content, Source: d.Source}
}

// diagnosticRef is the ref of a diagnostic's line, "" for one without a
// line (a check command's output that named none).
func diagnosticRef(d engine.Diagnostic) string {
	if d.Line.Number == 0 {
		return ""
	}
	return d.Line.Tag()
}

// editLines are an edit result's lines (cut by the engine already) as the
// API's.
func editLines(lines []hashline.TaggedLine) []*hashlinev1.Line {
	if len(lines) == 0 {
		return nil
	}
	out := make([]*hashlinev1.Line, len(lines))
	for i, l := range lines {
		out[i] = &hashlinev1.Line{Number: int32(l.Number), Hash: l.Hash, Content: l.Content}
	}
	return out
}

// joinTagged is a window's lines as tagged text, one a line.
func joinTagged(lines []hashline.TaggedLine) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.String())
	}
	return b.String()
}

// writeRequest converts a Write. A mode the API does not know keeps its
// number, which the engine refuses and names.
func writeRequest(req *hashlinev1.WriteRequest) *engine.WriteRequest {
	mode := engine.WriteMode(req.GetMode())
	switch req.GetMode() {
	case hashlinev1.WriteMode_WRITE_MODE_UNSPECIFIED, hashlinev1.WriteMode_WRITE_MODE_UPSERT:
		mode = engine.WriteUpsert
	case hashlinev1.WriteMode_WRITE_MODE_CREATE:
		mode = engine.WriteCreate
	case hashlinev1.WriteMode_WRITE_MODE_REPLACE:
		mode = engine.WriteReplace
	}
	return &engine.WriteRequest{Path: req.GetPath(), Content: req.GetContent(), Mode: mode, ExpectedVersion: req.GetExpectedVersion(), StrictSyntax: req.GetStrictSyntax()}
}

func writeResponse(r *engine.WriteResult) *hashlinev1.WriteResponse {
	return &hashlinev1.WriteResponse{Path: r.Path, Version: r.Version, TotalLines: int32(r.TotalLines), Created: r.Created,
		Diagnostics: diagnostics(r.Diagnostics), SyntaxNotChecked: r.SyntaxNotChecked, Warnings: r.Warnings}
}

func deleteRequest(req *hashlinev1.DeleteRequest) *engine.DeleteRequest {
	return &engine.DeleteRequest{Path: req.GetPath(), ExpectedVersion: req.GetExpectedVersion()}
}

func deleteResponse(r *engine.DeleteResult) *hashlinev1.DeleteResponse {
	return &hashlinev1.DeleteResponse{Path: r.Path, Version: r.Version, Directory: r.Directory}
}

func moveRequest(req *hashlinev1.MoveRequest) *engine.MoveRequest {
	return &engine.MoveRequest{From: req.GetFrom(), To: req.GetTo(), ExpectedVersion: req.GetExpectedVersion(), Overwrite: req.GetOverwrite()}
}

func moveResponse(r *engine.MoveResult) *hashlinev1.MoveResponse {
	return &hashlinev1.MoveResponse{From: r.From, To: r.To, Version: r.Version, ReplacedVersion: r.ReplacedVersion}
}

// applyRequest converts a change set. A change with none of its kinds set
// is a nil engine.Change, which the engine refuses with its index.
func applyRequest(req *hashlinev1.ApplyRequest) *engine.ApplyRequest {
	changes := make([]engine.Change, len(req.GetChanges()))
	for i, c := range req.GetChanges() {
		switch ch := c.GetChange().(type) {
		case *hashlinev1.Change_Edit:
			changes[i] = editRequest(ch.Edit)
		case *hashlinev1.Change_Write:
			changes[i] = writeRequest(ch.Write)
		case *hashlinev1.Change_Delete:
			changes[i] = deleteRequest(ch.Delete)
		case *hashlinev1.Change_Move:
			changes[i] = moveRequest(ch.Move)
		}
	}
	return &engine.ApplyRequest{Changes: changes, DryRun: req.GetDryRun(), StrictSyntax: req.GetStrictSyntax()}
}

func applyResponse(r *engine.ApplyResult) *hashlinev1.ApplyResponse {
	return &hashlinev1.ApplyResponse{DryRun: r.DryRun, ChangeSet: r.ChangeSet, Results: changeResults(r.Results)}
}

// changeResults are the results of a set's changes (Apply's, Revert's).
func changeResults(rs []engine.ChangeResult) []*hashlinev1.ChangeResult {
	out := make([]*hashlinev1.ChangeResult, len(rs))
	for i, res := range rs {
		c := &hashlinev1.ChangeResult{}
		switch res := res.(type) {
		case *engine.EditResult:
			c.Result = &hashlinev1.ChangeResult_Edit{Edit: editResponse(res)}
		case *engine.WriteResult:
			c.Result = &hashlinev1.ChangeResult_Write{Write: writeResponse(res)}
		case *engine.DeleteResult:
			c.Result = &hashlinev1.ChangeResult_Delete{Delete: deleteResponse(res)}
		case *engine.MoveResult:
			c.Result = &hashlinev1.ChangeResult_Move{Move: moveResponse(res)}
		}
		out[i] = c
	}
	return out
}
