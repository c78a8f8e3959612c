package server

import (
	"context"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
)

// Revert undoes one change of the history, rebased over every change
// since; a later change in the way refuses it (REVERT_CONFLICT). The
// access check needs write access to every path of the change (auth.go).
// A request_id makes a retry return the first call's outcome.
func (s *Service) Revert(ctx context.Context, req *hashlinev1.RevertRequest) (*hashlinev1.RevertResponse, error) {
	ctx = change(ctx, req)
	return once(ctx, s, req, req.GetRequestId(), req.GetDryRun(), func() (*hashlinev1.RevertResponse, error) {
		r, err := s.e.Revert(ctx, engine.RevertRequest{ChangeID: req.GetChangeId(), DryRun: req.GetDryRun()})
		return answer(r, err, revertResponse)
	})
}

func revertResponse(r *engine.RevertResult) *hashlinev1.RevertResponse {
	return &hashlinev1.RevertResponse{ChangeId: r.ChangeID, Reverted: r.Reverted, Results: changeResults(r.Results), DryRun: r.DryRun, Warnings: r.Warnings}
}
