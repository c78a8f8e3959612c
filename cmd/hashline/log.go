package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

func init() {
	register(&command{name: "log", summary: "list the changes made to a file, a directory or the workspace, newest first", run: runLog})
}

const logUsage = `usage: hashline log [PATH] [flags]

Lists the changes the server recorded to PATH (a file, followed back
through its moves; a directory; default the whole workspace), newest first,
one per line: its change id, time (UTC), agent, kind, and files with the
lines each removed and added. Changes made outside the server are the agent
"(external)".

  c7-9f3a11be 2026-03-01T09:02:00Z alice edit main.go -1 +2

A page holds at most --limit changes; a partial page ends with a line
naming the token to continue from with --page.

flags:
  --agent NAME    only the changes of this agent ("(external)" for those
                  made outside the server); here the flag selects changes,
                  and HASHLINE_AGENT alone selects none
  --since WHEN    only changes since WHEN: a duration back from now (2h,
                  30m) or a time (2026-03-01T09:00:00Z)
  --limit N       most changes per page (default 100, at most 1000)
  --page TOKEN    continue after the page that ended with TOKEN
  --diff          print each file's change as a diff of tagged lines
` + connHelp

func runLog(ctx context.Context, io stdio, args []string) int {
	fs := flag.NewFlagSet("log", flag.ContinueOnError)
	var cf connFlags
	cf.register(fs, io)
	since := fs.String("since", "", "")
	limit := fs.Int("limit", 0, "")
	page := fs.String("page", "", "")
	diff := fs.Bool("diff", false, "")
	pos, code := parse(fs, io, logUsage, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 1 {
		return usageError(io, "log", "want at most one PATH, got %d", len(pos))
	}
	if *limit < 0 {
		return usageError(io, "log", "--limit must not be negative")
	}
	// --agent is every command's name for the caller; given to log it
	// also names whose changes to list (the environment's does not).
	var agent string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "agent" {
			agent = cf.agent
		}
	})
	req := &hashlinev1.HistoryRequest{Agent: agent, MaxEntries: int32(min(*limit, 1<<30)), PageToken: *page, IncludeDiff: *diff}
	if len(pos) == 1 {
		req.Path = pos[0]
	}
	if *since != "" {
		t, err := parseSince(*since, time.Now())
		if err != nil {
			return usageError(io, "log", "%v", err)
		}
		req.Since = timestamppb.New(t)
	}
	c, done, err := cf.connect(ctx)
	if err != nil {
		return fail(io, "log", err)
	}
	defer done()
	r, err := c.History(ctx, req)
	if err != nil {
		return fail(io, "log", err)
	}
	return printResult(io, "log", cf.json, r, func() string { return render.History(r, render.Options{Diff: *diff}) })
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %s: want a duration back from now (2h) or a time", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration back from now (2h, 30m) or a time (2026-03-01T09:00:00Z)", s)
}
