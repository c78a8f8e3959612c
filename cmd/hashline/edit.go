package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/editjson"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "edit", summary: "edit a file by LINE:HASH references (flags, or JSON edits on stdin)", run: runEdit})
}

const editUsage = `usage: hashline edit FILE OPERATION [flags]
       hashline edit FILE [flags] < edits.json

Edits FILE by the LINE:HASH tags that "hashline read" or "hashline grep"
printed. Every reference is checked against the file as it is now; if a
referenced line changed since it was read, nothing is written, the current
lines are printed on stderr with ">>>" on the changed ones, and the exit code
is 5: retry with those fresh tags. On success it prints the new version, how
the other lines' numbers moved, and the change as a diff whose unchanged
(" ") and added ("+") lines carry their fresh tags ("-" lines were removed)
— use those tags next.

One operation from flags (a whole tagged line "12:3f|..." is accepted as a
reference too):
  --replace REF [--end REF] --text TEXT   replace lines REF..END with TEXT
                                          (--text '' deletes them)
  --insert-after REF --text TEXT          insert TEXT after line REF
  --insert-before REF --text TEXT         insert TEXT before line REF
  --delete REF [--end REF]                delete lines REF..END
  --append --text TEXT                    add TEXT at the end of the file
  --prepend --text TEXT                   add TEXT at the start of the file
  --replace-text OLD --with NEW [--all]   replace the exact text OLD (must be
                                          unique unless --all); no tags needed
TEXT may come from --text-file PATH instead, or from stdin when neither is
given (an empty stdin is refused: --text '' or --delete deletes). A trailing
newline in TEXT is optional; use $'a\nb' in bash for several lines.

Or a batch, applied all or nothing: with no operation flag, stdin holds the
API's edits as JSON, either the array or an object with "edits" (and
optionally "baseVersion", "dryRun", "context", "full", "strict",
"strictSyntax"):
  [{"replace": {"start": "4:16", "text": "\tprintln(\"hello\")"}},
   {"insertAfter": {"anchor": "5:18", "text": "// end"}}]
Fields (end and all are optional): replace{start,end,text}
insertAfter{anchor,text} insertBefore{anchor,text} delete{start,end}
append{text} prepend{text} replaceText{oldText,newText,all}. A malformed
batch is refused with the shape expected; one edit object in place of the
array, or the array sent as a JSON string, is taken with a warning.

flags:
  --base-version V  the version the tags were read from (from read's header)
  --dry-run         check and show the result, write nothing
  --context N       lines shown around each change, and around each stale
                    reference of a refusal (default 3)
  --full            print the whole new file instead of the diff
  --diff            print the unified diff too
  --strict          write TEXT exactly as given; without it, slips such as
                    diff markers, pasted tags, a repeated neighbouring line or
                    lost indentation are repaired (each printed as a warning)
                    and a guess is refused showing both readings
  --strict-syntax   refuse the edit, writing nothing, if it would introduce
                    syntax errors into FILE, and print them; without it the
                    server's --syntax decides (by default the edit is
                    written and the errors it introduced are printed)
  --request-id ID   idempotency key (default: a random one per run). A run
                    cut off by --timeout, a lost connection or Ctrl-C may
                    still have applied; it then prints its key, and the same
                    command re-run with --request-id KEY prints the first
                    run's result instead of applying twice (for 10 minutes,
                    per agent; not across --local runs)
` + connHelp

type editFlags struct {
	replace, insertAfter, insertBefore, del, end string
	appendOp, prepend                            bool
	replaceText                                  optString
	with                                         optString
	all                                          bool
	text                                         optString
	textFile                                     string
	baseVersion                                  string
	requestID                                    string
	dryRun, full, diff, strict, strictSyntax     bool
	context                                      int
}

