package server

import (
	"fmt"
	"log/slog"

	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/workspace"
)

// Recover finishes the change sets a crash left committed (their intent
// records, state.Intents) in ws, and removes their records. Run it at start,
// before the temp-file sweep (which would remove a committed set's staged
// files) and before serving. Every record is decoded before any step is
// done, so a damaged record fails the start with nothing replayed; each
// step is done only if it is not done yet (workspace.Redo), so a crash
// during Recover is finished by the next one. It returns the number of sets
// finished.
func Recover(ws *workspace.Workspace, log *state.Intents, logger *slog.Logger) (int, error) {
	pending, err := log.Pending()
	if err != nil {
		return 0, err
	}
	for i, p := range pending {
		redone := 0
		for _, st := range p.Steps {
			kind := workspace.StepRename
			if st.Op == "remove" {
				kind = workspace.StepRemove
			}
			did, skipped, err := ws.Redo(workspace.Step{Kind: kind, Path: st.Path, From: st.From, To: st.To, Version: st.Version})
			if err != nil {
				return i, fmt.Errorf("change set %s, committed before a crash, could not be finished: %w; fix the cause and start again (its record is %s/%s.intent)", p.ID, err, log.Dir(), p.ID)
			}
			if did {
				redone++
			}
			if skipped != "" {
				logger.Warn("intent log: a step of a committed change set was not redone", "changeSet", p.ID, "path", st.Path, "why", skipped)
			}
		}
		if err := p.Done(); err != nil {
			return i, fmt.Errorf("intent log: %w", err)
		}
		logger.Info("intent log: finished a change set committed before a crash", "changeSet", p.ID, "steps", len(p.Steps), "redone", redone)
	}
	return len(pending), nil
}
