package engine

import (
	"errors"
	"fmt"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// What each agent saw: per (agent, file) the server remembers the last few
// versions the agent was shown (versions.Views) and which lines of each: a
// Read's page, a Grep's matches and context, an Edit's windows (all lines
// with full), a Write's whole content, the fresh lines of an error. An
// Edit's references are read against a version in which the agent was
// shown every referenced line (rebase, versions.go), so a line number it
// never saw is not taken on the word of a short hash.

// editShown returns what an Edit's reply showed the agent of the version
// it wrote: the windows, or every line with full; and the lines the agent
// was shown of the version the edit replaced (prevVersion, whose text is
// doc, when the agent saw it: hist) that the edit left alone, carried to
// their new numbers (versions.Carry), since the reply says how they moved.
func editShown(version string, doc *hashline.Document, res *hashline.Result, full bool, hist []versions.Seen, prevVersion string) versions.Seen {
	if full {
		return versions.Seen{Version: version, Lines: versions.Range(1, res.Doc.Len())}
	}
	seen := versions.Seen{Version: version}
	for _, w := range res.Windows {
		seen.Lines = seen.Lines.Union(versions.Range(w.Start, w.End))
	}
	for _, prev := range hist {
		if prev.Version == prevVersion {
			lines, moved := versions.Carry(prev, hunks(doc, res))
			seen.Lines, seen.Moved = seen.Lines.Union(lines), moved
		}
	}
	return seen
}

// hunks are the edit's changes as versions.Carry takes them: the batch's
// own hunks, which need no diff of the two versions. Should they not add
// up to the new file's length (they always should), the versions are
// diffed instead.
func hunks(doc *hashline.Document, res *hashline.Result) []versions.Hunk {
	out := make([]versions.Hunk, len(res.Hunks))
	oldEnd, newEnd := 0, 0
	for i, h := range res.Hunks {
		out[i] = versions.Hunk{A0: h.OldStart, A1: h.OldEnd, B0: h.NewStart, B1: h.NewEnd}
		if h.OldStart < oldEnd || h.OldStart-oldEnd != h.NewStart-newEnd {
			return versions.Diff(doc, res.Doc)
		}
		oldEnd, newEnd = h.OldEnd, h.NewEnd
	}
	if doc.Len()-oldEnd != res.Doc.Len()-newEnd {
		return versions.Diff(doc, res.Doc)
	}
	return out
}

// refused returns err, the refusal of an edit of the file whose view key is
// key, now at version. An error that shows the agent current tags (a
// conflict's or a stale reference's fresh lines, the lines an oldText could
// mean) makes that version the last the agent saw, with those lines: its
// retries use those tags, so they are checked against it first.
func (s *Engine) refused(agent, key, version string, err error) error {
	var b *hashline.BatchError
	var c *versions.ConflictError
	switch {
	case errors.As(err, &c):
		s.views.See(agent, key, versions.Seen{Version: version, Lines: conflictShown(c)})
	case errors.As(err, &b) && b.ShowsTags():
		s.views.See(agent, key, versions.Seen{Version: version, Lines: problemsShown(b)})
	}
	return err
}

// conflictShown returns the current lines a conflict showed: the fresh
// lines and current line of each failing reference, and the current lines
// of the references that still hold (the message lists those that moved
// with their new numbers; the others kept theirs).
func conflictShown(c *versions.ConflictError) versions.Lines {
	var nums []int
	for _, k := range c.Conflicts {
		nums = append(nums, taggedNumbers(k.Fresh)...)
		if k.Current > 0 {
			nums = append(nums, k.Current)
		}
	}
	nums = append(nums, c.Held...)
	return versions.LinesOf(nums...)
}

// problemsShown returns the lines of the current version that the problems
// of b showed as tags: their fresh lines, and the lines each shows besides
// (Problem.Tags: a stale reference's current line, the lines an ambiguous
// or missing oldText could mean). A stale reference's message quotes the
// agent's own reference, which is not a line it was shown: it is not
// among them.
func problemsShown(b *hashline.BatchError) versions.Lines {
	var nums []int
	for _, p := range b.Problems {
		nums = append(nums, taggedNumbers(p.Fresh)...)
		nums = append(nums, p.Tags...)
	}
	return versions.LinesOf(nums...)
}

func taggedNumbers(lines []hashline.TaggedLine) []int {
	out := make([]int, len(lines))
	for i, l := range lines {
		out[i] = l.Number
	}
	return out
}

// notShownMessage is the status message of references that name no line
// the agent was shown (versions.Unshown), or two (versions.Ambiguous).
func notShownMessage(e *StaleError) string {
	return fmt.Sprintf("your references do not each name one line you were shown, in this file as it is now (%s) or in a version of it you read before: "+
		"a line number you never saw names nothing you read, one that names different lines in two versions you read names neither, "+
		"and a short hash matching there proves nothing, so nothing was written. "+
		"Check the current lines below (>>> marks the line numbers you referenced) and retry with their refs; send edits made from different reads in separate calls\n%s",
		e.CurrentVersion, e.Batch.StaleLines())
}
