package main

import (
	"context"
	"flag"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "read", summary: "print a file as LINE:HASH|CONTENT tagged lines", run: runRead})
}

const readUsage = `usage: hashline read FILE [--offset N] [--limit N]

Prints FILE as hashline-tagged lines under a header with its line count and
version. Edit by pointing at the tags: "hashline edit FILE --replace 4:16 ...".

  File: main.go (5 lines, version v2-e2a1…)
  1:c9|package main
  ...

A page holds at most --limit lines (server default 2000) and 256 KiB; a
partial page says so in the header and names the offset to continue from.

flags:
  --offset N      first line to print, 1-based (default 1)
  --limit N       most lines to print (default: the server's, 2000)
` + connHelp

func runRead(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("read", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	offset := fs.Int("offset", 0, "")
	limit := fs.Int("limit", 0, "")
	pos, code := parse(fs, io, readUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		return usageError(io, "read", "want exactly one FILE, got %d arguments", len(pos))
	}
	if *offset < 0 || *limit < 0 {
		return usageError(io, "read", "--offset and --limit must not be negative")
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "read", err)
	}
	defer done()
	// The text is all the plain output shows; --json prints the lines too.
	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: pos[0], Offset: int32(*offset), Limit: int32(*limit), OmitLines: !cf.json})
	if err != nil {
		return fail(io, "read", err)
	}
	return printResult(io, "read", cf.json, r, func() string { return render.Read(r, render.Options{}) })
}
