package main

import (
	"context"
	"flag"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "write", summary: "create or overwrite a whole file with stdin", run: runWrite})
}

const writeUsage = `usage: hashline write FILE [--create | --replace] [--expected-version V] [--strict-syntax] < content

Writes stdin to FILE, byte for byte, atomically. Missing parent directories
are created. Prints the new version:

  Created notes.txt (3 lines, version v2-…)

flags:
  --create              fail (ALREADY_EXISTS) if FILE exists
  --replace             fail (NOT_FOUND) if FILE does not exist
  --expected-version V  write only if FILE is still at version V (from read);
                        else exit 5: read again and retry
  --content TEXT        the content, instead of stdin
  --strict-syntax       refuse the write, writing nothing, if the content
                        would have syntax errors FILE did not have, and
                        print them; without it the server's --syntax
                        decides (by default the content is written and the
                        errors printed)
  --request-id ID       idempotency key (default: a random one per run); a
                        write cut off by --timeout may still have landed: it
                        prints its key, and the same command re-run with
                        --request-id KEY prints the first run's result
                        instead of writing again (for 10 minutes, per agent)
` + connHelp

func runWrite(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("write", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	create := fs.Bool("create", false, "")
	replace := fs.Bool("replace", false, "")
	expected := fs.String("expected-version", "", "")
	requestID := fs.String("request-id", "", "")
	strictSyntax := fs.Bool("strict-syntax", false, "")
	var content optString
	fs.Var(&content, "content", "")
	pos, code := parse(fs, io, writeUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(io, "write", "want exactly one FILE, got %d arguments", len(pos))
	}
	if *create && *replace {
		return usageError(io, "write", "--create and --replace exclude each other (neither means create or overwrite)")
	}
	mode := hashlinev1.WriteMode_WRITE_MODE_UPSERT
	switch {
	case *create:
		mode = hashlinev1.WriteMode_WRITE_MODE_CREATE
	case *replace:
		mode = hashlinev1.WriteMode_WRITE_MODE_REPLACE
	}
	text := content.value
	if !content.set {
		var err error
		if text, err = readStdin(io); err != nil {
			return usageError(io, "write", "the content is read from stdin, but %v: pipe it in, or give --content TEXT", err)
		}
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "write", err)
	}
	defer done()
	if *requestID == "" {
		*requestID = client.NewRequestID()
	}
	w, err := c.Write(ctx, &hashlinev1.WriteRequest{Path: pos[0], Content: text, Mode: mode, ExpectedVersion: *expected, RequestId: *requestID, StrictSyntax: *strictSyntax})
	if err != nil {
		return failMutation(io, "write", err, *requestID)
	}
	return printResult(io, "write", cf.json, w, func() string { return render.Write(w, render.Options{}) })
}

// optString is a string flag that remembers whether it was given, so that
// an explicit empty value ("--text ”") differs from a missing one.
type optString struct {
	value string
	set   bool
}

func (o *optString) String() string { return o.value }

func (o *optString) Set(v string) error {
	o.value, o.set = v, true
	return nil
}
