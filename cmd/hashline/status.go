package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/hashline/hashline/internal/buildinfo"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "status", summary: "print which root the server serves, its version and settings", run: runStatus})
}

const statusUsage = `usage: hashline status

Asks the server which workspace root it serves (every path is relative to
it), its version, its hash length and whether edits need a prior read, and
the workspace's name when the server has one (hashlined --workspace):

  server:       127.0.0.1:7420
  workspace:    alpha
  root:         /home/me/project
  version:      v0.1.0
  hash length:  2
  require read: true

With --json, prints the StatusResponse as JSON.
` + connHelp

func runStatus(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	pos, code := parse(fs, io, statusUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 0 {
		return usageError(io, "status", "takes no arguments, got %d", len(pos))
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "status", err)
	}
	defer done()
	r, err := c.Status(ctx)
	if err != nil {
		return fail(io, "status", err)
	}
	where := cf.server
	if cf.local || cf.root != "" {
		where = "(the workspace's engine on this machine, --local)"
	}
	return printResult(io, "status", cf.json, r, func() string { return render.Status(where, r) })
}

// printVersion is hashline --version.
func printVersion(io stdio) int {
	fmt.Fprintln(io.stdout, buildinfo.Get().String("hashline"))
	return exitOK
}
