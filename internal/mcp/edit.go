package mcp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
)

// editArgs are edit_file's arguments.
type editArgs struct {
	Path  string     `json:"path" jsonschema:"File path, relative to the workspace root (or absolute inside it)"`
	Edits []editItem `json:"edits" jsonschema:"Edit operations, each an object with exactly one of the keys below; all refer to the file as last read"`
	// Strict is the API's EditRequest.strict.
	Strict bool `json:"strict,omitempty" jsonschema:"Write every text exactly as sent, without repairs (default false)"`
}

// editItem is one edit: exactly one field is set. The first four are the
// published hashline shapes; the rest are this server's additions.
type editItem struct {
	SetLine      *setLineOp      `json:"set_line,omitempty" jsonschema:"Replace a single line"`
	ReplaceLines *replaceLinesOp `json:"replace_lines,omitempty" jsonschema:"Replace a range of lines, inclusive"`
	InsertAfter  *insertOp       `json:"insert_after,omitempty" jsonschema:"Insert lines after the anchor line"`
	Replace      *replaceOp      `json:"replace,omitempty" jsonschema:"Replace exact text (fallback when refs are unavailable)"`
	InsertBefore *insertOp       `json:"insert_before,omitempty" jsonschema:"Insert lines before the anchor line"`
	Delete       *deleteOp       `json:"delete,omitempty" jsonschema:"Delete a line or a range of lines"`
	Append       *textOp         `json:"append,omitempty" jsonschema:"Add lines at the end of the file"`
	Prepend      *textOp         `json:"prepend,omitempty" jsonschema:"Add lines at the start of the file"`
}

type setLineOp struct {
	Anchor  string `json:"anchor" jsonschema:"Line reference \"LINE:HASH\""`
	NewText string `json:"new_text" jsonschema:"Replacement content (\\n-separated); \"\" deletes the line"`
}

type replaceLinesOp struct {
	StartAnchor string `json:"start_anchor" jsonschema:"Start line ref \"LINE:HASH\""`
	EndAnchor   string `json:"end_anchor,omitempty" jsonschema:"End line ref \"LINE:HASH\" (default: start_anchor)"`
	NewText     string `json:"new_text" jsonschema:"Replacement content (\\n-separated); \"\" deletes the range"`
}

type insertOp struct {
	Anchor string `json:"anchor" jsonschema:"Line reference \"LINE:HASH\""`
	Text   string `json:"text" jsonschema:"Content to insert (\\n-separated); must be non-empty"`
}

type deleteOp struct {
	StartAnchor string `json:"start_anchor" jsonschema:"First line to delete, \"LINE:HASH\""`
	EndAnchor   string `json:"end_anchor,omitempty" jsonschema:"Last line to delete, \"LINE:HASH\" (default: start_anchor)"`
}

type textOp struct {
	Text string `json:"text" jsonschema:"Content to add (\\n-separated); must be non-empty"`
}

type replaceOp struct {
	OldText string `json:"old_text" jsonschema:"Exact text to find (line endings aside); must be unique unless all is true"`
	NewText string `json:"new_text" jsonschema:"Replacement text"`
	All     bool   `json:"all,omitempty" jsonschema:"Replace every occurrence (default: a unique match is required)"`
}

// editTool declares edit_file. Its schema is inferred from editArgs, except
// that an edit item may carry unknown keys: the handler then names the
// item and the keys it expected, which helps a model more than a schema
// validation error would.
func editTool() *sdk.Tool {
	s, err := jsonschema.For[editArgs](nil)
	if err != nil {
		panic(err) // the types above are static
	}
	item := s.Properties["edits"].Items
	item.AdditionalProperties = nil
	item.Description = "Exactly one of: set_line, replace_lines, insert_after, replace, insert_before, delete, append, prepend"
	return &sdk.Tool{Name: "edit_file", Description: editDescription + "\n\n" + repairsDescription, InputSchema: s}
}

// editVariants lists the keys an edit item may have, in the order errors
// name them.
var editVariants = []string{"set_line", "replace_lines", "insert_after", "replace", "insert_before", "delete", "append", "prepend"}

