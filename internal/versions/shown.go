package versions

import (
	"errors"

	"github.com/hashline/hashline/internal/hashline"
)

// What a response showed the agent, as the lines of a version that Views
// records (Views.See): Resolve reads the agent's next references against
// the versions it saw, and counts only the lines it was shown there. A
// Read's page, a Grep's matches and a Write's content say so themselves;
// an Edit's reply and a refusal are worked out here, from the line numbers
// they carry, never from the text of their messages.

// EditShown returns what an Edit's reply showed the agent of version, the
// one the edit (res, applied to prev) wrote: its windows, or every line
// with full; and the lines the agent was shown of prevVersion, the one
// the edit replaced, when it saw it (views), that the edit left alone,
// carried to their new numbers (Carry), since the reply says how they
// moved.
func EditShown(version string, prev *hashline.Document, res *hashline.Result, full bool, views []Seen, prevVersion string) Seen {
	if full {
		return Seen{Version: version, Lines: Range(1, res.Doc.Len())}
	}
	seen := Seen{Version: version}
	for _, w := range res.Windows {
		seen.Lines = seen.Lines.Union(Range(w.Start, w.End))
	}
	for _, v := range views {
		if v.Version == prevVersion {
			lines, moved := Carry(v, EditHunks(prev, res))
			seen.Lines, seen.Moved = seen.Lines.Union(lines), moved
		}
	}
	return seen
}

// EditHunks are the edit's changes as Carry takes them: the batch's own
// hunks, which need no diff of the two versions. Should they not add up to
// the new file's length (they always should), the versions are diffed
// instead.
func EditHunks(prev *hashline.Document, res *hashline.Result) []Hunk {
	out := make([]Hunk, len(res.Hunks))
	oldEnd, newEnd := 0, 0
	for i, h := range res.Hunks {
		out[i] = Hunk{A0: h.OldStart, A1: h.OldEnd, B0: h.NewStart, B1: h.NewEnd}
		if h.OldStart < oldEnd || h.OldStart-oldEnd != h.NewStart-newEnd {
			return Diff(prev, res.Doc)
		}
		oldEnd, newEnd = h.OldEnd, h.NewEnd
	}
	if prev.Len()-oldEnd != res.Doc.Len()-newEnd {
		return Diff(prev, res.Doc)
	}
	return out
}

// RefusalShown returns the lines of the current file that err, the refusal
// of an Edit checked against it, showed the agent as tags, and whether it
// showed any: a conflict's (conflictShown), or those of a batch error that
// shows tags (a stale reference's fresh lines, the lines an oldText could
// mean: problemsShown). Those tags are what the agent's retry uses, so the
// caller records the lines as the agent's latest view of the current
// version, to be checked against first. An error that shows no tags
// leaves the view as it was (ok false).
func RefusalShown(err error) (lines Lines, ok bool) {
	var b *hashline.BatchError
	var c *ConflictError
	switch {
	case errors.As(err, &c):
		return conflictShown(c), true
	case errors.As(err, &b) && b.ShowsTags():
		return problemsShown(b), true
	}
	return nil, false
}

// conflictShown returns the current lines a conflict showed: the fresh
// lines and current line of each failing reference, and the current lines
// of the references that still hold (the message lists those that moved
// with their new numbers; the others kept theirs).
func conflictShown(c *ConflictError) Lines {
	var nums []int
	for _, k := range c.Conflicts {
		nums = append(nums, taggedNumbers(k.Fresh)...)
		if k.Current > 0 {
			nums = append(nums, k.Current)
		}
	}
	nums = append(nums, c.Held...)
	return LinesOf(nums...)
}

// problemsShown returns the lines of the current file that the problems of
// b showed as tags: their fresh lines, and the lines each shows besides
// (hashline.Problem.Tags: a stale reference's current line, the lines an
// ambiguous or missing oldText could mean). A stale reference's message
// also quotes the agent's own reference, which is not a line it was shown:
// that is not among them.
func problemsShown(b *hashline.BatchError) Lines {
	var nums []int
	for _, p := range b.Problems {
		nums = append(nums, taggedNumbers(p.Fresh)...)
		nums = append(nums, p.Tags...)
	}
	return LinesOf(nums...)
}

func taggedNumbers(lines []hashline.TaggedLine) []int {
	out := make([]int, len(lines))
	for i, l := range lines {
		out[i] = l.Number
	}
	return out
}
