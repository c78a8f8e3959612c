package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// Domain is the ErrorInfo domain of every error this server returns.
const Domain = "hashline.v1"

// Reasons the server adds to those of the core (hashline.Reason) and the
// workspace sentinels. They are the ErrorInfo.reason strings clients match.
const (
	ReasonVersionMismatch  = "VERSION_MISMATCH"
	ReasonNotFound         = "NOT_FOUND"
	ReasonAlreadyExists    = "ALREADY_EXISTS"
	ReasonOutsideRoot      = "OUTSIDE_ROOT"
	ReasonVCSMetadata      = "VCS_METADATA"
	ReasonNotRegularFile   = "NOT_REGULAR_FILE"
	ReasonBinaryFile       = "BINARY_FILE"
	ReasonNotText          = "NOT_TEXT"
	ReasonTooLarge         = "TOO_LARGE"
	ReasonInvalidPath      = "INVALID_PATH"
	ReasonInvalidPattern   = "INVALID_PATTERN"
	ReasonInvalidArgument  = "INVALID_ARGUMENT"
	ReasonBinaryContent    = "BINARY_CONTENT"
	ReasonInternal         = "INTERNAL"
	ReasonPermissionDenied = "PERMISSION_DENIED"
	ReasonNotWritable      = "NOT_WRITABLE"
	ReasonIO               = "IO_ERROR"
	ReasonCanceled         = "CANCELED"
	ReasonDeadlineExceeded = "DEADLINE_EXCEEDED"
	// Authentication, authorization and limits (auth.go, limits.go).
	ReasonUnauthenticated = "UNAUTHENTICATED"
	ReasonReadOnly        = "READ_ONLY"
	ReasonPathNotAllowed  = "PATH_NOT_ALLOWED"
	ReasonRateLimited     = "RATE_LIMITED"
	ReasonTooManyStreams  = "TOO_MANY_STREAMS"
	// Watch (watch.go).
	ReasonShuttingDown     = "SHUTTING_DOWN"
	ReasonWatchUnavailable = "WATCH_UNAVAILABLE"
	// Read-before-edit (versions.go).
	ReasonNotRead = "NOT_READ"
	// Idempotency keys (idempotency.go): a request_id this agent already
	// used for a different request.
	ReasonRequestIDReused = "REQUEST_ID_REUSED"
)

// notReadError is an edit that refers to the content of a file the agent
// has not seen.
type notReadError struct {
	path, agent string
	edit        int
	op          hashline.Op
}

func (e *notReadError) Error() string {
	return fmt.Sprintf("edit %d (%s): agent %q has not read %s; Read it (or Grep it) first, then edit with the tags it returns. Only append and prepend work on a file you have not read",
		e.edit, e.op, e.agent, e.path)
}

// requestRunningError is a retry that gave up waiting for the first call
// with its request_id, which is still running and may yet write.
type requestRunningError struct {
	id  string
	err error // the retry's context error
}

func (e *requestRunningError) Error() string {
	return fmt.Sprintf("the first call with request_id %q is still running and may yet apply; retry with the same request_id (and a longer deadline) to get its outcome", e.id)
}

func (e *requestRunningError) Unwrap() error { return e.err }

// errWatchShutdown ends Watch streams when the server shuts down.
var errWatchShutdown = errors.New("the server is shutting down; reconnect (to it or its successor), Read the files you care about again and Watch again")

// watchUnavailableError is a Watch the server cannot serve because it
// cannot watch the workspace for changes made outside it.
type watchUnavailableError struct{ err error }

func (e *watchUnavailableError) Error() string {
	return fmt.Sprintf("the server cannot watch the workspace for changes: %v; if the system's limit on file watches is reached, raise it (Linux: sysctl fs.inotify.max_user_watches and fs.inotify.max_user_instances) and retry", e.err)
}

// requestError is a bad request field found by the server itself (not by
// the core edit planner or the workspace).
type requestError struct {
	reason string
	field  string
	msg    string
	limit  int // the bound a field is over, if that is the problem
}

func (e *requestError) Error() string { return e.msg }

func badRequest(field, format string, args ...any) error {
	return invalid(ReasonInvalidArgument, field, format, args...)
}

// overLimit is a request field over a size or count limit.
func overLimit(field string, limit int, format string, args ...any) error {
	return &requestError{reason: ReasonInvalidArgument, field: field, limit: limit, msg: fmt.Sprintf(format, args...)}
}

func invalid(reason, field, format string, args ...any) error {
	return &requestError{reason: reason, field: field, msg: fmt.Sprintf(format, args...)}
}

// versionMismatchError is returned when a caller's version (Write's
// expectedVersion, Edit's baseVersion) is not the file's current one.
type versionMismatchError struct {
	path, expected, current string
	hint                    string
}