func runEdit(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("edit", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	var f editFlags
	fs.StringVar(&f.replace, "replace", "", "")
	fs.StringVar(&f.insertAfter, "insert-after", "", "")
	fs.StringVar(&f.insertBefore, "insert-before", "", "")
	fs.StringVar(&f.del, "delete", "", "")
	fs.StringVar(&f.end, "end", "", "")
	fs.BoolVar(&f.appendOp, "append", false, "")
	fs.BoolVar(&f.prepend, "prepend", false, "")
	fs.Var(&f.replaceText, "replace-text", "")
	fs.Var(&f.with, "with", "")
	fs.BoolVar(&f.all, "all", false, "")
	fs.Var(&f.text, "text", "")
	fs.StringVar(&f.textFile, "text-file", "", "")
	fs.StringVar(&f.baseVersion, "base-version", "", "")
	fs.StringVar(&f.requestID, "request-id", "", "")
	fs.BoolVar(&f.dryRun, "dry-run", false, "")
	fs.BoolVar(&f.full, "full", false, "")
	fs.BoolVar(&f.diff, "diff", false, "")
	fs.BoolVar(&f.strict, "strict", false, "")
	fs.BoolVar(&f.strictSyntax, "strict-syntax", false, "")
	fs.IntVar(&f.context, "context", -1, "")
	pos, code := parse(fs, io, editUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(io, "edit", "want exactly one FILE, got %d arguments", len(pos))
	}
	req, warnings, msg := f.request(io, pos[0])
	if msg != "" {
		return usageError(io, "edit", "%s", msg)
	}
	for _, w := range warnings {
		fmt.Fprintf(io.stderr, "hashline edit: warning: %s\n", w)
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "edit", err)
	}
	defer done()
	resp, err := c.Edit(ctx, req)
	if err != nil {
		return failMutation(io, "edit", err, req.GetRequestId())
	}
	return printResult(io, "edit", cf.json, resp, func() string { return render.Edit(resp, render.Options{Diff: f.diff}) })
}

// request builds the EditRequest from the flags, or from JSON on stdin when
// no operation flag is given, with warnings about the JSON's shape. A
// non-empty string is a usage problem.
func (f *editFlags) request(io stdio, path string) (*hashlinev1.EditRequest, []string, string) {
	ops := []string{}
	for name, on := range map[string]bool{
		"--replace": f.replace != "", "--insert-after": f.insertAfter != "", "--insert-before": f.insertBefore != "",
		"--delete": f.del != "", "--append": f.appendOp, "--prepend": f.prepend, "--replace-text": f.replaceText.set,
	} {
		if on {
			ops = append(ops, name)
		}
	}
	if len(ops) > 1 {
		return nil, nil, fmt.Sprintf("give one operation per call, got %s; send several as a JSON batch on stdin", strings.Join(slices.Sorted(slices.Values(ops)), " and "))
	}
	req := &hashlinev1.EditRequest{Path: path}
	var warnings []string
	if len(ops) == 0 {
		if f.text.set || f.textFile != "" || f.end != "" || f.with.set || f.all {
			return nil, nil, "--text, --text-file, --end, --with and --all need an operation flag (--replace, --insert-after, ...)"
		}
		in, err := readStdin(io)
		if err != nil {
			return nil, nil, "with no operation flag the edits are read as JSON from stdin, but " + err.Error() + `: give an operation such as --replace REF --text TEXT, or pipe the edits in ([{"replace": {"start": "4:16", "text": "..."}}])`
		}
		var msg string
		if warnings, msg = parseEditsJSON(in, req); msg != "" {
			return nil, nil, msg
		}
	} else {
		op := ops[0]
		if f.end != "" && op != "--replace" && op != "--delete" {
			return nil, nil, "--end goes with --replace or --delete"
		}
		if (f.with.set || f.all) && op != "--replace-text" {
			return nil, nil, "--with and --all go with --replace-text"
		}
		var text string
		if op != "--delete" && op != "--replace-text" {
			var msg string
			if text, msg = f.textArg(io, op); msg != "" {
				return nil, nil, msg
			}
		} else if f.text.set || f.textFile != "" {
			return nil, nil, fmt.Sprintf("%s takes no --text", op)
		}
		var e *hashlinev1.FileEdit
		switch op {
		case "--replace":
			e = client.Replace(f.replace, f.end, text)
		case "--insert-after":
			e = client.InsertAfter(f.insertAfter, text)
		case "--insert-before":
			e = client.InsertBefore(f.insertBefore, text)
		case "--delete":
			e = client.Delete(f.del, f.end)
		case "--append":
			e = client.Append(text)
		case "--prepend":
			e = client.Prepend(text)
		case "--replace-text":
			if !f.with.set {
				return nil, nil, "--replace-text needs --with NEW (--with '' removes the text)"
			}
			e = client.ReplaceText(f.replaceText.value, f.with.value, f.all)
		}
		req.Edits = []*hashlinev1.FileEdit{e}
	}
	if f.baseVersion != "" {
		req.BaseVersion = f.baseVersion
	}
	// One key per run, the same in every retry the client makes; a dry
	// run writes nothing and needs none.
	switch {
	case f.requestID != "":
		req.RequestId = f.requestID
	case req.RequestId == "" && !f.dryRun && !req.DryRun:
		req.RequestId = client.NewRequestID()
	}
	if f.dryRun {
		req.DryRun = true
	}
	if f.full {
		req.Full = true
	}
	if f.strict {
		req.Strict = true
	}
	if f.strictSyntax {
		req.StrictSyntax = true
	}
	if f.context >= 0 {
		n := int32(f.context)
		req.Context = &n
	}
	return req, warnings, ""
}

