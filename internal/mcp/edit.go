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
)

// editArgs are edit_file's arguments.
type editArgs struct {
	Path  string     `json:"path" jsonschema:"Relative to the workspace root"`
	Edits []editItem `json:"edits" jsonschema:"Each with one operation"`
}

// editItem is one edit: exactly one field is set. The first four are the
// published hashline shapes; the rest are this server's additions. The
// operations and their fields are described once, in editDescription:
// tools/list is paid for in every session.
type editItem struct {
	SetLine      *setLineOp      `json:"set_line,omitempty"`
	ReplaceLines *replaceLinesOp `json:"replace_lines,omitempty"`
	InsertAfter  *insertOp       `json:"insert_after,omitempty"`
	Replace      *replaceOp      `json:"replace,omitempty"`
	InsertBefore *insertOp       `json:"insert_before,omitempty"`
	Delete       *deleteOp       `json:"delete,omitempty"`
	Append       *textOp         `json:"append,omitempty"`
	Prepend      *textOp         `json:"prepend,omitempty"`
}

type setLineOp struct {
	Anchor  string `json:"anchor" jsonschema:"LINE:HASH"`
	NewText string `json:"new_text"`
}

type replaceLinesOp struct {
	StartAnchor string `json:"start_anchor" jsonschema:"LINE:HASH"`
	EndAnchor   string `json:"end_anchor,omitempty" jsonschema:"LINE:HASH"`
	NewText     string `json:"new_text"`
}

type insertOp struct {
	Anchor string `json:"anchor" jsonschema:"LINE:HASH"`
	Text   string `json:"text"`
}

type deleteOp struct {
	StartAnchor string `json:"start_anchor" jsonschema:"LINE:HASH"`
	EndAnchor   string `json:"end_anchor,omitempty" jsonschema:"LINE:HASH"`
}

type textOp struct {
	Text string `json:"text"`
}

type replaceOp struct {
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
	All     bool   `json:"all,omitempty"`
}

// editTool declares edit_file. Its schema is inferred from editArgs, except
// that an edit item may carry unknown keys: the handler then names the
// item and the keys it expected, which helps a model more than a schema
// validation error would. An operation's own object keeps refusing unknown
// keys: an "end" for "end_anchor" ignored would edit one line instead of a
// range. An operation is an object, not the inferred "null or object" of a
// pointer: a null operation means nothing.
func editTool() *sdk.Tool {
	s, err := jsonschema.For[editArgs](nil)
	if err != nil {
		panic(err) // the types above are static
	}
	item := s.Properties["edits"].Items
	item.AdditionalProperties = nil
	for _, op := range item.Properties {
		op.Types, op.Type = nil, "object"
	}
	s.Properties["edits"].Types, s.Properties["edits"].Type = nil, "array"
	return &sdk.Tool{Name: "edit_file", Description: editDescription, InputSchema: s}
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
	resp, err := t.c.Edit(t.ctx(ctx, req), &hashlinev1.EditRequest{Path: a.Path, Edits: edits})
	if err != nil {
		return failure("editing", a.Path, err), nil, nil
	}
	return textResult(formatEdit(resp)), nil, nil
}
