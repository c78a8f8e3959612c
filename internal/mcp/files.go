package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/render"
)

const deleteDescription = `Delete a file, or an empty directory.`

const moveDescription = `Rename a file, creating directories; its refs stay valid. An existing to is kept unless overwrite.`

// filesDescription is edit_file's paragraph on its several-files form.
const filesDescription = `Several files, all or nothing: files: [{path, edits}] in place of path and edits.`

// addFileTools registers delete_file and move_file.
func addFileTools(s *sdk.Server, t *tools) {
	sdk.AddTool(s, &sdk.Tool{Name: "delete_file", Description: deleteDescription}, t.deleteFile)
	sdk.AddTool(s, &sdk.Tool{Name: "move_file", Description: moveDescription}, t.moveFile)
}

// deleteArgs are delete_file's arguments.
type deleteArgs struct {
	Path string `json:"path"`
}

func (t *tools) deleteFile(ctx context.Context, req *sdk.CallToolRequest, a deleteArgs) (*sdk.CallToolResult, any, error) {
	resp, err := t.c.Delete(t.ctx(ctx, req), &hashlinev1.DeleteRequest{Path: a.Path})
	if err != nil {
		return failure("deleting", a.Path, err), nil, nil
	}
	return textResult(render.Delete(resp, render.Options{Face: render.MCP})), nil, nil
}

// moveArgs are move_file's arguments.
type moveArgs struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Overwrite bool   `json:"overwrite,omitempty"`
}

func (t *tools) moveFile(ctx context.Context, req *sdk.CallToolRequest, a moveArgs) (*sdk.CallToolResult, any, error) {
	resp, err := t.c.Move(t.ctx(ctx, req), &hashlinev1.MoveRequest{From: a.From, To: a.To, Overwrite: a.Overwrite})
	if err != nil {
		return failure("moving", a.From, err), nil, nil
	}
	return textResult(render.Move(resp, render.Options{Face: render.MCP})), nil, nil
}

// fileEdits is one file of edit_file's files form, as the SDK decodes it;
// its edits are read by editShapes, as the single-file form's are.
type fileEdits struct {
	Path  string `json:"path"`
	Edits any    `json:"edits"`
}

// fileEditsSchema is fileEdits as the input schema describes it: its
// edits are those of the single-file form, which the description says
// rather than repeating their schema in every session's tool list.
type fileEditsSchema struct {
	Path  string `json:"path"`
	Edits any    `json:"edits" jsonschema:"As edits"`
}

// editFiles is edit_file with files: one Apply, so that every file's refs
// are checked before any file is written, and a refusal names every
// failing file with its fresh refs.
func (t *tools) editFiles(ctx context.Context, req *sdk.CallToolRequest, a editArgs) (*sdk.CallToolResult, any, error) {
	if a.Path != "" || a.Edits != nil {
		return errorResult("Error editing files: give either path and edits (one file) or files (several), not both. Nothing was written."), nil, nil
	}
	if len(a.Files) == 0 {
		return errorResult("Error editing files: files is empty; give [{path, edits}, ...]. Nothing was written."), nil, nil
	}
	var (
		changes  []*hashlinev1.Change
		warnings []string
		problems []string
	)
	for i, f := range a.Files {
		items, ws, err := editShapes().Decode(f.Edits)
		switch {
		case f.Path == "":
			problems = append(problems, fmt.Sprintf("files[%d] has no path", i))
			continue
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", f.Path, err))
			continue
		case len(items) == 0:
			problems = append(problems, fmt.Sprintf("%s: edits is empty; give at least one edit", f.Path))
			continue
		}
		for _, w := range ws {
			warnings = append(warnings, f.Path+": "+w)
		}
		edits := make([]*hashlinev1.FileEdit, len(items))
		for j, it := range items {
			edits[j] = toFileEdit(it)
		}
		changes = append(changes, &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{Path: f.Path, Edits: edits, Strict: a.Strict}}})
	}
	if len(problems) > 0 {
		return errorResult("Error editing files:\n" + strings.Join(problems, "\n") + "\nNothing was written."), nil, nil
	}
	resp, err := t.c.Apply(t.ctx(ctx, req), &hashlinev1.ApplyRequest{Changes: changes, DryRun: a.DryRun, StrictSyntax: a.StrictSyntax})
	if err != nil {
		res := setFailure(a.Files, err)
		if len(warnings) > 0 {
			tc := res.Content[0].(*sdk.TextContent)
			tc.Text += "\n\nAlso, about the arguments:\n- " + strings.Join(warnings, "\n- ")
		}
		return res, nil, nil
	}
	for i, r := range resp.GetResults() {
		e := r.GetEdit()
		if i == 0 {
			e.Warnings = append(warnings, e.GetWarnings()...)
		}
		e.Warnings = withoutRepairs(e.GetWarnings(), e.GetRepairs())
	}
	return textResult(render.Apply(resp, render.Options{Face: render.MCP})), nil, nil
}

// setFailure is the tool error of a refused edit of several files: every
// failing file with the server's message (for stale refs, the current
// lines with >>> on the changed ones, to retry with), and that nothing was
// written.
func setFailure(files []fileEdits, err error) *sdk.CallToolResult {
	var e *client.Error
	if !errors.As(err, &e) || len(e.Changes) == 0 {
		return failure("editing", "files", err)
	}
	return errorResult(render.RefusedChanges(e.Changes, e.Stale, len(files), render.MCP))
}

// withoutRepairs drops the warnings that repeat a repair: repairs are
// listed once, in their own section.
func withoutRepairs(warnings []string, repairs []*hashlinev1.Repair) []string {
	return slices.DeleteFunc(warnings, func(w string) bool {
		return slices.ContainsFunc(repairs, func(r *hashlinev1.Repair) bool {
			return w == hashline.RepairWarning(int(r.GetEditIndex()), r.GetDetail())
		})
	})
}
