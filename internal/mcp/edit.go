package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/editjson"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/render"
)

// editArgs are edit_file's arguments as the SDK decodes them. Edits is
// left as decoded JSON (arrays, objects, strings) and read by editShapes,
// so that a malformed batch is explained, and an unambiguous one accepted,
// by this package rather than refused by the schema validator.
type editArgs struct {
	Path  string      `json:"path"`
	Edits any         `json:"edits"`
	Files []fileEdits `json:"files,omitempty"`
	// Strict is the API's EditRequest.strict.
	Strict bool `json:"strict,omitempty"`
	// StrictSyntax is the API's strict_syntax: refused, nothing written,
	// if the edit would introduce syntax errors.
	StrictSyntax bool `json:"strict_syntax,omitempty"`
	// DryRun is the API's dry_run: the reply, nothing written.
	DryRun bool `json:"dry_run,omitempty"`
}

// editSchemaArgs are edit_file's arguments as the input schema describes
// them to models: editTool infers the schema from these types, then
// loosens it where editShapes reads the arguments itself.
type editSchemaArgs struct {
	Path string `json:"path,omitempty" jsonschema:"Relative to the workspace root"`
	// Edits' items are described once, in editDescription, which lists
	// the operations an item holds one of.
	Edits []editItem `json:"edits,omitempty"`
	// Files is the several-files form (files.go).
	Files []fileEditsSchema `json:"files,omitempty"`
	// Strict is the API's EditRequest.strict.
	Strict bool `json:"strict,omitempty" jsonschema:"Write texts exactly as sent, no repairs"`
	// StrictSyntax is the API's strict_syntax.
	StrictSyntax bool `json:"strict_syntax,omitempty" jsonschema:"Refuse new syntax errors"`
	// DryRun is the API's dry_run.
	DryRun bool `json:"dry_run,omitempty" jsonschema:"Write nothing"`
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
	Anchor  string `json:"anchor"`
	NewText string `json:"new_text"`
}

// replaceLinesOp needs its end_anchor: a model that leaves it out has
// almost always sent the whole range's new lines, and taking the end to be
// the start would write them over one line and keep the rest (set_line is
// the one-line form).
type replaceLinesOp struct {
	StartAnchor string `json:"start_anchor"`
	EndAnchor   string `json:"end_anchor"`
	NewText     string `json:"new_text"`
}

type insertOp struct {
	Anchor string `json:"anchor"`
	Text   string `json:"text"`
}

type deleteOp struct {
	StartAnchor string `json:"start_anchor"`
	EndAnchor   string `json:"end_anchor,omitempty"`
}

type textOp struct {
	Text string `json:"text"`
}

type replaceOp struct {
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
	All     bool   `json:"all,omitempty"`
}

// editTool declares edit_file, and editShapes its vocabulary. The schema
// is inferred from editSchemaArgs and then loosened where the handler
// reads the arguments itself: edits may be an array, one item or a string
// (accepted with a warning), an item may carry unknown keys, and an
// operation's object may miss fields or have unknown ones; the handler then
// names what is wrong and shows the expected shape, which helps a model
// more than a schema validation error would. Types of known fields are
// still checked by the schema.
func editTool() *sdk.Tool {
	s, _ := editSchema()
	return &sdk.Tool{Name: "edit_file", Description: editDescription + "\n" + filesDescription + "\n\n" + repairsDescription, InputSchema: s}
}

// editShapes is built on first use rather than at init: the schema is
// reflected from Go types, and the hashline CLI, which links this package
// for `hashline mcp`, must not pay for that on every other command.
var editShapes = sync.OnceValue(func() *editjson.Vocabulary {
	_, v := editSchema()
	return v
})

func editSchema() (*jsonschema.Schema, *editjson.Vocabulary) {
	s, err := jsonschema.For[editSchemaArgs](nil)
	if err != nil {
		panic(err) // the types above are static
	}
	edits := s.Properties["edits"]
	item := edits.Items
	voc := &editjson.Vocabulary{}
	for _, name := range editVariants {
		op := item.Properties[name]
		voc.Ops = append(voc.Ops, opShape(name, op))
		op.Required, op.AdditionalProperties = nil, nil
	}
	edits.Type, edits.Types = "", []string{"array", "object", "string"}
	item.AdditionalProperties = nil
	file := s.Properties["files"].Items
	file.Required = []string{"path", "edits"}
	file.AdditionalProperties = nil
	return s, voc
}

// editVariants lists the keys an edit item may have, in the order errors
// name them.
var editVariants = []string{"set_line", "replace_lines", "insert_after", "replace", "insert_before", "delete", "append", "prepend"}

// opShape is the vocabulary entry of operation name, whose schema is op:
// fields, types and required ones from the schema, and what models call
// them otherwise from opExtras and fieldExtras.
func opShape(name string, op *jsonschema.Schema) editjson.Op {
	o := opExtras[name]
	o.Name = name
	for _, f := range op.PropertyOrder {
		fe := fieldExtras[f]
		fe.Name = f
		fe.Required = slices.Contains(op.Required, f)
		if op.Properties[f].Type == "boolean" {
			fe.Kind = editjson.Bool
		}
		o.Fields = append(o.Fields, fe)
	}
	return o
}

