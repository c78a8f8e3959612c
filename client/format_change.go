package client

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// FormatDelete renders a Delete response in one line.
//
//	Deleted old.txt (was version v2-…)
func FormatDelete(r *hashlinev1.DeleteResponse) string {
	return deleteLine(r, false) + "\n"
}

func deleteLine(r *hashlinev1.DeleteResponse, dryRun bool) string {
	verb := "Deleted"
	if dryRun {
		verb = "Would delete"
	}
	if r.GetDirectory() {
		return fmt.Sprintf("%s directory %s", verb, r.GetPath())
	}
	return fmt.Sprintf("%s %s (was version %s)", verb, r.GetPath(), r.GetVersion())
}

// FormatMove renders a Move response in one line. The version is the
// file's, unchanged by the move: refs read at the old path hold at the new.
//
//	Moved a.txt to b/a.txt (version v2-…)
func FormatMove(r *hashlinev1.MoveResponse) string {
	return moveLine(r, false) + "\n"
}

func moveLine(r *hashlinev1.MoveResponse, dryRun bool) string {
	verb := "Moved"
	if dryRun {
		verb = "Would move"
	}
	s := fmt.Sprintf("%s %s to %s (version %s)", verb, r.GetFrom(), r.GetTo(), r.GetVersion())
	if rv := r.GetReplacedVersion(); rv != "" {
		s += fmt.Sprintf(", replacing the file there (version %s)", rv)
	}
	return s
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
	var b strings.Builder
	dry := r.GetDryRun()
	for _, c := range r.GetResults() {
		switch c := c.GetResult().(type) {
		case *hashlinev1.ChangeResult_Edit:
			e := c.Edit
			if dry && !e.GetDryRun() {
				e = proto.CloneOf(e)
				e.DryRun = true
			}
			b.WriteString(FormatEdit(e, diff))
		case *hashlinev1.ChangeResult_Write:
			if !dry {
				b.WriteString(FormatWrite(c.Write))
				break
			}
			verb := "Would overwrite"
			if c.Write.GetCreated() {
				verb = "Would create"
			}
			fmt.Fprintf(&b, "%s %s (%s, version %s)\n", verb, c.Write.GetPath(), plural(int(c.Write.GetTotalLines()), "line"), c.Write.GetVersion())
		case *hashlinev1.ChangeResult_Delete:
			b.WriteString(deleteLine(c.Delete, dry) + "\n")
		case *hashlinev1.ChangeResult_Move:
			b.WriteString(moveLine(c.Move, dry) + "\n")
		}
	}
	n := plural(len(r.GetResults()), "change")
	if dry {
		fmt.Fprintf(&b, "Dry run, nothing written: the %s can be applied together.\n", n)
	} else {
		fmt.Fprintf(&b, "Applied %s together.\n", n)
	}
	return b.String()
}

// FormatChangeErrors renders a refused change set (an *Error with
// Changes) for a model: every failing change with its path, reason and
// message (for a stale reference, the current lines with ">>>" on the
// changed ones, and the version they come from), then what to do. It is
// FormatError for any other error.
func FormatChangeErrors(err error) string {
	var e *Error
	if !errors.As(err, &e) || len(e.Changes) == 0 {
		return FormatError(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The change set was refused and nothing was written: %s failed.\n", plural(len(e.Changes), "change"))
	for _, c := range e.Changes {
		msg := strings.TrimSuffix(c.GetMessage(), "\n")
		fmt.Fprintf(&b, "change %d (%s): %s: %s\n", c.GetChangeIndex(), c.GetPath(), c.GetReason(), msg)
		for _, s := range e.Stale {
			if s.GetChangeIndex() == c.GetChangeIndex() && s.GetCurrentVersion() != "" {
				fmt.Fprintf(&b, "current version %s\n", s.GetCurrentVersion())
				break
			}
		}
	}
	return b.String()
}
