package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "apply", summary: "apply a change set (edits, writes, deletes, moves) from stdin, all or nothing", run: runApply})
}

const applyUsage = `usage: hashline apply [--dry-run] [--strict-syntax] < changes.json

Applies a change set read from stdin as JSON: edits, writes, deletes and
moves of several files, all or nothing. Every change is checked first (an
edit's refs as "hashline edit" checks them); if any fails, nothing is
written, every failing change is printed with what to do, and the exit code
is 5 when all of them are stale refs or versions (retry with the fresh tags
printed), else 1. A path may be touched by one change only.

The JSON is the API's ApplyRequest; each change holds one of edit, write,
delete or move, whose fields are those of "hashline edit"'s JSON and of
the write, rm and mv commands:
  {"changes": [
    {"edit":   {"path": "main.go", "edits": [{"replace": {"start": "4:16", "text": "x"}}]}},
    {"write":  {"path": "util.go", "content": "package main\n"}},
    {"delete": {"path": "old.go"}},
    {"move":   {"from": "a.go", "to": "pkg/a.go"}}
  ]}
An edit also takes baseVersion, context, full and strict; a write mode
("WRITE_MODE_CREATE", "WRITE_MODE_REPLACE") and expectedVersion; a delete
expectedVersion; a move expectedVersion and overwrite. The array of changes
alone is accepted too. Prints one line per change (an edit's tagged diff,
with the fresh refs, as "hashline edit" prints it), then a summary line.

flags:
  --dry-run        check and show the result, write nothing
  --diff           print each edit's unified diff too
  --strict-syntax  refuse the whole set, writing nothing, if an edit or
                   write of it would introduce syntax errors, and print
                   them (the set's "strictSyntax", or an edit's or write's
                   own, does the same); without it the server's --syntax
                   decides
  --request-id ID  idempotency key (default: a random one per run); a set
                   cut off by --timeout may still have been applied: it
                   prints its key, and the same command re-run with
                   --request-id KEY prints the first run's result instead
                   of applying twice (for 10 minutes, per agent)
` + connHelp

func runApply(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	dryRun := fs.Bool("dry-run", false, "")
	diff := fs.Bool("diff", false, "")
	strictSyntax := fs.Bool("strict-syntax", false, "")
	requestID := fs.String("request-id", "", "")
	pos, code := parse(fs, io, applyUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 0 {
		return usageError(io, "apply", "takes no arguments (the change set is read from stdin), got %d", len(pos))
	}
	in, err := readStdin(io)
	if err != nil {
		return usageError(io, "apply", "the change set is read as JSON from stdin, but %v: pipe it in (see --help for its shape)", err)
	}
	req, warnings, msg := parseApplyJSON(in)
	if msg != "" {
		return usageError(io, "apply", "%s", msg)
	}
	for _, w := range warnings {
		fmt.Fprintf(io.stderr, "hashline apply: warning: %s\n", w)
	}
	if *dryRun {
		req.DryRun = true
	}
	if *strictSyntax {
		req.StrictSyntax = true
	}
	switch {
	case *requestID != "":
		req.RequestId = *requestID
	case req.RequestId == "" && !req.DryRun:
		req.RequestId = client.NewRequestID()
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "apply", err)
	}
	defer done()
	resp, err := c.Apply(ctx, req)
	if err != nil {
		return failApply(io, err, req.GetRequestId())
	}
	return printResult(io, "apply", cf.json, resp, func() string { return render.Apply(resp, render.Options{Diff: *diff}) })
}

// failApply prints a refused change set, every failing change with what to
// do, and returns exitStale when every failure is a stale ref or version:
// retrying with the fresh tags printed fixes the set. Any other error is
// printed as the other commands print theirs.
func failApply(io stdio, err error, id string) int {
	var e *client.Error
	if !errors.As(err, &e) || len(e.Changes) == 0 {
		return failMutation(io, "apply", err, id)
	}
	fmt.Fprint(io.stderr, client.FormatChangeErrors(err))
	stale := !slices.ContainsFunc(e.Changes, func(c *hashlinev1.ChangeError) bool {
		return c.GetReason() != client.ErrStaleRef.Reason && c.GetReason() != client.ErrVersionMismatch.Reason
	})
	if stale {
		fmt.Fprintln(io.stderr, "Retry the whole set with the refs above (or read the files again).")
		return exitStale
	}
	fmt.Fprintln(io.stderr, "Fix the changes above and send the whole set again.")
	return exitError
}

// changeKinds are the keys of a change, and what models and scripts call
// them otherwise (named in the error, never guessed).
var changeKinds = map[string][]string{
	"edit":   {"patch", "update", "modify"},
	"write":  {"create", "put", "overwrite"},
	"delete": {"remove", "rm", "unlink"},
	"move":   {"rename", "mv"},
}

