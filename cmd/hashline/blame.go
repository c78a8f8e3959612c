package main

import (
	"context"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "blame", summary: "print a file's lines with the change that last wrote each", run: runBlame})
}

const blameUsage = `usage: hashline blame FILE [--offset N] [--limit N]

Prints FILE's lines, tagged as read prints them, each after the change that
last wrote it: its change id, agent and date. A line older than the history
the server keeps shows "-" there.

  File: main.go (5 lines, version v2-e2a1…)
  c3-9f3a11be alice 2026-03-01 1:c9|package main

A page holds at most --limit lines (server default 2000) and 256 KiB; a
partial page says so in the header and names the offset to continue from.

flags:
  --offset N      first line to print, 1-based (default 1)
  --limit N       most lines to print (default: the server's, 2000)
` + connHelp

func runBlame(ctx context.Context, io stdio, args []string) int {
	var cf connFlags
	file, offset, limit, code := pageArgs(&cf, "blame", blameUsage, io, args)
	if code >= 0 {
		return code
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "blame", err)
	}
	defer done()
	r, err := c.Blame(ctx, &hashlinev1.BlameRequest{Path: file, Offset: int32(offset), Limit: int32(limit)})
	if err != nil {
		return fail(io, "blame", err)
	}
	return printResult(io, "blame", cf.json, r, func() string { return render.Blame(r, render.Options{}) })
}
