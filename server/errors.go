package server

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/wire"
	"github.com/hashline/hashline/internal/workspace"
)

// Domain is the ErrorInfo domain of every error this server returns.
const Domain = "hashline.v1"

// Short names for the reasons the server code gives itself. The list of
// reasons is hashlinev1.ErrorReason (proto/hashline/v1/errors.proto); on
// the wire each is wire.ReasonName of the value. Typing them as the enum
// means the server cannot send a reason the enum does not have.
const (
	ReasonStaleRef        = hashlinev1.ErrorReason_ERROR_REASON_STALE_REF
	ReasonVersionMismatch = hashlinev1.ErrorReason_ERROR_REASON_VERSION_MISMATCH
	ReasonLineOutOfRange  = hashlinev1.ErrorReason_ERROR_REASON_LINE_OUT_OF_RANGE
	ReasonNoChange        = hashlinev1.ErrorReason_ERROR_REASON_NO_CHANGE
	ReasonNotRead         = hashlinev1.ErrorReason_ERROR_REASON_NOT_READ
	ReasonNotFound        = hashlinev1.ErrorReason_ERROR_REASON_NOT_FOUND
	ReasonAlreadyExists   = hashlinev1.ErrorReason_ERROR_REASON_ALREADY_EXISTS
	ReasonOutsideRoot     = hashlinev1.ErrorReason_ERROR_REASON_OUTSIDE_ROOT
	ReasonVCSMetadata     = hashlinev1.ErrorReason_ERROR_REASON_VCS_METADATA
	ReasonNotRegularFile  = hashlinev1.ErrorReason_ERROR_REASON_NOT_REGULAR_FILE
	ReasonBinaryFile      = hashlinev1.ErrorReason_ERROR_REASON_BINARY_FILE
	ReasonNotText         = hashlinev1.ErrorReason_ERROR_REASON_NOT_TEXT
	ReasonTooLarge        = hashlinev1.ErrorReason_ERROR_REASON_TOO_LARGE
	ReasonInvalidPath     = hashlinev1.ErrorReason_ERROR_REASON_INVALID_PATH
	ReasonInvalidPattern  = hashlinev1.ErrorReason_ERROR_REASON_INVALID_PATTERN
	ReasonInvalidArgument = hashlinev1.ErrorReason_ERROR_REASON_INVALID_ARGUMENT
	ReasonBinaryContent   = hashlinev1.ErrorReason_ERROR_REASON_BINARY_CONTENT
	// A request_id this agent already used for a different request
	// (idempotency.go).
	ReasonRequestIDReused  = hashlinev1.ErrorReason_ERROR_REASON_REQUEST_ID_REUSED
	ReasonPermissionDenied = hashlinev1.ErrorReason_ERROR_REASON_PERMISSION_DENIED
	ReasonNotWritable      = hashlinev1.ErrorReason_ERROR_REASON_NOT_WRITABLE
	ReasonIO               = hashlinev1.ErrorReason_ERROR_REASON_IO_ERROR
	ReasonCanceled         = hashlinev1.ErrorReason_ERROR_REASON_CANCELED
	ReasonDeadlineExceeded = hashlinev1.ErrorReason_ERROR_REASON_DEADLINE_EXCEEDED
	ReasonInternal         = hashlinev1.ErrorReason_ERROR_REASON_INTERNAL
	// Authentication, authorization and limits (auth.go, limits.go).
	ReasonUnauthenticated = hashlinev1.ErrorReason_ERROR_REASON_UNAUTHENTICATED
	ReasonReadOnly        = hashlinev1.ErrorReason_ERROR_REASON_READ_ONLY
	ReasonPathNotAllowed  = hashlinev1.ErrorReason_ERROR_REASON_PATH_NOT_ALLOWED
	ReasonRateLimited     = hashlinev1.ErrorReason_ERROR_REASON_RATE_LIMITED
	ReasonTooManyStreams  = hashlinev1.ErrorReason_ERROR_REASON_TOO_MANY_STREAMS
	// Watch (watch.go).
	ReasonShuttingDown     = hashlinev1.ErrorReason_ERROR_REASON_SHUTTING_DOWN
	ReasonWatchUnavailable = hashlinev1.ErrorReason_ERROR_REASON_WATCH_UNAVAILABLE
	// Delete and change sets (Apply).
	ReasonDirectoryNotEmpty  = hashlinev1.ErrorReason_ERROR_REASON_DIRECTORY_NOT_EMPTY
	ReasonConflictingChanges = hashlinev1.ErrorReason_ERROR_REASON_CONFLICTING_CHANGES
	// The change history (history.go).
	ReasonMalformedChangeID = hashlinev1.ErrorReason_ERROR_REASON_MALFORMED_CHANGE_ID
	ReasonUnknownChange     = hashlinev1.ErrorReason_ERROR_REASON_UNKNOWN_CHANGE
	ReasonChangeExpired     = hashlinev1.ErrorReason_ERROR_REASON_CHANGE_EXPIRED
	ReasonRevertConflict    = hashlinev1.ErrorReason_ERROR_REASON_REVERT_CONFLICT
	ReasonNotRevertible     = hashlinev1.ErrorReason_ERROR_REASON_NOT_REVERTIBLE
	// The syntax check, strict (engine/syntax.go).
	ReasonSyntaxError = hashlinev1.ErrorReason_ERROR_REASON_SYNTAX_ERROR
)

