// Command hashline is the shell and desktop face of hashlined: it reads,
// edits, writes and greps files as hashline-tagged lines, through a running
// server or through the workspace's own engine on this machine (--local),
// and bridges MCP clients.
//
// Every subcommand lives in its own file and registers itself in commands;
// run dispatches on the first argument.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// Exit codes, documented in --help and the README.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// exitStale is the convention shell agents already use for a stale
	// reference: re-read (or use the fresh tags printed) and retry. A
	// revert that met a later change is one too: the lines have moved on.
	exitStale = 5
)

// stdio is what a command may touch besides the network and files.
type stdio struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for the command list
	run     func(ctx context.Context, io stdio, args []string) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("hashline: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 {
		usage(io.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(io.stdout)
		return exitOK
	case "--version", "version":
		return printVersion(io)
	}
	args, err := hoistGlobalFlags(args)
	if err != nil {
		fmt.Fprintf(io.stderr, "hashline: %v\n", err)
		fmt.Fprintln(io.stderr, "Run \"hashline --help\" for usage.")
		return exitUsage
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(io.stderr, "hashline: unknown command %q\n\n", args[0])
		usage(io.stderr)
		return exitUsage
	}
	return c.run(ctx, io, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprint(w, "usage: hashline COMMAND [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
The file commands (all but mcp) call hashlined at --server (env HASHLINE_SERVER,
default 127.0.0.1:7420), or with --local the engine of the current
directory's workspace on this machine (a running one, or one started for it
that stops once idle). --agent (env HASHLINE_AGENT) names the
caller; --token (env HASHLINE_TOKEN) authenticates it.

exit codes:
  0  success (also grep with no match)
  1  any other error (the message says which and what to do)
  2  usage error: bad command, flag or argument
  5  stale: a reference or version no longer matches the file (STALE_REF,
     VERSION_MISMATCH), or a revert met a later change (REVERT_CONFLICT);
     the current lines are printed on stderr with ">>>" on the changed
     ones: retry with those tags (or read again)

The connection flags may also come before the command:
  hashline --server ADDR read FILE

other flags:
  -h, --help     this help
  --version      print the version and exit

Run "hashline COMMAND --help" for a command's flags.
`)
}
