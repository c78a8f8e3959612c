package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "ls", summary: "list a directory (or its tree) as the server sees it", run: runLs})
}

const lsUsage = `usage: hashline ls [PATH] [flags]

Lists PATH (a directory, default the whole workspace; a file lists itself),
one entry per line in path order, "/" after a directory and "@" after a
symbolic link, which is never followed:

  main.go
  pkg/
  pkg/a.go 120 v2-4cd3…

Paths are relative to the workspace root. .gitignore'd and hidden entries,
version-control metadata and the server's temporary files are left out, as
grep leaves them out. A page holds at most --max entries; a partial page ends
with a line naming the token to continue from with --page (or use --all).

flags:
  -r, --recursive  list the whole tree under PATH, not only its entries
  --glob G         only entries matching G ("*.go", "src/**/*.ts"); repeatable
  --hidden         also list hidden files and directories
  --no-ignore      do not honour .gitignore files
  -l, --long       print each file's and link's size in bytes
  --versions       print each file's version (reads every file listed)
  --max N          most entries per page (default 1000, at most 100000)
  --page TOKEN     continue after the page that ended with TOKEN
  --all            print every page, not only the first
` + connHelp

func runLs(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("ls", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	var globs listFlag
	var recursive, long bool
	fs.BoolVar(&recursive, "r", false, "")
	fs.BoolVar(&recursive, "recursive", false, "")
	fs.BoolVar(&long, "l", false, "")
	fs.BoolVar(&long, "long", false, "")
	fs.Var(&globs, "glob", "")
	hidden := fs.Bool("hidden", false, "")
	noIgnore := fs.Bool("no-ignore", false, "")
	versions := fs.Bool("versions", false, "")
	maxEntries := fs.Int("max", 0, "")
	page := fs.String("page", "", "")
	all := fs.Bool("all", false, "")
	pos, code := parse(fs, io, lsUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 1 {
		return usageError(io, "ls", "want at most one PATH, got %d", len(pos))
	}
	if *maxEntries < 0 {
		return usageError(io, "ls", "--max must not be negative")
	}
	req := &hashlinev1.ListRequest{
		Glob: globs, Recursive: recursive, Hidden: *hidden, NoIgnore: *noIgnore,
		IncludeVersions: *versions, MaxEntries: int32(min(*maxEntries, 1<<30)), PageToken: *page,
	}
	if len(pos) == 1 {
		req.Path = pos[0]
	}
	if *all && req.MaxEntries == 0 {
		req.MaxEntries = client.ListAllPage // the whole listing: the fewest calls
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "ls", err)
	}
	defer done()
	for {
		r, err := c.List(ctx, req)
		if err != nil {
			return fail(io, "ls", err)
		}
		if cf.json {
			if err := printJSON(io, r); err != nil {
				return fail(io, "ls", err)
			}
		} else {
			for _, e := range r.GetEntries() {
				fmt.Fprint(io.stdout, render.Entry(e, long, *versions))
			}
			if !*all {
				fmt.Fprint(io.stdout, render.ListEnd(r, render.CLI))
			}
		}
		if !*all || !r.GetTruncated() {
			return exitOK
		}
		req.PageToken = r.GetNextPageToken()
	}
}