// reasonCode is the gRPC code reason always comes with, so a client may
// switch on either: the one its grpc_code option in errors.proto declares
// (wire.ReasonCode reads the options). Internal for a value without one,
// which TestReasonCodes rules out.
func reasonCode(reason hashlinev1.ErrorReason) codes.Code {
	if c, ok := wire.ReasonCode(reason); ok {
		return c
	}
	return codes.Internal
}

// coreReason is the enum value of a reason of the core planner or the
// rebaser: they know nothing of the API, and their reason strings are the
// enum's names (TestCoreReasonsAreInTheEnum checks every one they
// declare). A string outside the enum would be a bug, reported as one.
func coreReason(r hashline.Reason) hashlinev1.ErrorReason {
	if v := wire.ParseReason(string(r)); v != hashlinev1.ErrorReason_ERROR_REASON_UNSPECIFIED {
		return v
	}
	return ReasonInternal
}

// staleReason is the StaleRef.reason of a reason of the rebaser
// (versions.ReasonChanged and the others), checked like coreReason.
func staleReason(r string) string {
	return wire.StaleRefReasonName(wire.ParseStaleRefReason(r))
}

// toStatus is the one place where domain errors become gRPC statuses. Every
// status carries an ErrorInfo with the reason; batch errors add one StaleRef
// or EditError per problem.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err // already a status (e.g. from an interceptor)
	}
	var (
		stale *engine.StaleError
		batch *hashline.BatchError
		reqE  *engine.RequestError
		verE  *engine.VersionMismatchError
		accE  *accessError
		rateE *rateLimitError
		strE  *streamLimitError
		nrE   *engine.NotReadError
		conE  *versions.ConflictError
		runE  *engine.RequestRunningError
		repE  *engine.RepeatedNoChangeError
		setE  *engine.ChangeSetError
		synE  *engine.SyntaxError
		revE  *engine.RevertConflictError
	)
	switch {
	case errors.As(err, &revE):
		return revertConflictStatus(revE)
	case errors.As(err, &setE):
		return changeSetStatus(setE)
	case errors.As(err, &repE) && errors.As(err, &stale):
		return batchStatus(stale.Batch, repE.Error(), stale.CurrentVersion, "", map[string]string{"repeated": strconv.Itoa(repE.Before)})
	case errors.As(err, &stale) && stale.NotShown:
		return notShownStatus(stale)
	case errors.As(err, &stale):
		return batchStatus(stale.Batch, stale.Error(), stale.CurrentVersion, stale.UnknownBase, nil)
	case errors.As(err, &batch):
		return batchStatus(batch, batch.Error(), "", "", nil)
	case errors.As(err, &conE):
		return conflictStatus(conE)
	case errors.As(err, &synE):
		return syntaxStatus(synE)
	case errors.As(err, &nrE):
		return newStatus(ReasonNotRead, err.Error(), map[string]string{"path": nrE.Path, "agent": nrE.Agent})
	case errors.As(err, &reqE):
		meta := map[string]string{"field": reqE.Field}
		if reqE.Limit > 0 {
			meta["limit"] = strconv.Itoa(reqE.Limit)
		}
		return newStatus(coreReason(reqE.Reason), err.Error(), meta)
	case errors.As(err, &verE):
		return newStatus(ReasonVersionMismatch, err.Error(), map[string]string{"currentVersion": verE.Current})
	case errors.As(err, &accE):
		return newStatus(accE.reason, err.Error(), nil)
	case errors.As(err, &rateE):
		return withDetails(status.New(reasonCode(ReasonRateLimited), err.Error()),
			errorInfo(ReasonRateLimited, map[string]string{
				"agent": rateE.agent, "limit": strconv.FormatFloat(rateE.perSecond, 'g', -1, 64), "burst": strconv.Itoa(rateE.burst),
			}),
			protoadapt.MessageV1Of(&hashlinev1.RetryInfo{RetryDelay: durationpb.New(rateE.retryAfter)}))
	case errors.As(err, &strE):
		return newStatus(ReasonTooManyStreams, err.Error(),
			map[string]string{"agent": strE.agent, "limit": strconv.Itoa(strE.limit)})
	case errors.Is(err, engine.ErrShuttingDown):
		return newStatus(ReasonShuttingDown, err.Error(), nil)
	case errors.As(err, new(*engine.WatchUnavailableError)):
		return newStatus(ReasonWatchUnavailable, err.Error(), nil)
	case errors.As(err, &runE), errors.As(err, new(*engine.MemoryWaitError)):
		if errors.Is(err, context.Canceled) {
			return newStatus(ReasonCanceled, err.Error(), nil)
		}
		return newStatus(ReasonDeadlineExceeded, err.Error(), nil)
	case errors.Is(err, context.Canceled):
		return newStatus(ReasonCanceled, "the call was cancelled; nothing was written", nil)
	case errors.Is(err, context.DeadlineExceeded):
		return newStatus(ReasonDeadlineExceeded, "the call's deadline passed before it finished; nothing was written, retry with a longer deadline", nil)
	case workspace.IsEscape(err):
		// os.Root's own refusal, e.g. from Grep walking Root().FS().
		return newStatus(ReasonOutsideRoot, "the path leads outside the workspace root (through .. or a symlink); use a path inside the root", nil)
	case errors.Is(err, grep.ErrBadPattern):
		return newStatus(ReasonInvalidPattern, err.Error()+"; the pattern is RE2 syntax (set literal for a plain string)", nil)
	}
	for _, m := range workspaceErrors {
		if errors.Is(err, m.sentinel) {
			return newStatus(m.reason, err.Error(), nil)
		}
	}
	return newStatus(ReasonInternal, err.Error(), nil)
}