// textArg returns the TEXT of an operation: --text, --text-file, or stdin.
func (f *editFlags) textArg(io stdio, op string) (string, string) {
	switch {
	case f.text.set && f.textFile != "":
		return "", "--text and --text-file exclude each other"
	case f.text.set:
		return f.text.value, ""
	case f.textFile != "" && f.textFile != "-":
		b, err := os.ReadFile(f.textFile)
		if err != nil {
			return "", "--text-file: " + err.Error()
		}
		return string(b), ""
	}
	in, err := readStdin(io)
	if errors.Is(err, errStdinTerminal) {
		return "", fmt.Sprintf("%s needs its TEXT: give --text TEXT or --text-file PATH, or pipe the text in (stdin is a terminal)", op)
	}
	if err != nil {
		return "", "reading TEXT from stdin: " + err.Error()
	}
	if in == "" {
		// An empty pipe is more often a command upstream that failed
		// than a wish to delete: deleting takes saying so.
		msg := fmt.Sprintf("%s got no TEXT: stdin was empty. Pipe the text in or give --text TEXT", op)
		if op == "--replace" {
			msg += "; to delete the lines, use --delete REF [--end REF] (or --text '')"
		}
		return "", msg
	}
	return in, ""
}

// parseEditsJSON fills req from the API's JSON: an edits array, or an
// EditRequest object. The edits are read by editjson in the API's
// vocabulary (cliEdits), which explains a malformed batch with the
// expected shapes and accepts, with the warnings it returns, one edit
// object in place of the array and an array sent as a JSON string.
func parseEditsJSON(in string, req *hashlinev1.EditRequest) ([]string, string) {
	trimmed := strings.TrimSpace(in)
	if trimmed == "" {
		return nil, "no operation flag and no JSON edits on stdin; see --help for both forms"
	}
	var v any
	if err := json.Unmarshal([]byte(trimmed), &v); err != nil {
		return nil, "edits JSON on stdin: " + err.Error() + `; send an array of edits such as [{"replace": {"start": "4:16", "text": "..."}}], or an object with "edits"`
	}
	edits := v
	if m, ok := v.(map[string]any); ok {
		e, isRequest := m["edits"]
		if !isRequest && !slices.ContainsFunc(slices.Collect(maps.Keys(m)), func(k string) bool { return !requestKeys[k] }) {
			return nil, `the edit request JSON on stdin has no "edits"; give them as "edits": [...]`
		}
		if isRequest {
			rest := maps.Clone(m)
			delete(rest, "edits")
			b, err := json.Marshal(rest)
			if err != nil {
				return nil, "edit request JSON on stdin: " + err.Error()
			}
			path := req.Path
			if err := protojson.Unmarshal(b, req); err != nil {
				return nil, "edit request JSON on stdin: " + protoErr(err)
			}
			if req.Path != "" && req.Path != path {
				return nil, fmt.Sprintf("the JSON names path %q but the command names %q", req.Path, path)
			}
			req.Path = path
			edits = e
		}
	}
	items, warnings, err := cliEdits.Decode(edits)
	if err != nil {
		return nil, "edits JSON on stdin:\n" + err.Error()
	}
	for _, it := range items {
		req.Edits = append(req.Edits, cliEdit(it))
	}
	return warnings, ""
}

