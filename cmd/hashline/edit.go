package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
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
given. A trailing newline in TEXT is optional; use $'a\nb' in bash for
several lines.

Or a batch, applied all or nothing: with no operation flag, stdin holds the
API's edits as JSON, either the array or an object with "edits" (and
optionally "baseVersion", "dryRun", "context", "full"):
  [{"replace": {"start": "4:16", "text": "\tprintln(\"hello\")"}},
   {"insertAfter": {"anchor": "5:18", "text": "// end"}}]
Fields: replace{start,end,text} insertAfter{anchor,text}
insertBefore{anchor,text} delete{start,end} append{text} prepend{text}
replaceText{oldText,newText,all}.

flags:
  --base-version V  the version the tags were read from (from read's header)
  --dry-run         check and show the result, write nothing
  --context N       lines shown around each change, and around each stale
                    reference of a refusal (default 3)
  --full            print the whole new file instead of the diff
  --diff            print the unified diff too
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
	dryRun, full, diff                           bool
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
	fs.IntVar(&f.context, "context", -1, "")
	pos, code := parse(fs, io, editUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(io, "edit", "want exactly one FILE, got %d arguments", len(pos))
	}
	req, msg := f.request(io, pos[0])
	if msg != "" {
		return usageError(io, "edit", "%s", msg)
	}
	c, done, err := cf.connect()
	if err != nil {
		return fail(io, "edit", err)
	}
	defer done()
	resp, err := c.Edit(ctx, req)
	if err != nil {
		return failMutation(io, "edit", err, req.GetRequestId())
	}
	return printResult(io, "edit", cf.json, resp, func() string { return client.FormatEdit(resp, f.diff) })
}

// request builds the EditRequest from the flags, or from JSON on stdin when
// no operation flag is given. A non-empty string is a usage problem.
func (f *editFlags) request(io stdio, path string) (*hashlinev1.EditRequest, string) {
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
		return nil, fmt.Sprintf("give one operation per call, got %s; send several as a JSON batch on stdin", strings.Join(slices.Sorted(slices.Values(ops)), " and "))
	}
	req := &hashlinev1.EditRequest{Path: path}
	if len(ops) == 0 {
		if f.text.set || f.textFile != "" || f.end != "" || f.with.set || f.all {
			return nil, "--text, --text-file, --end, --with and --all need an operation flag (--replace, --insert-after, ...)"
		}
		in, err := readStdin(io)
		if err != nil {
			return nil, "no operation flag, so the edits are read as JSON from stdin, but " + err.Error()
		}
		if msg := parseEditsJSON(in, req); msg != "" {
			return nil, msg
		}
	} else {
		op := ops[0]
		if f.end != "" && op != "--replace" && op != "--delete" {
			return nil, "--end goes with --replace or --delete"
		}
		if (f.with.set || f.all) && op != "--replace-text" {
			return nil, "--with and --all go with --replace-text"
		}
		var text string
		if op != "--delete" && op != "--replace-text" {
			var msg string
			if text, msg = f.textArg(io, op); msg != "" {
				return nil, msg
			}
		} else if f.text.set || f.textFile != "" {
			return nil, fmt.Sprintf("%s takes no --text", op)
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
				return nil, "--replace-text needs --with NEW (--with '' removes the text)"
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
	if f.context >= 0 {
		n := int32(f.context)
		req.Context = &n
	}
	return req, ""
}

// textArg returns the TEXT of an operation: --text, --text-file, or stdin.
func (f *editFlags) textArg(io stdio, op string) (string, string) {
	switch {
	case f.text.set && f.textFile != "":
		return "", "--text and --text-file exclude each other"
	case f.text.set:
		return f.text.value, ""
	case f.textFile == "-":
		in, err := readStdin(io)
		if err != nil {
			return "", "--text-file -: " + err.Error()
		}
		return in, ""
	case f.textFile != "":
		b, err := os.ReadFile(f.textFile)
		if err != nil {
			return "", "--text-file: " + err.Error()
		}
		return string(b), ""
	}
	in, err := readStdin(io)
	if err != nil {
		return "", fmt.Sprintf("%s needs --text TEXT (or --text-file PATH); with neither, TEXT is read from stdin, but %v", op, err)
	}
	return in, ""
}

// parseEditsJSON fills req from the API's JSON: an edits array, or an
// EditRequest object.
func parseEditsJSON(in string, req *hashlinev1.EditRequest) string {
	trimmed := strings.TrimSpace(in)
	if trimmed == "" {
		return "no operation flag and no JSON edits on stdin; see --help for both forms"
	}
	opts := protojson.UnmarshalOptions{}
	if strings.HasPrefix(trimmed, "[") {
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(trimmed), &raw); err != nil {
			return "edits JSON on stdin: " + err.Error()
		}
		for i, r := range raw {
			e := &hashlinev1.FileEdit{}
			if err := opts.Unmarshal(r, e); err != nil {
				return fmt.Sprintf("edits JSON on stdin, edit %d: %s", i, protoErr(err))
			}
			req.Edits = append(req.Edits, e)
		}
		return ""
	}
	path := req.Path
	if err := opts.Unmarshal([]byte(trimmed), req); err != nil {
		return "edit request JSON on stdin: " + protoErr(err)
	}
	if req.Path != "" && req.Path != path {
		return fmt.Sprintf("the JSON names path %q but the command names %q", req.Path, path)
	}
	req.Path = path
	return ""
}

// protoErr returns a protojson error's message with plain spaces: protojson
// randomly uses U+00A0 in its messages so that nobody depends on their exact
// text, and a terminal shows the difference as garbage.
func protoErr(err error) string {
	return strings.ReplaceAll(err.Error(), "\u00a0", " ")
}
