package client

import (
	"errors"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/render"
)

// The Format functions render responses as the text a model reads: tagged
// lines "LINE:HASH|CONTENT" under a one-line header that names the file and
// its version. The hashline CLI prints exactly this, and the TypeScript
// package's formatters produce the same text; all of it is made in one
// place, which also makes hashline mcp's.

// FormatTagged joins lines as "LINE:HASH|CONTENT", one per line.
func FormatTagged(lines []*hashlinev1.Line) string {
	return render.Tagged(lines)
}

// FormatRead renders a Read page: a header, then the tagged lines. A page
// that stops before the end says so and names the offset to continue from.
//
//	File: main.go (5 lines, version v2-e2a1…)
//	1:c9|package main
//	…
func FormatRead(r *hashlinev1.ReadResponse) string {
	return render.Read(r, render.Options{Face: render.Client})
}

// PageBounds returns the first and last line numbers of a non-empty read
// page: from its lines or, for a read with OmitLines, from its text, whose
// lines are consecutive and each start with "LINE:".
func PageBounds(r *hashlinev1.ReadResponse) (first, last int32) {
	return render.PageBounds(r)
}

// FormatEdit renders an applied (or dry-run) edit: a header with the new
// version and how the other lines' numbers changed (FormatShifts), the
// rebase report, warnings, then the tagged diff: the changes with the
// fresh LINE:HASH of every line shown, the refs to use next. With diff the
// unified diff follows. A response without a tagged diff (from a server
// older than the field) shows its windows of fresh lines instead.
//
//	Updated main.go (4 lines, version v2-…). Lines after 2 moved down 1.
//	 2:16|	println("hi")
//	+3:d4|	println("hello")
//	 4:18|}
func FormatEdit(r *hashlinev1.EditResponse, diff bool) string {
	return render.Edit(r, render.Options{Face: render.Client, Diff: diff})
}

// FormatShifts says in a sentence how an edit moved the lines it did not
// touch (EditResponse.shifts), in the numbers of the file before the edit:
//
//	Line numbers unchanged.
//	Lines after 12 moved down 2.
//	Lines 13-39 moved down 2; lines after 40 kept their numbers.
//
// After a rebase the caller's refs come from an older version than the one
// the shifts start from (the rebase report says so), and the sentence ends
// "by this edit."
func FormatShifts(r *hashlinev1.EditResponse) string {
	return render.Shifts(r)
}

// FormatWrite renders a Write response in one line.
func FormatWrite(r *hashlinev1.WriteResponse) string {
	return render.Write(r, render.Options{Face: render.Client})
}

// FormatDelete renders a Delete response in one line.
//
//	Deleted old.txt (was version v2-…)
func FormatDelete(r *hashlinev1.DeleteResponse) string {
	return render.Delete(r, render.Options{Face: render.Client})
}

// FormatMove renders a Move response in one line. The version is the
// file's, unchanged by the move: refs read at the old path hold at the new.
//
//	Moved a.txt to b/a.txt (version v2-…)
func FormatMove(r *hashlinev1.MoveResponse) string {
	return render.Move(r, render.Options{Face: render.Client})
}

// FormatApply renders an applied (or dry-run) change set: one line per
// change in the request's order, an edit's as FormatEdit renders it (its
// tagged diff holds the fresh refs), then one closing line.
//
//	Updated main.go (5 lines, version v2-…). Line numbers unchanged.
//	 3:d4|	println("hello")
//	Created util.go (3 lines, version v2-…)
//	Moved old.go to new.go (version v2-…)
//	Applied 3 changes together.
func FormatApply(r *hashlinev1.ApplyResponse, diff bool) string {
	return render.Apply(r, render.Options{Face: render.Client, Diff: diff})
}

