package main

import (
	"context"
	"os"

	"github.com/hashline/hashline/internal/daemon"
)

func init() {
	register(&command{
		name:    "engine",
		summary: "run a workspace's engine (hashlined serve's code; --local and mcp start one when none runs)",
		run:     runEngine,
	})
}

// runEngine is hashlined itself, under this binary's name: hashline starts
// it for a root that has no engine, so that every session of the root,
// whatever started it, shares one engine. "hashline engine serve --help"
// lists its flags.
func runEngine(_ context.Context, io stdio, args []string) int {
	return daemon.Run("hashline engine", args, io.stdout, io.stderr, daemon.Extras{TuneRuntime: daemon.TuneRuntime})
}

// engineStart is how this binary starts an engine: itself, as "hashline
// engine", with the extra serve flags args.
func engineStart(args ...string) (daemon.Start, error) {
	exe, err := os.Executable()
	if err != nil {
		return daemon.Start{}, err
	}
	return daemon.Start{Command: []string{exe, "engine"}, Args: args}, nil
}
