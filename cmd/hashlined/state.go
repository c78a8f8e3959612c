package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hashline/hashline/internal/state"
)

const stateUsage = `usage:
  hashlined state list [--base DIR]
  hashlined state prune [--dry-run] [--unknown] [--base DIR]

Every workspace served with the default --state-dir keeps its state (the
snapshots rebases read, the intent log of change sets) in a directory named
by a hash of its root, under DIR (default: hashline/ under $XDG_STATE_HOME,
else ~/.local/state, %LocalAppData% on Windows, ~/Library/Application Support
on macOS). Each records its root's path in a file named root.

list shows each directory, its root, and whether the root is gone or an
engine (hashlined, hashline mcp, hashline --local) is using it.

prune removes the directories of roots that no longer exist, never one an
engine is using. Directories without a root file (made before hashline
recorded roots) are kept unless --unknown is given. --dry-run only says
what it would remove.
`

// runState is hashlined state: list and prune the state directories of
// workspace roots.
func runState(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		w, code := stderr, 2
		if len(args) > 0 {
			w, code = stdout, 0
		}
		fmt.Fprint(w, stateUsage)
		return code
	}
	sub := args[0]
	if sub != "list" && sub != "prune" {
		fmt.Fprintf(stderr, "hashlined state: unknown command %q; want list or prune (hashlined state --help)\n", sub)
		return 2
	}
	fs := flag.NewFlagSet("state "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("base", "", "directory holding the state directories")
	var dryRun, unknown *bool
	if sub == "prune" {
		dryRun = fs.Bool("dry-run", false, "say what would be removed, remove nothing")
		unknown = fs.Bool("unknown", false, "remove directories that record no root too")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, stateUsage)
			return 0
		}
		fmt.Fprintf(stderr, "hashlined state %s: %v\nRun \"hashlined state --help\" for usage.\n", sub, err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hashlined state %s: unexpected argument %q\n", sub, fs.Arg(0))
		return 2
	}
	if sub == "list" {
		entries, err := state.List(*base)
		if err != nil {
			fmt.Fprintf(stderr, "hashlined state list: %v\n", err)
			return 1
		}
		for _, e := range entries {
			fmt.Fprintf(stdout, "%s\t%s\n", e.Path, describe(e))
		}
		return 0
	}
	removed, busy, err := state.Prune(*base, *unknown, *dryRun)
	verb := "removed"
	if *dryRun {
		verb = "would remove"
	}
	for _, e := range removed {
		fmt.Fprintf(stdout, "%s %s\t%s\n", verb, e.Path, describe(e))
	}
	for _, e := range busy {
		fmt.Fprintf(stdout, "kept %s\t%s\n", e.Path, describe(e))
	}
	if err != nil {
		fmt.Fprintf(stderr, "hashlined state prune: %v\n", err)
		return 1
	}
	return 0
}

// describe says what an entry is, for list and prune.
func describe(e state.Entry) string {
	s := "root " + e.Root
	switch {
	case e.Root == "":
		s = "no root recorded"
	case e.RootGone:
		s += " (gone)"
	}
	if e.InUse {
		s += " (in use by a running engine)"
	}
	return s
}
