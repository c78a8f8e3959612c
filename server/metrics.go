package server

import (
	"context"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/wire"
)

// Outcomes of the calls that change files, the values of the outcome label
// of hashline_edit_outcomes_total (Edit) and hashline_change_outcomes_total
// (Delete, Move, Apply).
const (
	OutcomeApplied  = "applied"   // written, no rebase needed
	OutcomeRebased  = "rebased"   // written after rebasing over other changes
	OutcomeDryRun   = "dry_run"   // checked and planned, not written
	OutcomeStale    = "stale"     // STALE_REF: a reference no longer matches
	OutcomeConflict = "conflict"  // STALE_REF with a CONFLICT: a rebase met another change
	OutcomeNoChange = "no_change" // NO_CHANGE: the batch would not change the file
	// NO_CHANGE again: the agent sent the same no-op edits to the same
	// file after it was refused them (noop.go)
	OutcomeNoChangeRepeated = "no_change_repeated"
	OutcomeError            = "error" // any other refusal or failure
)

var outcomes = []string{OutcomeApplied, OutcomeRebased, OutcomeDryRun, OutcomeStale, OutcomeConflict, OutcomeNoChange, OutcomeNoChangeRepeated, OutcomeError}

// Outcomes lists every Edit outcome, so that an exporter can show each
// from the start, at 0.
func Outcomes() []string { return slices.Clone(outcomes) }

// Metrics records what the server does; server/metrics implements it with
// Prometheus. It is an interface, not that implementation, so that the
// programs linking this package without serving metrics (the CLI's --local
// and its MCP bridge) do not link and initialise Prometheus.
type Metrics interface {
	// UnaryServerInterceptor and StreamServerInterceptor see every call,
	// first in the chain (refused calls are counted too).
	UnaryServerInterceptor() grpc.UnaryServerInterceptor
	StreamServerInterceptor() grpc.StreamServerInterceptor
	// CountEdit records the outcome (one of Outcomes) of an Edit that
	// reached the service.
	CountEdit(outcome string)
	// CountChange records the outcome (one of Outcomes) of a Delete, Move
	// or Apply that reached the service; method is one of ChangeMethods.
	CountChange(method, outcome string)
	// InitializeMetrics is called with the server once its services are
	// registered.
	InitializeMetrics(*grpc.Server)
}

// changeMethods maps the full names of the calls counted by CountChange to
// their method label.
var changeMethods = map[string]string{
	hashlinev1.FileService_Delete_FullMethodName: "delete",
	hashlinev1.FileService_Move_FullMethodName:   "move",
	hashlinev1.FileService_Apply_FullMethodName:  "apply",
}

// ChangeMethods lists the method label's values of CountChange, sorted.
func ChangeMethods() []string {
	var m []string
	for _, v := range changeMethods {
		m = append(m, v)
	}
	slices.Sort(m)
	return m
}

// EditOutcome classifies a finished Edit, Delete, Move or Apply call. It is
// the one place that decides what counts as which outcome. An Apply is
// rebased when any of its edits was, and refused as its status says (the
// first failing change's).
func EditOutcome(resp any, err error) string {
	if err == nil {
		switch r := resp.(type) {
		case *hashlinev1.EditResponse:
			switch {
			case r.GetDryRun():
				return OutcomeDryRun
			case r.GetRebasedFrom() != "":
				return OutcomeRebased
			}
		case *hashlinev1.ApplyResponse:
			if r.GetDryRun() {
				return OutcomeDryRun
			}
			for _, c := range r.GetResults() {
				if c.GetEdit().GetRebasedFrom() != "" {
					return OutcomeRebased
				}
			}
		}
		return OutcomeApplied
	}
	st, ok := status.FromError(err)
	if !ok {
		return OutcomeError
	}
	reason := ""
	conflict, repeated := false, false
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *hashlinev1.ErrorInfo:
			reason = d.GetReason()
			_, repeated = d.GetMetadata()["repeated"]
		case *hashlinev1.StaleRef:
			conflict = conflict || wire.ParseStaleRefReason(d.GetReason()) == hashlinev1.StaleRefReason_STALE_REF_REASON_CONFLICT
		}
	}
	switch {
	case wire.ParseReason(reason) == ReasonStaleRef && conflict:
		return OutcomeConflict
	case wire.ParseReason(reason) == ReasonStaleRef:
		return OutcomeStale
	case wire.ParseReason(reason) == ReasonNoChange && repeated:
		return OutcomeNoChangeRepeated
	case wire.ParseReason(reason) == ReasonNoChange:
		return OutcomeNoChange
	}
	return OutcomeError
}

// editOutcomes counts every Edit, Delete, Move and Apply that reached the
// service by outcome.
func editOutcomes(m Metrics) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if info.FullMethod == hashlinev1.FileService_Edit_FullMethodName {
			m.CountEdit(EditOutcome(resp, err))
		} else if method, ok := changeMethods[info.FullMethod]; ok {
			m.CountChange(method, EditOutcome(resp, err))
		}
		return resp, err
	}
}