// parseApplyJSON reads a change set: an ApplyRequest object, or the array
// of its changes. An edit's edits are read as "hashline edit" reads them
// (parseEditsJSON), with its forgiveness and warnings; the rest is
// protojson, which takes both the JSON names (baseVersion) and the proto
// names (base_version). Every bad change is reported at once, by index.
func parseApplyJSON(in string) (*hashlinev1.ApplyRequest, []string, string) {
	trimmed := strings.TrimSpace(in)
	if trimmed == "" {
		return nil, nil, `no change set on stdin; send {"changes": [{"edit": {...}}, {"write": {...}}, {"delete": {...}}, {"move": {...}}]} (see --help)`
	}
	var v any
	if err := json.Unmarshal([]byte(trimmed), &v); err != nil {
		return nil, nil, "change set JSON on stdin: " + err.Error() + `; send {"changes": [...]}, each change one of {"edit": {"path", "edits"}}, {"write": {"path", "content"}}, {"delete": {"path"}}, {"move": {"from", "to"}}`
	}
	req := &hashlinev1.ApplyRequest{}
	changes := v
	if m, ok := v.(map[string]any); ok {
		cs, has := m["changes"]
		if !has {
			return nil, nil, `the change set JSON on stdin has no "changes"; give them as {"changes": [...]}`
		}
		rest := maps.Clone(m)
		delete(rest, "changes")
		if msg := protoFrom(rest, req); msg != "" {
			return nil, nil, "change set JSON on stdin: " + msg
		}
		changes = cs
	}
	list, ok := changes.([]any)
	if !ok {
		return nil, nil, fmt.Sprintf(`"changes" must be an array of changes, not %s`, jsonKind(changes))
	}
	if len(list) == 0 {
		return nil, nil, `"changes" is empty; give at least one change`
	}
	var warnings, problems []string
	for i, c := range list {
		ch, ws, msg := parseChange(c)
		if msg != "" {
			problems = append(problems, fmt.Sprintf("change %d: %s", i, msg))
			continue
		}
		for _, w := range ws {
			warnings = append(warnings, fmt.Sprintf("change %d: %s", i, w))
		}
		req.Changes = append(req.Changes, ch)
	}
	if len(problems) > 0 {
		return nil, nil, "change set JSON on stdin:\n" + strings.Join(problems, "\n")
	}
	return req, warnings, ""
}

// parseChange reads one change: an object with exactly one of edit,
// write, delete and move.
func parseChange(c any) (*hashlinev1.Change, []string, string) {
	m, ok := c.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, nil, fmt.Sprintf(`want an object with one of "edit", "write", "delete" or "move", got %s`, jsonShape(c))
	}
	var kind string
	var body any
	for k, b := range m {
		kind, body = k, b
	}
	if _, known := changeKinds[kind]; !known {
		for k, near := range changeKinds {
			if k == strings.ToLower(kind) || slices.Contains(near, strings.ToLower(kind)) {
				return nil, nil, fmt.Sprintf(`unknown change %q: did you mean %q?`, kind, k)
			}
		}
		return nil, nil, fmt.Sprintf(`unknown change %q; a change is one of "edit", "write", "delete" or "move"`, kind)
	}
	obj, ok := body.(map[string]any)
	if !ok {
		return nil, nil, fmt.Sprintf(`%q must be an object, not %s`, kind, jsonKind(body))
	}
	switch kind {
	case "edit":
		path, _ := obj["path"].(string)
		if path == "" {
			return nil, nil, `the edit has no "path"`
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, nil, err.Error()
		}
		req := &hashlinev1.EditRequest{Path: path}
		ws, msg := parseEditsJSON(string(b), req)
		if msg != "" {
			msg = strings.ReplaceAll(msg, "edits JSON on stdin", "edits")
			msg = strings.ReplaceAll(msg, "edit request JSON on stdin", "edit")
			if strings.Contains(msg, "unknown field") {
				msg += "; " + fieldsHint("an edit", req)
			}
			return nil, nil, msg
		}
		return &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: req}}, ws, ""
	case "write":
		req := &hashlinev1.WriteRequest{}
		if msg := protoFrom(obj, req); msg != "" {
			return nil, nil, "write: " + msg + "; " + fieldsHint("a write", req)
		}
		if _, has := obj["content"]; !has {
			return nil, nil, `the write has no "content" (give "" for an empty file)`
		}
		return &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: req}}, nil, ""
	case "delete":
		req := &hashlinev1.DeleteRequest{}
		if msg := protoFrom(obj, req); msg != "" {
			return nil, nil, "delete: " + msg + "; " + fieldsHint("a delete", req)
		}
		return &hashlinev1.Change{Change: &hashlinev1.Change_Delete{Delete: req}}, nil, ""
	default:
		req := &hashlinev1.MoveRequest{}
		if msg := protoFrom(obj, req); msg != "" {
			return nil, nil, "move: " + msg + "; " + fieldsHint("a move", req)
		}
		return &hashlinev1.Change{Change: &hashlinev1.Change_Move{Move: req}}, nil, ""
	}
}

// protoFrom fills m from a decoded JSON object by protojson; a non-empty
// string is what is wrong.
func protoFrom(obj map[string]any, m proto.Message) string {
	b, err := json.Marshal(obj)
	if err != nil {
		return err.Error()
	}
	if err := protojson.Unmarshal(b, m); err != nil {
		return protoErr(err)
	}
	return ""
}

// fieldsHint names the fields a change of kind has (m's, under their JSON
// names; request_id aside, the set has one), and a write's modes: what a
// refusal of a misspelt or mistyped field shows to fix it.
func fieldsHint(kind string, m proto.Message) string {
	fields := m.ProtoReflect().Descriptor().Fields()
	var names []string
	var modes string
	for i := range fields.Len() {
		f := fields.Get(i)
		if f.Name() == "request_id" {
			continue
		}
		names = append(names, f.JSONName())
		if e := f.Enum(); e != nil && f.Name() == "mode" {
			var vs []string
			for j := 1; j < e.Values().Len(); j++ { // the first is UNSPECIFIED
				vs = append(vs, fmt.Sprintf("%q", e.Values().Get(j).Name()))
			}
			modes = "; mode is one of " + strings.Join(vs, ", ")
		}
	}
	return kind + " has " + strings.Join(names, ", ") + modes
}

// jsonKind names a decoded JSON value's type.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// jsonShape describes a change that is not one object with one key.
func jsonShape(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return jsonKind(v)
	}
	if len(m) == 0 {
		return "an empty object"
	}
	return fmt.Sprintf("an object with %s", strings.Join(slices.Sorted(maps.Keys(m)), ", "))
}
