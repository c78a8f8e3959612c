package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "grep", summary: "search files; matches print as tagged lines ready to edit", run: runGrep})
}

const grepUsage = `usage: hashline grep PATTERN [PATH] [flags]

Searches PATH (a file or directory; default the whole workspace) for the RE2
PATTERN and prints, per file in path order, a header with its path and
version, then ">>" before each matching line and two spaces before each
context line, "--" between runs that are not adjacent, then a summary:

  File: main.go (version v2-4cd3…)
  >>4:d4|	println("hello")
    5:18|}
  1 match in 1 file (3 files searched).

The tags are edit references as they stand ("4:d4", or the whole line).
.gitignore'd, hidden and binary files are skipped. No match is not an error
(exit 0). A pattern starting with "-" goes after "--" or in -e.

flags:
  -e PATTERN       the pattern (instead of the first argument)
  -i               case-insensitive
  -F               PATTERN is a plain string, not a regular expression
  -A N, -B N       lines of context after / before each match
  -C N             lines of context before and after each match
  --glob G         only files matching G ("*.go", "src/**/*.ts"); repeatable
  --exclude G      skip files matching G; repeatable
  --type T         only files of type T ("go", "ts", "py", ...); repeatable
  --max N          stop after N matching lines (default 100)
  --hidden         also search hidden files and directories
  --no-ignore      do not honour .gitignore files
` + connHelp

type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint(*l) }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runGrep(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("grep", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	var globs, excludes, types listFlag
	pattern := fs.String("e", "", "")
	fold := fs.Bool("i", false, "")
	literal := fs.Bool("F", false, "")
	after := fs.Int("A", 0, "")
	before := fs.Int("B", 0, "")
	around := fs.Int("C", 0, "")
	fs.Var(&globs, "glob", "")
	fs.Var(&excludes, "exclude", "")
	fs.Var(&types, "type", "")
	maxMatches := fs.Int("max", 0, "")
	hidden := fs.Bool("hidden", false, "")
	noIgnore := fs.Bool("no-ignore", false, "")
	pos, code := parse(fs, io, grepUsage, splitShortNumbers(args))
	if code >= 0 {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["e"] {
		if len(pos) == 0 {
			return usageError(io, "grep", "missing PATTERN")
		}
		*pattern, pos = pos[0], pos[1:]
	}
	if len(pos) > 1 {
		return usageError(io, "grep", "want at most one PATH after the pattern, got %d", len(pos))
	}
	if *pattern == "" {
		return usageError(io, "grep", "empty PATTERN")
	}
	if *after < 0 || *before < 0 || *around < 0 || *maxMatches < 0 {
		return usageError(io, "grep", "-A, -B, -C and --max must not be negative")
	}
	if set["C"] {
		if !set["A"] {
			*after = *around
		}
		if !set["B"] {
			*before = *around
		}
	}
	req := &hashlinev1.GrepRequest{
		Pattern: *pattern, CaseInsensitive: *fold, Literal: *literal,
		Before: int32(*before), After: int32(*after), MaxMatches: int32(*maxMatches),
		Glob: globs, ExcludeGlob: excludes, Type: types, Hidden: *hidden, NoIgnore: *noIgnore,
	}
	if len(pos) == 1 {
		req.Path = pos[0]
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "grep", err)
	}
	defer done()
	summary, err := c.Grep(ctx, req, func(f *hashlinev1.GrepFile) error {
		if cf.json {
			return printJSON(io, &hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_File{File: f}})
		}
		_, err := fmt.Fprint(io.stdout, render.GrepFile(f))
		return err
	})
	if err != nil {
		return fail(io, "grep", err)
	}
	if cf.json {
		if err := printJSON(io, &hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_Summary{Summary: summary}}); err != nil {
			return fail(io, "grep", err)
		}
		return exitOK
	}
	fmt.Fprint(io.stdout, render.GrepSummary(summary))
	return exitOK
}

// splitShortNumbers turns grep's "-C2" into "-C" "2" for the flag package,
// up to a "--".
func splitShortNumbers(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && strings.ContainsRune("ABC", rune(a[1])) && strings.Trim(a[2:], "0123456789") == "" {
			out = append(out, a[:2], a[2:])
			continue
		}
		out = append(out, a)
	}
	return out
}
