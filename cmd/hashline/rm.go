package main

import (
	"context"
	"flag"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "rm", summary: "delete a file or an empty directory", run: runRm})
	register(&command{name: "mv", summary: "move (rename) a file; its refs and history move with it", run: runMv})
}

const rmUsage = `usage: hashline rm PATH [--expect VERSION]

Deletes the file PATH, or PATH if it is an empty directory (a directory
with entries is refused: DIRECTORY_NOT_EMPTY). Never the workspace root, a
symbolic link or version-control metadata. Prints what was deleted:

  Deleted old.txt (was version v2-…)

flags:
  --expect VERSION  delete only if PATH is still at VERSION (from read);
                    else exit 5: read again and decide again
  --request-id ID   idempotency key (default: a random one per run); a
                    delete cut off by --timeout may still have landed: it
                    prints its key, and the same command re-run with
                    --request-id KEY prints the first run's result
` + connHelp

func runRm(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("rm", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	expect := fs.String("expect", "", "")
	requestID := fs.String("request-id", "", "")
	pos, code := parse(fs, io, rmUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(io, "rm", "want exactly one PATH, got %d arguments", len(pos))
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "rm", err)
	}
	defer done()
	if *requestID == "" {
		*requestID = client.NewRequestID()
	}
	r, err := c.Delete(ctx, &hashlinev1.DeleteRequest{Path: pos[0], ExpectedVersion: *expect, RequestId: *requestID})
	if err != nil {
		return failMutation(io, "rm", err, *requestID)
	}
	return printResult(io, "rm", cf.json, r, func() string { return render.Delete(r, render.Options{}) })
}

const mvUsage = `usage: hashline mv FROM TO [--expect VERSION] [--overwrite]

Moves (renames) the file FROM to TO inside the workspace, creating TO's
missing parent directories. The file keeps its version, and every agent's
refs to it hold at TO. An existing TO is refused (ALREADY_EXISTS) unless
--overwrite; a directory at TO is refused. Prints:

  Moved a.txt to docs/a.txt (version v2-…)

flags:
  --expect VERSION  move only if FROM is still at VERSION (from read); else
                    exit 5: read again and decide again
  --overwrite       replace the file at TO if there is one
  --request-id ID   idempotency key (default: a random one per run), as
                    for rm
` + connHelp

func runMv(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("mv", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	expect := fs.String("expect", "", "")
	overwrite := fs.Bool("overwrite", false, "")
	requestID := fs.String("request-id", "", "")
	pos, code := parse(fs, io, mvUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 2 {
		return usageError(io, "mv", "want FROM and TO, got %d arguments", len(pos))
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "mv", err)
	}
	defer done()
	if *requestID == "" {
		*requestID = client.NewRequestID()
	}
	r, err := c.Move(ctx, &hashlinev1.MoveRequest{From: pos[0], To: pos[1], ExpectedVersion: *expect, Overwrite: *overwrite, RequestId: *requestID})
	if err != nil {
		return failMutation(io, "mv", err, *requestID)
	}
	return printResult(io, "mv", cf.json, r, func() string { return render.Move(r, render.Options{}) })
}
