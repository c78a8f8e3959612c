package server

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

func TestEditOutcome(t *testing.T) {
	stale := func(why string) error {
		st, _ := status.New(codes.Aborted, "stale").WithDetails(
			protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{Reason: "STALE_REF", Domain: Domain}),
			protoadapt.MessageV1Of(&hashlinev1.StaleRef{Reason: "CHANGED"}),
			protoadapt.MessageV1Of(&hashlinev1.StaleRef{Reason: why}))
		return st.Err()
	}
	tests := []struct {
		name string
		resp any
		err  error
		want string
	}{
		{"written", &hashlinev1.EditResponse{Version: "v1-x"}, nil, OutcomeApplied},
		{"written after a rebase", &hashlinev1.EditResponse{RebasedFrom: "v1-old"}, nil, OutcomeRebased},
		{"dry run", &hashlinev1.EditResponse{DryRun: true, RebasedFrom: "v1-old"}, nil, OutcomeDryRun},
		{"change set written", &hashlinev1.ApplyResponse{Results: []*hashlinev1.ChangeResult{{Result: &hashlinev1.ChangeResult_Delete{}}}}, nil, OutcomeApplied},
		{"change set with a rebased edit", &hashlinev1.ApplyResponse{Results: []*hashlinev1.ChangeResult{
			{Result: &hashlinev1.ChangeResult_Write{}}, {Result: &hashlinev1.ChangeResult_Edit{Edit: &hashlinev1.EditResponse{RebasedFrom: "v1-old"}}}}}, nil, OutcomeRebased},
		{"change set dry run", &hashlinev1.ApplyResponse{DryRun: true}, nil, OutcomeDryRun},
		{"move", &hashlinev1.MoveResponse{}, nil, OutcomeApplied},
		{"stale reference", nil, stale("DELETED"), OutcomeStale},
		{"rebase conflict", nil, stale("CONFLICT"), OutcomeConflict},
		{"no change", nil, newStatus(ReasonNoChange, "same", nil), OutcomeNoChange},
		{"the same no change again", nil, newStatus(ReasonNoChange, "same", map[string]string{"repeated": "1"}), OutcomeNoChangeRepeated},
		{"other refusal", nil, newStatus(ReasonNotFound, "gone", nil), OutcomeError},
		{"bare status", nil, status.Error(codes.Internal, "boom"), OutcomeError},
		{"not a status", nil, errors.New("boom"), OutcomeError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EditOutcome(tt.resp, tt.err); got != tt.want {
				t.Errorf("EditOutcome = %s, want %s", got, tt.want)
			}
		})
	}
}
