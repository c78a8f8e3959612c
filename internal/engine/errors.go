package engine

import (
	"errors"
	"fmt"

	"github.com/hashline/hashline/internal/hashline"
)

// The reasons the engine gives its own refusals, as the core planner gives
// its own (hashline.Reason): each is the name of a value of the API's
// ErrorReason (proto/hashline/v1/errors.proto, where every reason is
// declared, with its gRPC code) without its ERROR_REASON_ prefix. The
// server's TestCoreReasonsAreInTheEnum checks each one.
const (
	ReasonInvalidArgument    hashline.Reason = "INVALID_ARGUMENT"
	ReasonRequestIDReused    hashline.Reason = "REQUEST_ID_REUSED"
	ReasonInvalidPattern     hashline.Reason = "INVALID_PATTERN"
	ReasonLineOutOfRange     hashline.Reason = "LINE_OUT_OF_RANGE"
	ReasonBinaryContent      hashline.Reason = "BINARY_CONTENT"
	ReasonConflictingChanges hashline.Reason = "CONFLICTING_CHANGES"
)

// NotReadError is an edit that refers to the content of a file the agent
// has not seen.
type NotReadError struct {
	Path, Agent string
	Edit        int // the index of the first edit that needs the file's lines
	Op          hashline.Op
}

func (e *NotReadError) Error() string {
	return fmt.Sprintf("edit %d (%s): agent %q has not read %s; Read it (or Grep it) first, then edit with the tags it returns. Only append and prepend work on a file you have not read",
		e.Edit, e.Op, e.Agent, e.Path)
}

// RequestRunningError is a retry that gave up waiting for the first call
// with its request_id, which is still running and may yet write.
type RequestRunningError struct {
	ID  string
	Err error // the retry's context error
}

func (e *RequestRunningError) Error() string {
	return fmt.Sprintf("the first call with request_id %q is still running and may yet apply; retry with the same request_id (and a longer deadline) to get its outcome", e.ID)
}

func (e *RequestRunningError) Unwrap() error { return e.Err }

// ErrShuttingDown ends Watch streams when the server shuts down.
var ErrShuttingDown = errors.New("the server is shutting down; reconnect (to it or its successor), Read the files you care about again and Watch again")

// WatchUnavailableError is a Watch the server cannot serve because it
// cannot watch the workspace for changes made outside it.
type WatchUnavailableError struct{ Err error }

func (e *WatchUnavailableError) Error() string {
	return fmt.Sprintf("the server cannot watch the workspace for changes: %v; if the system's limit on file watches is reached, raise it (Linux: sysctl fs.inotify.max_user_watches and fs.inotify.max_user_instances) and retry", e.Err)
}

// RequestError is a bad request field found by the server itself (not by
// the core edit planner or the workspace).
type RequestError struct {
	Reason hashline.Reason
	Field  string
	Msg    string
	Limit  int // the bound a field is over, if that is the problem
}

func (e *RequestError) Error() string { return e.Msg }

// BadRequest is an INVALID_ARGUMENT refusal of the request field field.
func BadRequest(field, format string, args ...any) error {
	return invalid(ReasonInvalidArgument, field, format, args...)
}

// OverLimit is a request field over a size or count limit.
func OverLimit(field string, limit int, format string, args ...any) error {
	return &RequestError{Reason: ReasonInvalidArgument, Field: field, Limit: limit, Msg: fmt.Sprintf(format, args...)}
}

func invalid(reason hashline.Reason, field, format string, args ...any) error {
	return &RequestError{Reason: reason, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// VersionMismatchError is returned when a caller's version (Write's
// expectedVersion, Edit's baseVersion) is not the file's current one.
type VersionMismatchError struct {
	Path, Expected, Current string
	Hint                    string
}

func (e *VersionMismatchError) Error() string {
	cur := e.Current
	if cur == "" {
		cur = "none (the file does not exist)"
	}
	return fmt.Sprintf("%s: version %s is not the current version %s; %s", e.Path, e.Expected, cur, e.Hint)
}

// StaleError wraps a core batch error that carries stale references, with
// the version the fresh lines came from. With unknownBase set, the
// references were made against that version, which the server does not
// hold, and every one of them is shown (versions.UnknownBase).
type StaleError struct {
	Batch          *hashline.BatchError
	CurrentVersion string
	UnknownBase    string
	How            string // how the agent named UnknownBase: "gave as baseVersion" or "last saw"
	// NotShown: the references name no line the agent was shown
	// (versions.Unshown), or two (versions.Ambiguous); their StaleRef
	// reason is NOT_SHOWN.
	NotShown bool
}

func (e *StaleError) Error() string {
	if e.NotShown && e.Batch.Reason() == hashline.ReasonStaleRef {
		return notShownMessage(e)
	}
	if e.UnknownBase == "" || e.Batch.Reason() != hashline.ReasonStaleRef {
		return e.Batch.Error()
	}
	return fmt.Sprintf("version %s, the one you %s, is no longer held by the server, and the file has changed since (it is now %s): "+
		"the lines you referenced, and those inside your ranges, cannot be proven unchanged, so nothing was written. "+
		"Check the current lines below (>>> marks the line numbers you referenced) and retry with their refs (and baseVersion %s, or none)\n%s",
		e.UnknownBase, e.How, e.CurrentVersion, e.CurrentVersion, e.Batch.StaleLines())
}
func (e *StaleError) Unwrap() error { return e.Batch }
