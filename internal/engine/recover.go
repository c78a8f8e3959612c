package engine

import (
	"fmt"
	"log/slog"

	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// Recovered is what Recover did.
type Recovered struct {
	// Sets is the number of change sets whose records were found and
	// finished (their records removed).
	Sets int
	// Skipped is the number of steps not redone because their file was
	// changed since the set was planned (each is logged).
	Skipped int
	// Unfinished is the number of sets that could not be finished whole
	// because a staged content was gone (its temp file removed) before it
	// was put in place (each is logged as an error).
	Unfinished int
}

// Recover finishes the change sets a crash (or a commit that failed) left
// committed (their intent records, state.Intents) in ws, and removes their
// records. Run it at start, before the temp-file sweep (which would remove
// a committed set's staged files) and before serving. Every record is
// decoded before any step is done, so a damaged record fails the start
// with nothing replayed; each step is done only if it is not done yet and
// only over what the set replaced (workspace.Redo), so a crash during
// Recover is finished by the next one and a change made since the set was
// planned is never overwritten.
func Recover(ws *workspace.Workspace, log *state.Intents, logger *slog.Logger) (Recovered, error) {
	var r Recovered
	pending, err := log.Pending()
	if err != nil {
		return r, err
	}
	for _, p := range pending {
		redone, lost := 0, false
		for _, st := range p.Steps {
			kind := workspace.StepRename
			if st.Op == "remove" {
				kind = workspace.StepRemove
			}
			out, why, err := ws.Redo(workspace.Step{Kind: kind, Path: st.Path, From: st.From, To: st.To, Version: st.Version, New: st.New, Replaces: st.Replaces})
			if err != nil {
				return r, fmt.Errorf("change set %s, committed before a crash, could not be finished: %w; fix the cause and start again (its record is %s/%s.intent)", p.ID, err, log.Dir(), p.ID)
			}
			switch out {
			case workspace.RedoDid:
				redone++
			case workspace.RedoSkipped:
				r.Skipped++
				logger.Warn("intent log: a step of a committed change set was not redone, so as not to overwrite a later change", "changeSet", p.ID, "path", st.Path, "why", why)
			case workspace.RedoLost:
				lost = true
				logger.Error("intent log: a committed change set cannot be finished: a staged content is gone; the set is applied only in part, check its files", "changeSet", p.ID, "path", st.Path, "why", why)
			}
		}
		if err := p.Done(); err != nil {
			return r, fmt.Errorf("intent log: %w", err)
		}
		r.Sets++
		if lost {
			r.Unfinished++
		}
		logger.Info("intent log: finished a change set committed before a crash", "changeSet", p.ID, "steps", len(p.Steps), "redone", redone)
	}
	return r, nil
}