// workspaceErrors maps the workspace's sentinels and the history's;
// errors.Is sees through any wrapping added on the way up.
var workspaceErrors = []struct {
	sentinel error
	reason   hashlinev1.ErrorReason
}{
	{workspace.ErrNotFound, ReasonNotFound},
	{workspace.ErrExists, ReasonAlreadyExists},
	{workspace.ErrOutsideRoot, ReasonOutsideRoot},
	{workspace.ErrVCSPath, ReasonVCSMetadata},
	{workspace.ErrNotRegular, ReasonNotRegularFile},
	{workspace.ErrBinary, ReasonBinaryFile},
	{workspace.ErrNotText, ReasonNotText},
	{workspace.ErrTooLarge, ReasonTooLarge},
	{workspace.ErrInvalidPath, ReasonInvalidPath},
	{workspace.ErrPermission, ReasonPermissionDenied},
	{workspace.ErrNotWritable, ReasonNotWritable},
	{workspace.ErrNotEmpty, ReasonDirectoryNotEmpty},
	{workspace.ErrIO, ReasonIO},
	// A change id the history cannot name.
	{history.ErrMalformed, ReasonMalformedChangeID},
	{history.ErrUnknown, ReasonUnknownChange},
	{history.ErrExpired, ReasonChangeExpired},
	{engine.ErrNotRevertible, ReasonNotRevertible},
	// Grep reports a missing search path as the fs error itself.
	{fs.ErrNotExist, ReasonNotFound},
}

// changeSetStatus is the status of a refused change set: the code and
// ErrorInfo of its first failing change (with "changeIndex" in the
// metadata), then for each failing change a ChangeError followed by its
// own StaleRef and EditError details, which carry its index.
func changeSetStatus(e *engine.ChangeSetError) error {
	var (
		code    codes.Code
		info    *hashlinev1.ErrorInfo
		details []protoadapt.MessageV1
	)
	for i, f := range e.Failures {
		st := status.Convert(toStatus(f.Err))
		ce := &hashlinev1.ChangeError{ChangeIndex: int32(f.Index), Path: f.Path, Message: st.Message(), Code: int32(st.Code())}
		var own []protoadapt.MessageV1
		for _, d := range st.Details() {
			switch d := d.(type) {
			case *hashlinev1.ErrorInfo:
				ce.Reason = d.GetReason()
				if i == 0 {
					info = d
				}
			case *hashlinev1.StaleRef:
				d.ChangeIndex = int32(f.Index)
				own = append(own, protoadapt.MessageV1Of(d))
			case *hashlinev1.EditError:
				d.ChangeIndex = int32(f.Index)
				own = append(own, protoadapt.MessageV1Of(d))
			case *hashlinev1.SyntaxError:
				d.ChangeIndex = int32(f.Index)
				own = append(own, protoadapt.MessageV1Of(d))
			}
		}
		if i == 0 {
			code = st.Code()
		}
		details = append(details, protoadapt.MessageV1Of(ce))
		details = append(details, own...)
	}
	if info == nil {
		info = &hashlinev1.ErrorInfo{Reason: wire.ReasonName(ReasonInternal), Domain: Domain}
	}
	meta := maps.Clone(info.GetMetadata())
	if meta == nil {
		meta = map[string]string{}
	}
	meta["changeIndex"] = strconv.Itoa(e.Failures[0].Index)
	meta["failedChanges"] = strconv.Itoa(len(e.Failures))
	info.Metadata = meta
	return withDetails(status.New(code, e.Error()), append([]protoadapt.MessageV1{protoadapt.MessageV1Of(info)}, details...)...)
}