// toFileEdits converts the items, or explains every bad one at once. raw
// holds the same items as JSON objects, with the keys editItem lacks (the
// schema lets an item carry them so that this can name them).
func toFileEdits(items []editItem, raw []map[string]any) ([]*hashlinev1.FileEdit, error) {
	out := make([]*hashlinev1.FileEdit, 0, len(items))
	var problems []string
	for i, it := range items {
		var set []*hashlinev1.FileEdit
		if op := it.SetLine; op != nil {
			set = append(set, client.Replace(op.Anchor, "", op.NewText))
		}
		if op := it.ReplaceLines; op != nil {
			set = append(set, client.Replace(op.StartAnchor, op.EndAnchor, op.NewText))
		}
		if op := it.InsertAfter; op != nil {
			set = append(set, client.InsertAfter(op.Anchor, op.Text))
		}
		if op := it.Replace; op != nil {
			set = append(set, client.ReplaceText(op.OldText, op.NewText, op.All))
		}
		if op := it.InsertBefore; op != nil {
			set = append(set, client.InsertBefore(op.Anchor, op.Text))
		}
		if op := it.Delete; op != nil {
			set = append(set, client.Delete(op.StartAnchor, op.EndAnchor))
		}
		if op := it.Append; op != nil {
			set = append(set, client.Append(op.Text))
		}
		if op := it.Prepend; op != nil {
			set = append(set, client.Prepend(op.Text))
		}
		switch unknown := unknownKeys(raw, i); {
		case len(set) == 1 && len(unknown) > 0:
			// An operation misspelt beside a good one, or a field put beside
			// its operation instead of in it: applying the good one alone
			// would change the file in a way nobody asked for.
			hint := ""
			if slices.ContainsFunc(unknown, func(k string) bool { return slices.Contains(opFields, k) }) {
				hint = ` An operation's fields go inside its object, e.g. {"replace_lines": {"start_anchor": "2:f4", "end_anchor": "3:f8", "new_text": "..."}}.`
			}
			problems = append(problems, fmt.Sprintf("edits[%d] has %s and unknown keys [%s]; an item holds exactly one of: %s, and nothing else.%s",
				i, strings.Join(known(raw, i), ", "), strings.Join(unknown, ", "), strings.Join(editVariants, ", "), hint))
		case len(set) == 1:
			out = append(out, set[0])
			continue
		case len(set) > 1:
			problems = append(problems, fmt.Sprintf("edits[%d] has %d operations (%s); put each in its own item", i, len(set), strings.Join(known(raw, i), ", ")))
		default:
			keys := itemKeys(raw, i)
			hint := ""
			if slices.Contains(keys, "old_text") || slices.Contains(keys, "new_text") || slices.Contains(keys, "anchor") {
				hint = ` Wrap the fields in their operation, e.g. {"set_line": {"anchor": "5:ab", "new_text": "..."}} or {"replace": {"old_text": "...", "new_text": "..."}}.`
			}
			problems = append(problems, fmt.Sprintf("edits[%d] must contain one of: %s; got keys [%s].%s", i, strings.Join(editVariants, ", "), strings.Join(keys, ", "), hint))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return out, nil
}

// opFields are the keys of the operations' own objects.
var opFields = []string{"anchor", "new_text", "start_anchor", "end_anchor", "text", "old_text", "all"}

// itemKeys lists, sorted, the keys of item i of raw (none if raw does not
// hold it).
func itemKeys(raw []map[string]any, i int) []string {
	if i >= len(raw) {
		return nil
	}
	return slices.Sorted(maps.Keys(raw[i]))
}

// unknownKeys lists, sorted, the keys of item i of raw that are not
// operations.
func unknownKeys(raw []map[string]any, i int) []string {
	return slices.DeleteFunc(itemKeys(raw, i), func(k string) bool { return slices.Contains(editVariants, k) })
}

// known lists the operation keys item i of raw has.
func known(raw []map[string]any, i int) []string {
	var ks []string
	if i >= len(raw) {
		return ks
	}
	for _, k := range editVariants {
		if v, ok := raw[i][k]; ok && v != nil {
			ks = append(ks, k)
		}
	}
	return ks
}

func (t *tools) edit(ctx context.Context, req *sdk.CallToolRequest, a editArgs) (*sdk.CallToolResult, any, error) {
	if len(a.Edits) == 0 {
		return errorResult(fmt.Sprintf("Error editing %s: edits is empty; give at least one edit (set_line, replace_lines, insert_after, ...)", a.Path)), nil, nil
	}
	// The SDK has decoded and validated the arguments; the items' keys are
	// read again only to see those editItem has no field for.
	var raw struct {
		Edits []map[string]any `json:"edits"`
	}
	_ = jsonUnmarshal(req, &raw)
	edits, err := toFileEdits(a.Edits, raw.Edits)
	if err != nil {
		return errorResult(fmt.Sprintf("Error editing %s: %v", a.Path, err)), nil, nil
	}
	resp, err := t.c.Edit(t.ctx(ctx, req), &hashlinev1.EditRequest{Path: a.Path, Edits: edits, Strict: a.Strict})
	if err != nil {
		return failure("editing", a.Path, err), nil, nil
	}
	// Repairs are listed once, in their own section, not also among the
	// warnings where the API repeats them for text clients.
	repairs := resp.GetRepairs()
	resp.Warnings = slices.DeleteFunc(resp.Warnings, func(w string) bool {
		return slices.ContainsFunc(repairs, func(r *hashlinev1.Repair) bool {
			return w == hashline.RepairWarning(int(r.GetEditIndex()), r.GetDetail())
		})
	})
	return textResult(formatEdit(resp) + formatRepairs(repairs)), nil, nil
}

// formatRepairs lists the repairs of an edit's texts, one short line each
// (the detail without its advice, which the heading gives once).
func formatRepairs(rs []*hashlinev1.Repair) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nRepaired (send plain lines next time; strict: true writes a text exactly as sent):")
	for _, r := range rs {
		detail, _, _ := strings.Cut(r.GetDetail(), " — ")
		fmt.Fprintf(&b, "\n- edit %d: %s", r.GetEditIndex(), detail)
	}
	return b.String()
}