// FormatGrepFile renders one file of a Grep stream like the published
// hashline grep format: ">>" before a matching line, two spaces before a
// context line, "--" between runs that are not adjacent, under a header
// with the file's path and version. The tags are valid edit references
// (a leading ">>" is accepted).
//
//	File: main.go (version v2-4cd3…)
//	>>4:d4|	println("hello")
//	  5:18|}
func FormatGrepFile(f *hashlinev1.GrepFile) string {
	return render.GrepFile(f)
}

// FormatGrepSummary renders the end of a Grep stream in one line, saying
// when the search stopped at the match limit.
func FormatGrepSummary(s *hashlinev1.GrepSummary) string {
	return render.GrepSummary(s)
}

// FormatEntry renders one List entry in one line: its path, with "/"
// after a directory and "@" after a symbolic link, then with size its
// size in bytes (files and links), and with version its version (files
// that have one).
//
//	src/
//	src/main.go 120 v2-4cd3…
//	src/link@
func FormatEntry(e *hashlinev1.Entry, size, version bool) string {
	return render.Entry(e, size, version)
}

// FormatListEnd renders the end of a List page: nothing when it was the
// last, otherwise one line saying how to ask for the next.
func FormatListEnd(r *hashlinev1.ListResponse) string {
	return render.ListEnd(r, render.Client)
}

// FormatError renders an error for a model: the server's message (for a
// stale reference, the view of the current lines with ">>>" on the changed
// ones), then for a stale reference the version the fresh tags come from.
func FormatError(err error) string {
	var stale StaleRefError
	if errors.As(err, &stale) {
		return render.Stale(stale.Err.Message, stale.CurrentVersion, render.Client)
	}
	var e *Error
	if errors.As(err, &e) {
		return render.Refused("", "", e.why(), e.Message, render.Client)
	}
	return err.Error() + "\n"
}

// FormatChangeErrors renders a refused change set (an *Error with
// Changes) for a model: every failing change with its path, reason and
// message (for a stale reference, the current lines with ">>>" on the
// changed ones, and the version they come from). It is FormatError for
// any other error.
func FormatChangeErrors(err error) string {
	var e *Error
	if !errors.As(err, &e) || len(e.Changes) == 0 {
		return FormatError(err)
	}
	return render.RefusedChanges(e.Changes, e.Stale, len(e.Changes), render.Client)
}

// why is the error's reason or, without one, its code as the protocol
// spells it: "DEADLINE_EXCEEDED".
func (e *Error) why() string {
	if e.Reason != "" {
		return e.Reason
	}
	return render.CodeName(e.Code)
}

// FormatHistory renders a History page: one line per change, newest
// first (id, time, agent, kind, files with the lines removed and added),
// with diff each file's tagged diff after its change, then how to ask for
// the next page.
//
//	c7-9f3a11be 2026-03-01T09:02:00Z alice edit main.go -1 +2
func FormatHistory(r *hashlinev1.HistoryResponse, diff bool) string {
	return render.History(r, render.Options{Face: render.Client, Diff: diff})
}

// FormatRevert renders a revert: what it changed (or, dry, would change),
// each file as FormatApply renders it, its warnings, then a line naming
// the change reverted and the revert's own id.
//
//	Updated main.go (4 lines, version v2-…). Lines after 3 moved up 1 by this edit.
//	Rebased from version v2-…
//	 2:16|	println("hi")
//	-	println("hello")
//	Reverted c3-9f3a11be as c5-9f3a11be (a Revert of c5-9f3a11be undoes this).
func FormatRevert(r *hashlinev1.RevertResponse) string {
	return render.Revert(r, render.Options{Face: render.Client})
}

// FormatBlame renders a Blame page: a header as FormatRead's, then per
// line the change that last wrote it (id, agent, date; "-" for a line
// older than the history) and the tagged line.
//
//	c3-9f3a11be alice 2026-03-01 1:c9|package main
func FormatBlame(r *hashlinev1.BlameResponse) string {
	return render.Blame(r, render.Options{Face: render.Client})
}