// batchStatus is the status of a refused batch, with the message msg.
// baseVersion is set when the references were made against a version the
// server does not hold; more adds to the ErrorInfo's metadata.
func batchStatus(b *hashline.BatchError, msg, currentVersion, baseVersion string, more map[string]string) error {
	reason := coreReason(b.Reason())
	meta := maps.Clone(more)
	if meta == nil {
		meta = map[string]string{}
	}
	if currentVersion != "" {
		meta["currentVersion"] = currentVersion
	}
	if baseVersion != "" {
		meta["baseVersion"] = baseVersion
	}
	st := status.New(reasonCode(reason), msg)
	details := []protoadapt.MessageV1{errorInfo(reason, meta)}
	for _, p := range b.Problems {
		if p.Reason == hashline.ReasonStaleRef {
			details = append(details, protoadapt.MessageV1Of(staleRefProto(p, currentVersion)))
			continue
		}
		ee := &hashlinev1.EditError{
			EditIndex: int32(p.EditIndex),
			Field:     p.Field,
			Reason:    wire.ReasonName(coreReason(p.Reason)),
			Message:   p.Message,
		}
		if p.Reason == hashline.ReasonNoChange {
			ee.Fresh, ee.TextAt = taggedStrings(p.Fresh), spansProto(p.TextAt)
		}
		details = append(details, protoadapt.MessageV1Of(ee))
	}
	return withDetails(st, details...)
}

// taggedStrings renders tagged lines as "12:3f|content"; nil for none.
func taggedStrings(lines []hashline.TaggedLine) []string {
	if len(lines) == 0 {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.String()
	}
	return out
}

func spansProto(spans []hashline.LineSpan) []*hashlinev1.LineSpan {
	if len(spans) == 0 {
		return nil
	}
	out := make([]*hashlinev1.LineSpan, len(spans))
	for i, s := range spans {
		out[i] = &hashlinev1.LineSpan{Start: int32(s.Start), End: int32(s.End)}
	}
	return out
}

func staleRefProto(p hashline.Problem, currentVersion string) *hashlinev1.StaleRef {
	fresh := make([]string, len(p.Fresh))
	for i, l := range p.Fresh {
		fresh[i] = l.String()
	}
	why := hashlinev1.StaleRefReason_STALE_REF_REASON_CHANGED
	if p.CurrentLine == "" {
		why = hashlinev1.StaleRefReason_STALE_REF_REASON_DELETED
	}
	return &hashlinev1.StaleRef{
		EditIndex:      int32(p.EditIndex),
		Ref:            strings.TrimSpace(p.Ref),
		Line:           int32(p.Line),
		ExpectedHash:   p.ExpectedHash,
		ActualHash:     p.ActualHash,
		CurrentLine:    p.CurrentLine,
		Fresh:          fresh,
		CurrentVersion: currentVersion,
		Reason:         wire.StaleRefReasonName(why),
	}
}

// conflictStatus is the STALE_REF status of a rebase that met other
// changes: one StaleRef per failing reference, with its reason (CHANGED,
// DELETED or CONFLICT), line numbers of the base and fresh lines of the
// current version.
func conflictStatus(e *versions.ConflictError) error {
	details := []protoadapt.MessageV1{errorInfo(ReasonStaleRef,
		map[string]string{"currentVersion": e.CurrentVersion, "baseVersion": e.BaseVersion})}
	for _, c := range e.Conflicts {
		fresh := make([]string, len(c.Fresh))
		for i, l := range c.Fresh {
			fresh[i] = l.String()
		}
		details = append(details, protoadapt.MessageV1Of(&hashlinev1.StaleRef{
			EditIndex:      int32(c.EditIndex),
			Ref:            strings.TrimSpace(c.Ref),
			Line:           int32(c.Line),
			ExpectedHash:   c.ExpectedHash,
			ActualHash:     c.ActualHash,
			CurrentLine:    c.CurrentLine,
			Fresh:          fresh,
			CurrentVersion: e.CurrentVersion,
			Reason:         staleReason(c.Reason),
		}))
	}
	return withDetails(status.New(reasonCode(ReasonStaleRef), e.Error()), details...)
}

