package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "revert", summary: "undo one change by its id (from log or blame), keeping every change since", run: runRevert})
}

const revertUsage = `usage: hashline revert ID [--dry-run]

Undoes the change ID, as hashline log and blame print it, rebased over
every change since: the lines it wrote go back to what they were, wherever
they are now, and the changes made since stay. A file it deleted is
written again, one it moved is moved back, one it created is deleted; a
change set is undone whole or not at all. The revert is a change of its
own, with its own id, which hashline revert undoes in turn. Prints what
it changed, as apply does, then:

  Reverted c3-9f3a11be as c5-9f3a11be (hashline revert c5-9f3a11be undoes this).

If a later change touched the same lines, or moved, deleted or changed a
file the revert needs, nothing is written and the exit code is 5: the
later changes are named and the lines printed as they are now, ">>>" on
those they wrote. Revert the later changes first (the newest first), or
edit those lines yourself with the tags shown.

flags:
  --dry-run         print what the revert would change; write nothing
  --request-id ID   idempotency key (default: a random one per run); a
                    revert cut off by --timeout may still have landed: it
                    prints its key, and the same command re-run with
                    --request-id KEY prints the first run's result
` + connHelp

func runRevert(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("revert", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	dryRun := fs.Bool("dry-run", false, "")
	requestID := fs.String("request-id", "", "")
	pos, code := parse(fs, io, revertUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(io, "revert", "want exactly one change ID (hashline log lists them), got %d arguments", len(pos))
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "revert", err)
	}
	defer done()
	if *requestID == "" && !*dryRun {
		*requestID = client.NewRequestID()
	}
	r, err := c.Revert(ctx, &hashlinev1.RevertRequest{ChangeId: pos[0], DryRun: *dryRun, RequestId: *requestID})
	if errors.Is(err, client.ErrRevertConflict) {
		fmt.Fprint(io.stderr, client.FormatError(err))
		return exitStale
	}
	if err != nil {
		return failMutation(io, "revert", err, *requestID)
	}
	return printResult(io, "revert", cf.json, r, func() string { return render.Revert(r, render.Options{}) })
}
