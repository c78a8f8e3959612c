package client

import (
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/wire"
)

// Error is an error the server returned, decoded from its status. Compare
// with the sentinels below using errors.Is, which matches on Reason.
type Error struct {
	// Code is the gRPC status code.
	Code codes.Code
	// Reason is the server's exact reason, e.g. "NOT_FOUND", "STALE_REF":
	// the ReasonName of a hashlinev1.ErrorReason (ParseReason gives the
	// value). A reason newer than this client is kept as sent.
	Reason string
	// Message is the server's message, written for a model to act on.
	Message string
	// Metadata holds extra facts such as "currentVersion".
	Metadata map[string]string
	// Edits lists the bad edits of a batch (INVALID_ARGUMENT and
	// FAILED_PRECONDITION errors about edits).
	Edits []*hashlinev1.EditError
	// Stale lists stale references even when another reason (say an
	// INVALID_REF in the same batch) decided the error's code.
	Stale []*hashlinev1.StaleRef
	// Changes lists every failing change of a refused change set (Apply),
	// in order; the error's Code and Reason are the first one's. The
	// Edits and Stale entries of a change carry its ChangeIndex.
	Changes []*hashlinev1.ChangeError
	// Later lists the later changes a refused Revert met (REVERT_CONFLICT),
	// oldest first: their ids, agents and paths. Stale then holds the lines
	// as they are now, with fresh tags.
	Later []*hashlinev1.LaterChange
	// RetryDelay is how long to wait before trying again, when the server
	// said (RATE_LIMITED); zero otherwise.
	RetryDelay time.Duration
	// TLS says what in the client's TLS set-up does not match the
	// server's, when that is why a call of a Dial-made Client could not
	// reach it (UNAVAILABLE); NoTLSProblem otherwise.
	TLS TLSProblem
	// NotSent is true when the call failed (UNAVAILABLE, DEADLINE_EXCEEDED
	// or CANCELED) before any attempt of it was sent on a connection: no
	// server saw it, so an Edit, Write, Delete, Move or Apply was not
	// applied. It is set for the calls that change files, of a Dial-made
	// Client; false means the call may have reached the server.
	NotSent bool
	// HTTPStatus is, for a call of a Client, the HTTP status of an answer
	// that was not gRPC's: an error page from a proxy in front of
	// hashlined (an Ingress controller's default backend, a load
	// balancer), which hashlined never sends; 0 otherwise. For a Client
	// given a workspace (WithWorkspace), a 404 is NOT_FOUND and a 502,
	// 503 or 504 UNAVAILABLE, with a Message that names the workspace,
	// says what to do and ends with the transport's words; without one,
	// Code and Message are the transport's (404: UNIMPLEMENTED).
	HTTPStatus int

	st *status.Status
}

func (e *Error) Error() string {
	if e.TLS != NoTLSProblem {
		return fmt.Sprintf("hashline: %s: %s: %s", e.Code, e.TLS, e.Message)
	}
	if e.Reason == "" {
		return fmt.Sprintf("hashline: %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("hashline: %s (%s): %s", e.Reason, e.Code, e.Message)
}

// Is reports whether target is an *Error with the same Reason, so
// errors.Is(err, client.ErrNotFound) works whatever the message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Reason != "" && t.Reason == e.Reason
}

// GRPCStatus returns the original status, so status.Code(err) still works.
func (e *Error) GRPCStatus() *status.Status { return e.st }

// sentinel is the sentinel of reason r; sentinels.go declares one for
// every reason.
func sentinel(r hashlinev1.ErrorReason) *Error { return &Error{Reason: ReasonName(r)} }

// ReasonName returns the string the server sends for r in
// ErrorInfo.reason and EditError.reason, and that Error.Reason holds: the
// value's name without its ERROR_REASON_ prefix, e.g. "STALE_REF". It is
// "" for ERROR_REASON_UNSPECIFIED and for numbers the enum does not have.
func ReasonName(r hashlinev1.ErrorReason) string { return wire.ReasonName(r) }

// ParseReason returns the ErrorReason a reason string names (the inverse
// of ReasonName), or ERROR_REASON_UNSPECIFIED for one this client does not
// know, such as a newer server's. Error.Reason keeps the string either way.
func ParseReason(reason string) hashlinev1.ErrorReason { return wire.ParseReason(reason) }

// StaleRefReasonName returns the string the server sends for r in
// StaleRef.reason, e.g. "CONFLICT"; "" for STALE_REF_REASON_UNSPECIFIED
// and for numbers the enum does not have.
func StaleRefReasonName(r hashlinev1.StaleRefReason) string { return wire.StaleRefReasonName(r) }

// ParseStaleRefReason returns the StaleRefReason a StaleRef.reason string
// names, or STALE_REF_REASON_UNSPECIFIED for one this client does not know.
func ParseStaleRefReason(reason string) hashlinev1.StaleRefReason {
	return wire.ParseStaleRefReason(reason)
}

// StaleRefError is an Edit refused because references no longer match the
// file. Refs has one entry per failing reference, each with fresh tagged
// lines to retry from; Err.Message is the same as a text view a model can
// read directly.
//
//	var stale client.StaleRefError
//	if errors.As(err, &stale) { ... stale.Refs[0].Fresh ... }
type StaleRefError struct {
	// Err is the decoded status (Reason "STALE_REF"; Message the text view).
	Err *Error
	// Refs describes each stale reference.
	Refs []*hashlinev1.StaleRef
	// CurrentVersion is the version the fresh lines come from.
	CurrentVersion string
}

// Error returns the server's text view of the stale lines.
func (e StaleRefError) Error() string { return e.Err.Error() }

// Unwrap exposes Err, so errors.Is(err, ErrStaleRef) holds.
func (e StaleRefError) Unwrap() error { return e.Err }

// FromStatus decodes a gRPC error into an *Error, or a StaleRefError for
// STALE_REF. nil stays nil; errors that carry no status are returned as is.
func FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	e := &Error{Code: st.Code(), Message: st.Message(), st: st}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *hashlinev1.ErrorInfo:
			e.Reason = d.GetReason()
			e.Metadata = d.GetMetadata()
		case *hashlinev1.EditError:
			e.Edits = append(e.Edits, d)
		case *hashlinev1.StaleRef:
			e.Stale = append(e.Stale, d)
		case *hashlinev1.ChangeError:
			e.Changes = append(e.Changes, d)
		case *hashlinev1.LaterChange:
			e.Later = append(e.Later, d)
		case *hashlinev1.RetryInfo:
			e.RetryDelay = d.GetRetryDelay().AsDuration()
		}
	}
	if e.Reason == ErrStaleRef.Reason {
		return StaleRefError{Err: e, Refs: e.Stale, CurrentVersion: e.Metadata["currentVersion"]}
	}
	return e
}
