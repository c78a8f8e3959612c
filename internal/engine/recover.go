package engine

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"

	"github.com/hashline/hashline/internal/history"
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
	// Restored is the number of sets whose history entries were recorded
	// from their records (engine.Open only): the history had not written
	// them, or not their outcome.
	Restored int
	// Resolved is the number of history entries a crash left pending (a
	// change prepared, its outcome not written) that Open resolved from
	// the disk; Unmade those of them whose change was not made.
	Resolved, Unmade int
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
	return recoverSets(ws, log, nil, logger)
}

// recoverSets is Recover recording each set in hist (if not nil) as it
// finishes it: the entry its record carries, with the files of the steps
// done (record.go, resolveSteps), in the history before the record goes.
// Sets are finished in the order of their entries, so that each keeps
// the id it was given.
func recoverSets(ws *workspace.Workspace, log *state.Intents, hist *history.Log, logger *slog.Logger) (Recovered, error) {
	var r Recovered
	pending, err := log.Pending()
	if err != nil {
		return r, err
	}
	entries := make([]*history.Change, len(pending))
	if hist != nil {
		for i, p := range pending {
			if p.History == nil {
				continue
			}
			c, err := history.Decode(p.History)
			if err != nil {
				logger.Error("intent log: a change set's history entry cannot be read; the set is finished without it", "changeSet", p.ID, "err", err)
				continue
			}
			entries[i] = &c
		}
		order := make([]int, len(pending))
		for i := range order {
			order[i] = i
		}
		seq := func(i int) uint64 {
			if entries[i] == nil {
				return 0
			}
			return entries[i].ID.Seq()
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(seq(a), seq(b)) })
		sorted, sortedEntries := make([]state.Pending, len(order)), make([]*history.Change, len(order))
		for k, i := range order {
			sorted[k], sortedEntries[k] = pending[i], entries[i]
		}
		pending, entries = sorted, sortedEntries
	}
	for i, p := range pending {
		redone, lost := 0, false
		steps := make([]workspace.Step, len(p.Steps))
		did := make([]bool, len(p.Steps))
		for j, st := range p.Steps {
			kind := workspace.StepRename
			if st.Op == "remove" {
				kind = workspace.StepRemove
			}
			steps[j] = workspace.Step{Kind: kind, Path: st.Path, From: st.From, To: st.To, Version: st.Version, New: st.New, Replaces: st.Replaces}
			out, why, err := ws.Redo(steps[j])
			if err != nil {
				return r, fmt.Errorf("change set %s, committed before a crash, could not be finished: %w; fix the cause and start again (its record is %s/%s.intent)", p.ID, err, log.Dir(), p.ID)
			}
			switch out {
			case workspace.RedoDone:
				did[j] = true
			case workspace.RedoDid:
				did[j] = true
				redone++
			case workspace.RedoSkipped:
				r.Skipped++
				logger.Warn("intent log: a step of a committed change set was not redone, so as not to overwrite a later change", "changeSet", p.ID, "path", st.Path, "why", why)
			case workspace.RedoLost:
				lost = true
				logger.Error("intent log: a committed change set cannot be finished: a staged content is gone; the set is applied only in part, check its files", "changeSet", p.ID, "path", st.Path, "why", why)
			}
		}
		if c := entries[i]; c != nil {
			id, err := resolveSteps(hist, *c, steps, did)
			if err == nil && ws.Fsync() {
				err = hist.Sync()
			}
			if err != nil {
				// The record stays: the next start records the set again.
				return r, fmt.Errorf("change set %s, committed before a crash, was finished but could not be recorded in the change history: %w; fix the cause and start again", p.ID, err)
			}
			r.Restored++
			if id != c.ID {
				logger.Warn("history: a change set finished in part is recorded with the files it changed", "changeSet", p.ID, "change", id.String(), "prepared", c.ID.String())
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

// recoverHistory resolves the history entries a crash left pending, after
// recoverSets: changes prepared whose outcome the history did not write
// (record.go). Each is the last entry of its files, so the disk tells:
// made if every file is as the change left it (diskShows).
func recoverHistory(ws *workspace.Workspace, hist *history.Log, logger *slog.Logger, r *Recovered) error {
	cs, err := hist.Unresolved()
	if err != nil {
		return fmt.Errorf("history: reading the changes a crash left pending: %w", err)
	}
	for _, c := range cs {
		made := diskShows(ws, c)
		if err := hist.Resolve(c.ID, made); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		r.Resolved++
		if !made {
			r.Unmade++
		}
		logger.Info("history: resolved a change a crash left pending", "change", c.ID.String(), "made", made)
	}
	if len(cs) == 0 {
		return nil
	}
	if ws.Fsync() {
		return hist.Sync()
	}
	return hist.Write()
}
