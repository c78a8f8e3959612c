package client

import (
	"fmt"
	"strings"
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

// Sentinels for errors.Is; they match any server error with that reason.
// There is one for every hashlinev1.ErrorReason, the authoritative list
// (proto/hashline/v1/errors.proto says what each means and which gRPC code
// it comes with). ErrCanceled and ErrDeadlineExceeded match only the
// server's own reasons: a call this client cancels, or whose deadline
// passes before the server answers, fails with the bare gRPC status.
var (
	ErrStaleRef           = sentinel(hashlinev1.ErrorReason_ERROR_REASON_STALE_REF)
	ErrVersionMismatch    = sentinel(hashlinev1.ErrorReason_ERROR_REASON_VERSION_MISMATCH)
	ErrInvalidRef         = sentinel(hashlinev1.ErrorReason_ERROR_REASON_INVALID_REF)
	ErrLineOutOfRange     = sentinel(hashlinev1.ErrorReason_ERROR_REASON_LINE_OUT_OF_RANGE)
	ErrOverlappingEdits   = sentinel(hashlinev1.ErrorReason_ERROR_REASON_OVERLAPPING_EDITS)
	ErrEmptyEdits         = sentinel(hashlinev1.ErrorReason_ERROR_REASON_EMPTY_EDITS)
	ErrInvalidEdit        = sentinel(hashlinev1.ErrorReason_ERROR_REASON_INVALID_EDIT)
	ErrAmbiguousText      = sentinel(hashlinev1.ErrorReason_ERROR_REASON_AMBIGUOUS_TEXT)
	ErrNoChange           = sentinel(hashlinev1.ErrorReason_ERROR_REASON_NO_CHANGE)
	ErrTextNotFound       = sentinel(hashlinev1.ErrorReason_ERROR_REASON_TEXT_NOT_FOUND)
	ErrNotRead            = sentinel(hashlinev1.ErrorReason_ERROR_REASON_NOT_READ)
	ErrNotFound           = sentinel(hashlinev1.ErrorReason_ERROR_REASON_NOT_FOUND)
	ErrAlreadyExists      = sentinel(hashlinev1.ErrorReason_ERROR_REASON_ALREADY_EXISTS)
	ErrOutsideRoot        = sentinel(hashlinev1.ErrorReason_ERROR_REASON_OUTSIDE_ROOT)
	ErrVCSMetadata        = sentinel(hashlinev1.ErrorReason_ERROR_REASON_VCS_METADATA)
	ErrNotRegularFile     = sentinel(hashlinev1.ErrorReason_ERROR_REASON_NOT_REGULAR_FILE)
	ErrBinaryFile         = sentinel(hashlinev1.ErrorReason_ERROR_REASON_BINARY_FILE)
	ErrNotText            = sentinel(hashlinev1.ErrorReason_ERROR_REASON_NOT_TEXT)
	ErrTooLarge           = sentinel(hashlinev1.ErrorReason_ERROR_REASON_TOO_LARGE)
	ErrInvalidPath        = sentinel(hashlinev1.ErrorReason_ERROR_REASON_INVALID_PATH)
	ErrInvalidPattern     = sentinel(hashlinev1.ErrorReason_ERROR_REASON_INVALID_PATTERN)
	ErrInvalidArgument    = sentinel(hashlinev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT)
	ErrBinaryContent      = sentinel(hashlinev1.ErrorReason_ERROR_REASON_BINARY_CONTENT)
	ErrRequestIDReused    = sentinel(hashlinev1.ErrorReason_ERROR_REASON_REQUEST_ID_REUSED)
	ErrPermissionDenied   = sentinel(hashlinev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED)
	ErrNotWritable        = sentinel(hashlinev1.ErrorReason_ERROR_REASON_NOT_WRITABLE)
	ErrIO                 = sentinel(hashlinev1.ErrorReason_ERROR_REASON_IO_ERROR)
	ErrCanceled           = sentinel(hashlinev1.ErrorReason_ERROR_REASON_CANCELED)
	ErrDeadlineExceeded   = sentinel(hashlinev1.ErrorReason_ERROR_REASON_DEADLINE_EXCEEDED)
	ErrInternal           = sentinel(hashlinev1.ErrorReason_ERROR_REASON_INTERNAL)
	ErrUnauthenticated    = sentinel(hashlinev1.ErrorReason_ERROR_REASON_UNAUTHENTICATED)
	ErrReadOnly           = sentinel(hashlinev1.ErrorReason_ERROR_REASON_READ_ONLY)
	ErrPathNotAllowed     = sentinel(hashlinev1.ErrorReason_ERROR_REASON_PATH_NOT_ALLOWED)
	ErrRateLimited        = sentinel(hashlinev1.ErrorReason_ERROR_REASON_RATE_LIMITED)
	ErrTooManyStreams     = sentinel(hashlinev1.ErrorReason_ERROR_REASON_TOO_MANY_STREAMS)
	ErrShuttingDown       = sentinel(hashlinev1.ErrorReason_ERROR_REASON_SHUTTING_DOWN)
	ErrWatchUnavailable   = sentinel(hashlinev1.ErrorReason_ERROR_REASON_WATCH_UNAVAILABLE)
	ErrDirectoryNotEmpty  = sentinel(hashlinev1.ErrorReason_ERROR_REASON_DIRECTORY_NOT_EMPTY)
	ErrConflictingChanges = sentinel(hashlinev1.ErrorReason_ERROR_REASON_CONFLICTING_CHANGES)
)

func sentinel(r hashlinev1.ErrorReason) *Error { return &Error{Reason: ReasonName(r)} }

// The wire form of a reason is its enum value's name without the prefix
// that buf's lint rules make every value of an enum carry.
const (
	errorReasonPrefix    = "ERROR_REASON_"
	staleRefReasonPrefix = "STALE_REF_REASON_"
)

// ReasonName returns the string the server sends for r in
// ErrorInfo.reason and EditError.reason, and that Error.Reason holds: the
// value's name without its ERROR_REASON_ prefix, e.g. "STALE_REF". It is
// "" for ERROR_REASON_UNSPECIFIED and for numbers the enum does not have.
func ReasonName(r hashlinev1.ErrorReason) string {
	return wireName(hashlinev1.ErrorReason_name[int32(r)], errorReasonPrefix)
}

// ParseReason returns the ErrorReason a reason string names (the inverse
// of ReasonName), or ERROR_REASON_UNSPECIFIED for one this client does not
// know, such as a newer server's. Error.Reason keeps the string either way.
func ParseReason(reason string) hashlinev1.ErrorReason {
	return hashlinev1.ErrorReason(parseWire(hashlinev1.ErrorReason_value, errorReasonPrefix, reason))
}

// StaleRefReasonName returns the string the server sends for r in
// StaleRef.reason, e.g. "CONFLICT"; "" for STALE_REF_REASON_UNSPECIFIED
// and for numbers the enum does not have.
func StaleRefReasonName(r hashlinev1.StaleRefReason) string {
	return wireName(hashlinev1.StaleRefReason_name[int32(r)], staleRefReasonPrefix)
}

// ParseStaleRefReason returns the StaleRefReason a StaleRef.reason string
// names, or STALE_REF_REASON_UNSPECIFIED for one this client does not know.
func ParseStaleRefReason(reason string) hashlinev1.StaleRefReason {
	return hashlinev1.StaleRefReason(parseWire(hashlinev1.StaleRefReason_value, staleRefReasonPrefix, reason))
}

func wireName(name, prefix string) string {
	if name == "" || name == prefix+"UNSPECIFIED" {
		return ""
	}
	return strings.TrimPrefix(name, prefix)
}

// parseWire returns 0, the UNSPECIFIED value, for any name not in values.
func parseWire(values map[string]int32, prefix, reason string) int32 {
	return values[prefix+reason]
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
		case *hashlinev1.RetryInfo:
			e.RetryDelay = d.GetRetryDelay().AsDuration()
		}
	}
	if e.Reason == ErrStaleRef.Reason {
		return StaleRefError{Err: e, Refs: e.Stale, CurrentVersion: e.Metadata["currentVersion"]}
	}
	return e
}
