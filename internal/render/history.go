package render

import (
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// History renders a History page: one line per change, newest first, its
// id, time (UTC, to the second), agent, kind and files with the lines
// each removed and added, a move as FROM -> TO; with Diff each file's
// tagged diff follows its change under a "--- PATH" line. A page that is
// not the last ends with how to continue (in the face's terms), and the
// last says when older changes are no longer held.
//
//	c7-9f3a11be 2026-03-01T09:02:00Z alice edit main.go -1 +2
//	c6-9f3a11be 2026-03-01T09:01:00Z (external) external main.go -0 +1
func History(r *hashlinev1.HistoryResponse, o Options) string {
	var b strings.Builder
	if len(r.GetEntries()) == 0 {
		b.WriteString("No changes.\n")
	}
	for _, e := range r.GetEntries() {
		fmt.Fprintf(&b, "%s %s %s %s", e.GetChangeId(), stamp(e.GetTime()), e.GetAgent(), changeKind(e.GetKind()))
		if e.GetReverts() != "" {
			fmt.Fprintf(&b, " of %s", e.GetReverts())
		}
		for i, f := range e.GetFiles() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte(' ')
			if f.GetFromPath() != "" {
				fmt.Fprintf(&b, "%s -> ", f.GetFromPath())
			}
			fmt.Fprintf(&b, "%s -%d +%d", f.GetPath(), f.GetLinesRemoved(), f.GetLinesAdded())
			if f.GetNewVersion() == "" {
				b.WriteString(" (deleted)")
			}
		}
		b.WriteByte('\n')
		if !o.Diff {
			continue
		}
		for _, f := range e.GetFiles() {
			switch {
			case f.GetDiff() != "":
				fmt.Fprintf(&b, "--- %s\n%s", f.GetPath(), f.GetDiff())
			case f.GetDiffOmitted():
				fmt.Fprintf(&b, "--- %s (lines changed; the history did not keep which)\n", f.GetPath())
			}
		}
	}
	switch {
	case r.GetNextPageToken() != "" && o.Face == CLI:
		fmt.Fprintf(&b, "[more changes follow: continue with --page %s]\n", r.GetNextPageToken())
	case r.GetNextPageToken() != "":
		fmt.Fprintf(&b, "[more changes follow: continue with page token %s]\n", r.GetNextPageToken())
	case r.GetOlderDropped():
		b.WriteString("[older changes are no longer held]\n")
	}
	return b.String()
}

// Blame renders a Blame page: a header naming the file, as Read's does,
// then per line the change that last wrote it (id, agent, date) and the
// line tagged as Read shows it; a line older than the history has "-"
// for each of the change's three fields. The fields are separated by one
// space, unpadded, so that a line splits on spaces as a shell pipes it
// (cut, awk), as long as the agents' names have none.
//
//	File: main.go (3 lines, version v2-e2a1…)
//	c3-9f3a11be alice 2026-03-01 1:c9|package main
//	- - - 2:00|
func Blame(r *hashlinev1.BlameResponse, o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "File: %s (%s, version %s)", r.GetPath(), plural(int(r.GetTotalLines()), "line"), r.GetVersion())
	ls := r.GetLines()
	if r.GetTruncated() && len(ls) > 0 {
		last := ls[len(ls)-1].GetLine().GetNumber()
		next := fmt.Sprintf("offset %d", r.GetNextOffset())
		if o.Face == CLI {
			next = fmt.Sprintf("--offset %d", r.GetNextOffset())
		}
		fmt.Fprintf(&b, " [showing lines %d-%d; %d more below, continue with %s]",
			ls[0].GetLine().GetNumber(), last, r.GetTotalLines()-last, next)
	}
	b.WriteByte('\n')
	for _, l := range ls {
		id, agent, date := "-", "-", "-"
		if !l.GetBeforeHistory() {
			id, agent, date = l.GetChangeId(), l.GetAgent(), l.GetTime().AsTime().UTC().Format(time.DateOnly)
		}
		ln := l.GetLine()
		fmt.Fprintf(&b, "%s %s %s %d:%s|%s\n", id, agent, date, ln.GetNumber(), ln.GetHash(), ln.GetContent())
	}
	return b.String()
}

// stamp is a change's time as History shows it.
func stamp(t *timestamppb.Timestamp) string {
	return t.AsTime().UTC().Format("2006-01-02T15:04:05Z")
}

// changeKind is a kind's name as the history package spells it: edit,
// write, delete, move, set, revert, external.
func changeKind(k hashlinev1.ChangeKind) string {
	name, ok := strings.CutPrefix(k.String(), "CHANGE_KIND_")
	if !ok {
		return "unknown"
	}
	return strings.ToLower(name)
}
