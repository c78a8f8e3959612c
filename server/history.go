package server

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
)

// The change history's messages and the engine's domain types: History
// and Blame.

// historyRequest is req as the engine takes it; the caller sees only the
// files its token may (allowed).
func historyRequest(ctx context.Context, req *hashlinev1.HistoryRequest) engine.HistoryRequest {
	r := engine.HistoryRequest{
		Path:       req.GetPath(),
		Agent:      req.GetAgent(),
		MaxEntries: int(req.GetMaxEntries()),
		PageToken:  req.GetPageToken(),
		Diff:       req.GetIncludeDiff(),
		Visible:    func(p string) bool { return allowed(ctx, p) },
	}
	if req.GetSince() != nil {
		r.Since = req.GetSince().AsTime()
	}
	if req.GetUntil() != nil {
		r.Until = req.GetUntil().AsTime()
	}
	return r
}

func historyResponse(r *engine.HistoryResult) *hashlinev1.HistoryResponse {
	resp := &hashlinev1.HistoryResponse{
		Entries:       make([]*hashlinev1.HistoryEntry, len(r.Entries)),
		NextPageToken: r.NextPageToken,
		OlderDropped:  r.OlderDropped,
	}
	for i, e := range r.Entries {
		m := &hashlinev1.HistoryEntry{
			ChangeId:  e.ID,
			Agent:     e.Agent,
			Time:      timestamppb.New(e.Time),
			Kind:      hashlinev1.ChangeKind(e.Kind), // the enum's numbers are history.Kind's
			Files:     make([]*hashlinev1.HistoryFile, len(e.Files)),
			RequestId: e.RequestID,
			Reverts:   e.Reverts,
		}
		for j, f := range e.Files {
			m.Files[j] = &hashlinev1.HistoryFile{
				Path: f.Path, FromPath: f.From, OldVersion: f.Before, NewVersion: f.After,
				LinesAdded: int32(f.Added), LinesRemoved: int32(f.Removed), Diff: f.Diff, DiffOmitted: f.DiffOmitted,
			}
		}
		resp.Entries[i] = m
	}
	return resp
}

func blameRequest(req *hashlinev1.BlameRequest) engine.BlameRequest {
	return engine.BlameRequest{Path: req.GetPath(), Offset: int(req.GetOffset()), Limit: int(req.GetLimit())}
}

func blameResponse(r *engine.BlameResult) *hashlinev1.BlameResponse {
	resp := &hashlinev1.BlameResponse{
		Path:       r.Path,
		Version:    r.Version,
		Lines:      make([]*hashlinev1.BlameLine, len(r.Lines)),
		TotalLines: int32(r.TotalLines),
		Truncated:  r.Truncated,
		NextOffset: int32(r.NextOffset),
	}
	for i, l := range r.Lines {
		m := &hashlinev1.BlameLine{
			Line:          &hashlinev1.Line{Number: int32(l.Number), Hash: l.Hash, Content: l.Content},
			ChangeId:      l.ChangeID,
			Agent:         l.Agent,
			BeforeHistory: l.BeforeHistory,
		}
		if !l.BeforeHistory {
			m.Time = timestamppb.New(l.Time)
		}
		resp.Lines[i] = m
	}
	return resp
}
