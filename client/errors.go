package client

import (
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// Error is an error the server returned, decoded from its status. Compare
// with the sentinels below using errors.Is, which matches on Reason.
type Error struct {
	// Code is the gRPC status code.
	Code codes.Code
	// Reason is the server's exact reason, e.g. "NOT_FOUND", "STALE_REF".
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
	// RetryDelay is how long to wait before trying again, when the server
	// said (RATE_LIMITED); zero otherwise.
	RetryDelay time.Duration

	st *status.Status
}

func (e *Error) Error() string {
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

// Sentinels for errors.Is; they match any server error with that reason.
var (
	ErrStaleRef         = &Error{Reason: "STALE_REF"}
	ErrVersionMismatch  = &Error{Reason: "VERSION_MISMATCH"}
	ErrNotFound         = &Error{Reason: "NOT_FOUND"}
	ErrAlreadyExists    = &Error{Reason: "ALREADY_EXISTS"}
	ErrOutsideRoot      = &Error{Reason: "OUTSIDE_ROOT"}
	ErrVCSMetadata      = &Error{Reason: "VCS_METADATA"}
	ErrNotWritable      = &Error{Reason: "NOT_WRITABLE"}
	ErrNotRegularFile   = &Error{Reason: "NOT_REGULAR_FILE"}
	ErrBinaryFile       = &Error{Reason: "BINARY_FILE"}
	ErrNotText          = &Error{Reason: "NOT_TEXT"}
	ErrTooLarge         = &Error{Reason: "TOO_LARGE"}
	ErrNoChange         = &Error{Reason: "NO_CHANGE"}
	ErrInvalidRef       = &Error{Reason: "INVALID_REF"}
	ErrLineOutOfRange   = &Error{Reason: "LINE_OUT_OF_RANGE"}
	ErrOverlappingEdits = &Error{Reason: "OVERLAPPING_EDITS"}
	ErrEmptyEdits       = &Error{Reason: "EMPTY_EDITS"}
	ErrTextNotFound     = &Error{Reason: "TEXT_NOT_FOUND"}
	ErrAmbiguousText    = &Error{Reason: "AMBIGUOUS_TEXT"}
	ErrInvalidEdit      = &Error{Reason: "INVALID_EDIT"}
	ErrNotRead          = &Error{Reason: "NOT_READ"}
	ErrInvalidPath      = &Error{Reason: "INVALID_PATH"}
	ErrInvalidPattern   = &Error{Reason: "INVALID_PATTERN"}
	ErrBinaryContent    = &Error{Reason: "BINARY_CONTENT"}
	ErrUnauthenticated  = &Error{Reason: "UNAUTHENTICATED"}
	ErrReadOnly         = &Error{Reason: "READ_ONLY"}
	ErrPathNotAllowed   = &Error{Reason: "PATH_NOT_ALLOWED"}
	ErrRateLimited      = &Error{Reason: "RATE_LIMITED"}
	ErrTooManyStreams   = &Error{Reason: "TOO_MANY_STREAMS"}
	ErrShuttingDown     = &Error{Reason: "SHUTTING_DOWN"}
)

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
		case *hashlinev1.RetryInfo:
			e.RetryDelay = d.GetRetryDelay().AsDuration()
		}
	}
	if e.Reason == "STALE_REF" {
		return StaleRefError{Err: e, Refs: e.Stale, CurrentVersion: e.Metadata["currentVersion"]}
	}
	return e
}