// opExtras are the operations' names in other tools and their one-line
// rules; fieldExtras the fields' examples and other names.
var opExtras = map[string]editjson.Op{
	"set_line":      {Line: "anchor", Range: "replace_lines", Near: []string{"set", "edit_line", "update_line", "change_line"}},
	"replace_lines": {Near: []string{"replace_range", "set_lines", "edit_lines", "update_lines", "change_lines"}},
	"insert_after":  {Line: "anchor", Near: []string{"add_after", "append_after"}},
	"insert_before": {Line: "anchor", Near: []string{"add_before", "prepend_before"}},
	"replace":       {Near: []string{"replace_text", "str_replace", "search_replace", "find_replace", "replace_all"}},
	"delete":        {Near: []string{"remove", "remove_lines", "delete_line", "delete_lines", "delete_range"}},
	"append":        {Near: []string{"append_text", "append_lines"}},
	"prepend":       {Near: []string{"prepend_text", "prepend_lines"}},
}

var fieldExtras = map[string]editjson.Field{
	"anchor":       {Example: `"LINE:HASH"`, Near: []string{"line", "ref", "start", "line_ref"}},
	"start_anchor": {Example: `"LINE:HASH"`, Near: []string{"start", "from", "start_line", "first"}},
	"end_anchor":   {Example: `"LINE:HASH"`, Near: []string{"end", "to", "end_line", "last"}},
	"new_text":     {Example: `"..."`, Near: []string{"text", "content", "new_content", "replacement", "lines", "new_lines", "new", "new_string"}},
	"text":         {Example: `"..."`, Near: []string{"content", "lines", "new_lines"}},
	"old_text":     {Example: `"..."`, Near: []string{"old", "search", "find", "old_string"}},
	"all":          {Example: "false"},
}

// toFileEdit converts a decoded item.
func toFileEdit(it editjson.Item) *hashlinev1.FileEdit {
	switch it.Op {
	case "set_line":
		return client.Replace(it.String("anchor"), "", it.String("new_text"))
	case "replace_lines":
		return client.Replace(it.String("start_anchor"), it.String("end_anchor"), it.String("new_text"))
	case "insert_after":
		return client.InsertAfter(it.String("anchor"), it.String("text"))
	case "replace":
		return client.ReplaceText(it.String("old_text"), it.String("new_text"), it.Bool("all"))
	case "insert_before":
		return client.InsertBefore(it.String("anchor"), it.String("text"))
	case "delete":
		return client.Delete(it.String("start_anchor"), it.String("end_anchor"))
	case "append":
		return client.Append(it.String("text"))
	case "prepend":
		return client.Prepend(it.String("text"))
	}
	panic("edit_file: no conversion for operation " + it.Op) // editVariants and this switch list the same operations
}

func (t *tools) edit(ctx context.Context, req *sdk.CallToolRequest, a editArgs) (*sdk.CallToolResult, any, error) {
	if a.Files != nil {
		return t.editFiles(ctx, req, a)
	}
	if a.Path == "" || a.Edits == nil {
		// The schema cannot require them: the files form has neither.
		return errorResult(fmt.Sprintf("Error editing %s: give path and edits (or files: [{path, edits}] for several files). Nothing was written.", a.Path)), nil, nil
	}
	items, warnings, err := editShapes().Decode(a.Edits)
	if err != nil {
		return errorResult(fmt.Sprintf("Error editing %s: %v\nNothing was written.", a.Path, err)), nil, nil
	}
	if len(items) == 0 {
		return errorResult(fmt.Sprintf("Error editing %s: edits is empty; give at least one edit (set_line, replace_lines, insert_after, ...)", a.Path)), nil, nil
	}
	edits := make([]*hashlinev1.FileEdit, len(items))
	for i, it := range items {
		edits[i] = toFileEdit(it)
	}
	resp, err := t.c.Edit(t.ctx(ctx, req), &hashlinev1.EditRequest{Path: a.Path, Edits: edits, Strict: a.Strict, StrictSyntax: a.StrictSyntax, DryRun: a.DryRun})
	if err != nil {
		res := failure("editing", a.Path, err)
		if len(warnings) > 0 {
			tc := res.Content[0].(*sdk.TextContent)
			tc.Text += "\n\nAlso, about the arguments:\n- " + strings.Join(warnings, "\n- ")
		}
		return res, nil, nil
	}
	// Repairs are listed once, in their own section, not also among the
	// warnings where the API repeats them for text clients.
	repairs := resp.GetRepairs()
	resp.Warnings = append(warnings, slices.DeleteFunc(resp.GetWarnings(), func(w string) bool {
		return slices.ContainsFunc(repairs, func(r *hashlinev1.Repair) bool {
			return w == hashline.RepairWarning(int(r.GetEditIndex()), r.GetDetail())
		})
	})...)
	return textResult(render.Edit(resp, render.Options{Face: render.MCP})), nil, nil
}
