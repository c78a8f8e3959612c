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
	var cf connFlags
	file, offset, limit, code := pageArgs(&cf, "read", readUsage, io, args)
	if code >= 0 {
		return code
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "read", err)
	}
	defer done()
	// The text is all the plain output shows; --json prints the lines too.
	r, err := c.Read(ctx, &hashlinev1.ReadRequest{Path: file, Offset: int32(offset), Limit: int32(limit), OmitLines: !cf.json})
	if err != nil {
		return fail(io, "read", err)
	}
	return printResult(io, "read", cf.json, r, func() string { return render.Read(r, render.Options{}) })
}

// pageArgs parses the arguments of a command that prints a page of one
// file (read, blame): the connection flags into cf, FILE, --offset and
// --limit. code is the exit code to return at once, or -1.
func pageArgs(cf *connFlags, name, usage string, io stdio, args []string) (file string, offset, limit, code int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cf.register(fs, io)
	off := fs.Int("offset", 0, "")
	lim := fs.Int("limit", 0, "")
	pos, code := parse(fs, io, usage, args)
	if code >= 0 {
		return "", 0, 0, code
	}
	if len(pos) != 1 {
		return "", 0, 0, usageError(io, name, "want exactly one FILE, got %d arguments", len(pos))
	}
	if *off < 0 || *lim < 0 {
		return "", 0, 0, usageError(io, name, "--offset and --limit must not be negative")
	}
	return pos[0], *off, *lim, -1
}