// revertConflictStatus is the REVERT_CONFLICT status of a revert that met
// later changes: metadata changeId (the change it would undo), one
// LaterChange per later change, and, for lines later changes rewrote, one
// StaleRef per conflicting line with the lines as they are now (fresh
// tags); change_index is the file's place in the change reverted.
func revertConflictStatus(e *engine.RevertConflictError) error {
	details := []protoadapt.MessageV1{errorInfo(ReasonRevertConflict,
		map[string]string{"changeId": e.ID, "laterChanges": strconv.Itoa(len(e.Later))})}
	for _, l := range e.Later {
		details = append(details, protoadapt.MessageV1Of(&hashlinev1.LaterChange{ChangeId: l.ID, Agent: l.Agent, Path: l.Path}))
	}
	for _, f := range e.Files {
		if f.Lines == nil {
			continue
		}
		for _, c := range f.Lines.Conflicts {
			details = append(details, protoadapt.MessageV1Of(&hashlinev1.StaleRef{
				EditIndex:      int32(c.EditIndex),
				Ref:            strings.TrimSpace(c.Ref),
				Line:           int32(c.Line),
				ExpectedHash:   c.ExpectedHash,
				ActualHash:     c.ActualHash,
				CurrentLine:    c.CurrentLine,
				Fresh:          taggedStrings(c.Fresh),
				CurrentVersion: f.Lines.CurrentVersion,
				Reason:         staleReason(c.Reason),
				ChangeIndex:    int32(f.Index),
			}))
		}
	}
	return withDetails(status.New(reasonCode(ReasonRevertConflict), e.Error()), details...)
}

// newStatus is the status of reason, with its code, the message msg and
// an ErrorInfo.
func newStatus(reason hashlinev1.ErrorReason, msg string, meta map[string]string) error {
	return withDetails(status.New(reasonCode(reason), msg), errorInfo(reason, meta))
}

// errorInfo is the ErrorInfo detail of reason: every ErrorInfo the server
// sends is made here.
func errorInfo(reason hashlinev1.ErrorReason, meta map[string]string) protoadapt.MessageV1 {
	return protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{Reason: wire.ReasonName(reason), Domain: Domain, Metadata: meta})
}

func withDetails(st *status.Status, details ...protoadapt.MessageV1) error {
	withD, err := st.WithDetails(details...)
	if err != nil {
		// Only a marshalling bug can get here; the bare status still has
		// the code and the message.
		return st.Err()
	}
	return withD.Err()
}

// notShownStatus is the STALE_REF status of a StaleError with notShown
// set: the batch's status, with reason NOT_SHOWN in every StaleRef.
func notShownStatus(e *engine.StaleError) error {
	st, _ := status.FromError(batchStatus(e.Batch, e.Error(), e.CurrentVersion, "", nil))
	details := st.Details()
	pb := st.Proto()
	pb.Details = nil
	out := make([]protoadapt.MessageV1, 0, len(details))
	for _, d := range details {
		if sr, ok := d.(*hashlinev1.StaleRef); ok {
			sr.Reason = versions.ReasonNotShown
		}
		if m, ok := d.(protoadapt.MessageV2); ok {
			out = append(out, protoadapt.MessageV1Of(m))
		}
	}
	return withDetails(status.FromProto(pb), out...)
}

// syntaxStatus is the refusal of a change that would have introduced
// syntax errors: one SyntaxError per error, its line as it would have
// been written.
func syntaxStatus(e *engine.SyntaxError) error {
	details := []protoadapt.MessageV1{errorInfo(ReasonSyntaxError, map[string]string{"path": e.Path})}
	for _, d := range e.Diagnostics {
		details = append(details, protoadapt.MessageV1Of(&hashlinev1.SyntaxError{
			Ref: diagnosticRef(d), Line: int32(d.Line.Number), Column: int32(d.Column), Message: d.Message,
			Checker: d.Checker, Content: d.Line.Content, Path: e.Path, Source: d.Source,
		}))
	}
	return withDetails(status.New(reasonCode(ReasonSyntaxError), e.Error()), details...)
}