func (e *versionMismatchError) Error() string {
	cur := e.current
	if cur == "" {
		cur = "none (the file does not exist)"
	}
	return fmt.Sprintf("%s: version %s is not the current version %s; %s", e.path, e.expected, cur, e.hint)
}

// staleError wraps a core batch error that carries stale references, with
// the version the fresh lines came from. With unknownBase set, the
// references were made against that version, which the server does not
// hold, and every one of them is shown (versions.UnknownBase).
type staleError struct {
	batch          *hashline.BatchError
	currentVersion string
	unknownBase    string
	how            string // how the agent named unknownBase: "gave as baseVersion" or "last saw"
	// notShown: the references name no line the agent was shown
	// (versions.Unshown), or two (versions.Ambiguous); their StaleRef
	// reason is NOT_SHOWN.
	notShown bool
}

func (e *staleError) Error() string {
	if e.notShown && e.batch.Reason() == hashline.ReasonStaleRef {
		return notShownMessage(e)
	}
	if e.unknownBase == "" || e.batch.Reason() != hashline.ReasonStaleRef {
		return e.batch.Error()
	}
	return fmt.Sprintf("version %s, the one you %s, is no longer held by the server, and the file has changed since (it is now %s): "+
		"the lines you referenced, and those inside your ranges, cannot be proven unchanged, so nothing was written. "+
		"Check the current lines below (>>> marks the line numbers you referenced) and retry with their refs (and baseVersion %s, or none)\n%s",
		e.unknownBase, e.how, e.currentVersion, e.currentVersion, e.batch.StaleLines())
}
func (e *staleError) Unwrap() error { return e.batch }

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
		stale *staleError
		batch *hashline.BatchError
		reqE  *requestError
		verE  *versionMismatchError
		accE  *accessError
		rateE *rateLimitError
		strE  *streamLimitError
		nrE   *notReadError
		conE  *versions.ConflictError
		runE  *requestRunningError
		repE  *repeatedNoChangeError
	)
	switch {
	case errors.As(err, &repE) && errors.As(err, &stale):
		return batchStatus(stale.batch, repE.Error(), stale.currentVersion, "", map[string]string{"repeated": strconv.Itoa(repE.before)})
	case errors.As(err, &stale) && stale.notShown:
		return notShownStatus(stale)
	case errors.As(err, &stale):
		return batchStatus(stale.batch, stale.Error(), stale.currentVersion, stale.unknownBase, nil)
	case errors.As(err, &batch):
		return batchStatus(batch, batch.Error(), "", "", nil)
	case errors.As(err, &conE):
		return conflictStatus(conE)
	case errors.As(err, &nrE):
		return newStatus(codes.FailedPrecondition, ReasonNotRead, err.Error(), map[string]string{"path": nrE.path, "agent": nrE.agent})
	case errors.As(err, &reqE):
		meta := map[string]string{"field": reqE.field}
		if reqE.limit > 0 {
			meta["limit"] = strconv.Itoa(reqE.limit)
		}
		return newStatus(codes.InvalidArgument, reqE.reason, err.Error(), meta)
	case errors.As(err, &verE):
		return newStatus(codes.Aborted, ReasonVersionMismatch, err.Error(), map[string]string{"currentVersion": verE.current})
	case errors.As(err, &accE):
		code := codes.PermissionDenied
		if accE.reason == ReasonUnauthenticated {
			code = codes.Unauthenticated
		}
		return newStatus(code, accE.reason, err.Error(), nil)
	case errors.As(err, &rateE):
		return withDetails(status.New(codes.ResourceExhausted, err.Error()),
			protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{Reason: ReasonRateLimited, Domain: Domain, Metadata: map[string]string{
				"agent": rateE.agent, "limit": strconv.FormatFloat(rateE.perSecond, 'g', -1, 64), "burst": strconv.Itoa(rateE.burst),
			}}),
			protoadapt.MessageV1Of(&hashlinev1.RetryInfo{RetryDelay: durationpb.New(rateE.retryAfter)}))
	case errors.As(err, &strE):
		return newStatus(codes.ResourceExhausted, ReasonTooManyStreams, err.Error(),
			map[string]string{"agent": strE.agent, "limit": strconv.Itoa(strE.limit)})
	case errors.Is(err, errWatchShutdown):
		return newStatus(codes.Unavailable, ReasonShuttingDown, err.Error(), nil)
	case errors.As(err, new(*watchUnavailableError)):
		return newStatus(codes.Unavailable, ReasonWatchUnavailable, err.Error(), nil)
	case errors.As(err, &runE):
		if errors.Is(err, context.Canceled) {
			return newStatus(codes.Canceled, ReasonCanceled, err.Error(), nil)
		}
		return newStatus(codes.DeadlineExceeded, ReasonDeadlineExceeded, err.Error(), nil)
	case errors.Is(err, context.Canceled):
		return newStatus(codes.Canceled, ReasonCanceled, "the call was cancelled; nothing was written", nil)
	case errors.Is(err, context.DeadlineExceeded):
		return newStatus(codes.DeadlineExceeded, ReasonDeadlineExceeded, "the call's deadline passed before it finished; nothing was written, retry with a longer deadline", nil)
	case workspace.IsEscape(err):
		// os.Root's own refusal, e.g. from Grep walking Root().FS().
		return newStatus(codes.PermissionDenied, ReasonOutsideRoot, "the path leads outside the workspace root (through .. or a symlink); use a path inside the root", nil)
	case errors.Is(err, grep.ErrBadPattern):
		return newStatus(codes.InvalidArgument, ReasonInvalidPattern, err.Error()+"; the pattern is RE2 syntax (set literal for a plain string)", nil)
	}
	for _, m := range workspaceErrors {
		if errors.Is(err, m.sentinel) {
			return newStatus(m.code, m.reason, err.Error(), nil)
		}
	}
	return newStatus(codes.Internal, ReasonInternal, err.Error(), nil)
}