// requestKeys are the EditRequest fields besides edits, as protojson reads
// them: an object of only these is a request without edits, not an edit.
var requestKeys = map[string]bool{
	"path": true, "baseVersion": true, "base_version": true, "dryRun": true, "dry_run": true,
	"context": true, "full": true, "requestId": true, "request_id": true,
	"strictSyntax": true, "strict_syntax": true,
}

// cliEdits is the API's FileEdit operations under their JSON names (and
// their proto names), as the JSON on stdin spells them, with the names
// models use for them in other tools.
var cliEdits = &editjson.Vocabulary{Ops: []editjson.Op{
	{Name: "replace", Near: []string{"set_line", "replace_lines", "replace_range", "set_lines"}, Fields: []editjson.Field{
		{Name: "start", Required: true, Example: refExample, Near: []string{"anchor", "start_anchor", "from", "line"}},
		{Name: "end", Example: refExample, Near: []string{"end_anchor", "to", "end_line"}},
		{Name: "text", Required: true, Example: `"..."`, Near: []string{"new_text", "content", "lines"}},
	}},
	{Name: "insertAfter", Aliases: []string{"insert_after"}, Line: "anchor", Near: []string{"add_after", "append_after"}, Fields: []editjson.Field{
		{Name: "anchor", Required: true, Example: refExample, Near: []string{"line", "ref", "start", "after"}},
		{Name: "text", Required: true, Example: `"..."`, Near: []string{"new_text", "content", "lines"}},
	}},
	{Name: "insertBefore", Aliases: []string{"insert_before"}, Line: "anchor", Near: []string{"add_before", "prepend_before"}, Fields: []editjson.Field{
		{Name: "anchor", Required: true, Example: refExample, Near: []string{"line", "ref", "start", "before"}},
		{Name: "text", Required: true, Example: `"..."`, Near: []string{"new_text", "content", "lines"}},
	}},
	{Name: "delete", Near: []string{"remove", "remove_lines", "delete_line", "delete_lines", "delete_range"}, Fields: []editjson.Field{
		{Name: "start", Required: true, Example: refExample, Near: []string{"anchor", "start_anchor", "from", "line"}},
		{Name: "end", Example: refExample, Near: []string{"end_anchor", "to", "end_line"}},
	}},
	{Name: "append", Near: []string{"append_text", "append_lines"}, Fields: []editjson.Field{
		{Name: "text", Required: true, Example: `"..."`, Near: []string{"new_text", "content", "lines"}},
	}},
	{Name: "prepend", Near: []string{"prepend_text", "prepend_lines"}, Fields: []editjson.Field{
		{Name: "text", Required: true, Example: `"..."`, Near: []string{"new_text", "content", "lines"}},
	}},
	{Name: "replaceText", Aliases: []string{"replace_text"}, Near: []string{"str_replace", "search_replace", "find_replace"}, Fields: []editjson.Field{
		{Name: "oldText", Aliases: []string{"old_text"}, Required: true, Example: `"..."`, Near: []string{"old", "search", "find", "old_string"}},
		{Name: "newText", Aliases: []string{"new_text"}, Required: true, Example: `"..."`, Near: []string{"new", "replacement", "new_string"}},
		{Name: "all", Kind: editjson.Bool, Example: "false"},
	}},
}}

const refExample = `"LINE:HASH"`

// cliEdit converts a decoded item.
func cliEdit(it editjson.Item) *hashlinev1.FileEdit {
	switch it.Op {
	case "replace":
		return client.Replace(it.String("start"), it.String("end"), it.String("text"))
	case "insertAfter":
		return client.InsertAfter(it.String("anchor"), it.String("text"))
	case "insertBefore":
		return client.InsertBefore(it.String("anchor"), it.String("text"))
	case "delete":
		return client.Delete(it.String("start"), it.String("end"))
	case "append":
		return client.Append(it.String("text"))
	case "prepend":
		return client.Prepend(it.String("text"))
	case "replaceText":
		return client.ReplaceText(it.String("oldText"), it.String("newText"), it.Bool("all"))
	}
	panic("hashline edit: no conversion for operation " + it.Op) // cliEdits and this switch list the same operations
}

// protoErr returns a protojson error's message with plain spaces: protojson
// randomly uses U+00A0 in its messages so that nobody depends on their exact
// text, and a terminal shows the difference as garbage.
func protoErr(err error) string {
	return strings.ReplaceAll(err.Error(), "\u00a0", " ")
}
