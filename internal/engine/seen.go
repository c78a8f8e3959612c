package engine

import (
	"fmt"

	"github.com/hashline/hashline/internal/versions"
)

// What each agent saw: per (agent, file) the engine records the versions
// the agent was shown (versions.Views) and which lines of each: a Read's
// page, a Grep's matches and context, an Edit's windows (versions.EditShown),
// a Write's whole content, the lines a refusal showed (refused). What an
// Edit's references then name is versions.Resolve's policy (rebase,
// versions.go): the engine only records, and asks.

// refused returns err, the refusal of an edit of the file whose view key is
// key, now at version. An error that shows the agent current tags (a
// conflict's or a stale reference's fresh lines, the lines an oldText could
// mean: versions.RefusalShown) makes that version the last the agent saw,
// with those lines: its retries use those tags, so they are checked
// against it first.
func (s *Engine) refused(agent, key, version string, err error) error {
	if lines, ok := versions.RefusalShown(err); ok {
		s.views.See(agent, key, versions.Seen{Version: version, Lines: lines})
	}
	return err
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