// workspaceErrors maps the workspace sentinels; errors.Is sees through any
// wrapping added on the way up.
var workspaceErrors = []struct {
	sentinel error
	code     codes.Code
	reason   string
}{
	{workspace.ErrNotFound, codes.NotFound, ReasonNotFound},
	{workspace.ErrExists, codes.AlreadyExists, ReasonAlreadyExists},
	{workspace.ErrOutsideRoot, codes.PermissionDenied, ReasonOutsideRoot},
	{workspace.ErrVCSPath, codes.PermissionDenied, ReasonVCSMetadata},
	{workspace.ErrNotRegular, codes.FailedPrecondition, ReasonNotRegularFile},
	{workspace.ErrBinary, codes.FailedPrecondition, ReasonBinaryFile},
	{workspace.ErrNotText, codes.FailedPrecondition, ReasonNotText},
	{workspace.ErrTooLarge, codes.ResourceExhausted, ReasonTooLarge},
	{workspace.ErrInvalidPath, codes.InvalidArgument, ReasonInvalidPath},
	{workspace.ErrPermission, codes.PermissionDenied, ReasonPermissionDenied},
	{workspace.ErrNotWritable, codes.PermissionDenied, ReasonNotWritable},
	// Internal, not Unavailable: clients retry Unavailable automatically,
	// and an I/O error after the rename must not make an append run twice.
	{workspace.ErrIO, codes.Internal, ReasonIO},
	// Grep reports a missing search path as the fs error itself.
	{fs.ErrNotExist, codes.NotFound, ReasonNotFound},
}

// batchCode is the gRPC code for each core reason.
func batchCode(r hashline.Reason) codes.Code {
	switch r {
	case hashline.ReasonStaleRef:
		return codes.Aborted
	case hashline.ReasonNoChange, hashline.ReasonTextNotFound:
		return codes.FailedPrecondition
	default:
		return codes.InvalidArgument
	}
}

// batchStatus is the status of a refused batch, with the message msg.
// baseVersion is set when the references were made against a version the
// server does not hold; more adds to the ErrorInfo's metadata.
func batchStatus(b *hashline.BatchError, msg, currentVersion, baseVersion string, more map[string]string) error {
	reason := b.Reason()
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
	st := status.New(batchCode(reason), msg)
	details := []protoadapt.MessageV1{
		protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{Reason: string(reason), Domain: Domain, Metadata: meta}),
	}
	for _, p := range b.Problems {
		if p.Reason == hashline.ReasonStaleRef {
			details = append(details, protoadapt.MessageV1Of(staleRefProto(p, currentVersion)))
			continue
		}
		ee := &hashlinev1.EditError{
			EditIndex: int32(p.EditIndex),
			Field:     p.Field,
			Reason:    string(p.Reason),
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
	why := "CHANGED"
	if p.CurrentLine == "" {
		why = "DELETED"
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
		Reason:         why,
	}
}

// conflictStatus is the STALE_REF status of a rebase that met other
// changes: one StaleRef per failing reference, with its reason (CHANGED,
// DELETED or CONFLICT), line numbers of the base and fresh lines of the
// current version.
func conflictStatus(e *versions.ConflictError) error {
	details := []protoadapt.MessageV1{protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{
		Reason: string(hashline.ReasonStaleRef), Domain: Domain,
		Metadata: map[string]string{"currentVersion": e.CurrentVersion, "baseVersion": e.BaseVersion},
	})}
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
			Reason:         c.Reason,
		}))
	}
	return withDetails(status.New(codes.Aborted, e.Error()), details...)
}

func newStatus(code codes.Code, reason, msg string, meta map[string]string) error {
	return withDetails(status.New(code, msg),
		protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{Reason: reason, Domain: Domain, Metadata: meta}))
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
