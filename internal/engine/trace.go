package engine

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Spans of a change (OpenTelemetry). The engine speaks the trace API only:
// a program that exports traces gives it a TracerProvider
// (WithTracerProvider); without one every span below is the API's no-op
// span, taken without a call to any tracer, so an engine that traces
// nothing does no work for it. Each span is a child of the span in the
// call's context (the gRPC face's span of the call, when hashlined
// traces):
//
//	hashline.plan    the set's locks and every change checked against the
//	                 disk (a set planned again under the exclusive tree lock
//	                 stays one span)
//	hashline.rebase  an edit's references resolved against the versions its
//	                 agent saw (a child of hashline.plan)
//	hashline.commit  the write, rename or removal (a set's staging, intent
//	                 record and steps), and its entry in the change history
//
// Their attributes name the agent, the paths, versions, the change set and
// the history's change id, and how each step ended; never a file's content
// or an edit's text. A refusal's message may quote the file, so a failed
// step records only that it failed: the reason is the call's (the face's
// span of the call has it).

// tracerName is the instrumentation scope of the engine's spans.
const tracerName = "github.com/hashline/hashline/internal/engine"

// The attribute keys of the engine's spans.
const (
	attrAgent       = attribute.Key("hashline.agent")
	attrPath        = attribute.Key("hashline.path")
	attrPaths       = attribute.Key("hashline.paths")
	attrKind        = attribute.Key("hashline.change.kind")
	attrChanges     = attribute.Key("hashline.changes")
	attrDryRun      = attribute.Key("hashline.dry_run")
	attrOutcome     = attribute.Key("hashline.outcome")
	attrFailures    = attribute.Key("hashline.failures")
	attrBaseVersion = attribute.Key("hashline.base_version")
	attrRebasedFrom = attribute.Key("hashline.rebased_from")
	attrMoved       = attribute.Key("hashline.moved")
	attrVersion     = attribute.Key("hashline.version")
	attrChangeSet   = attribute.Key("hashline.change_set")
	attrChangeID    = attribute.Key("hashline.change_id")
	attrRequestID   = attribute.Key("hashline.request_id")
)

// WithTracerProvider makes the engine record spans of its changes (plan,
// rebase, commit) with tp, as children of the span in each call's
// context. The default, and a nil tp, records none.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) {
		o.tracer = nil
		if tp != nil {
			o.tracer = tp.Tracer(tracerName)
		}
	}
}

// noSpan is the trace API's no-op span: what SpanFromContext gives for a
// context without a span.
var noSpan = trace.SpanFromContext(context.Background())

// span starts the span name under ctx's, or returns the no-op span when
// the engine has no tracer.
func (s *Engine) span(ctx context.Context, name string) (context.Context, trace.Span) {
	if s.opts.tracer == nil {
		return ctx, noSpan
	}
	return s.opts.tracer.Start(ctx, name)
}

// startPlan starts the span of planning changes under their locks.
func (s *Engine) startPlan(ctx context.Context, changes []*change, dryRun bool) (context.Context, trace.Span) {
	ctx, span := s.span(ctx, "hashline.plan")
	if span.IsRecording() {
		span.SetAttributes(attrAgent.String(Agent(ctx)), attrChanges.Int(len(changes)), attrDryRun.Bool(dryRun))
		setPaths(span, changes)
	}
	return ctx, span
}

// endPlan ends the span of planning, failed changes counted.
func endPlan(span trace.Span, failures []ChangeFailure, err error) {
	if span.IsRecording() {
		if err == nil && len(failures) > 0 {
			err = errRefusedSpan
		}
		span.SetAttributes(attrFailures.Int(len(failures)))
		endSpan(span, err, "planned", "refused")
	}
}

// startRebase starts the span of resolving an edit's references.
func (s *Engine) startRebase(ctx context.Context, path, baseVersion, current string) trace.Span {
	_, span := s.span(ctx, "hashline.rebase")
	if span.IsRecording() {
		span.SetAttributes(attrPath.String(path), attrBaseVersion.String(baseVersion), attrVersion.String(current))
	}
	return span
}

// endRebase ends the span of a rebase: rebased (from an older version),
// current (the references were the file's as it is) or refused.
func endRebase(span trace.Span, rb *rebased, err error) {
	if !span.IsRecording() {
		return
	}
	outcome := "current"
	if err == nil && rb.from != "" {
		outcome = "rebased"
		span.SetAttributes(attrRebasedFrom.String(rb.from), attrMoved.Int(len(rb.moved)))
	}
	endSpan(span, err, outcome, "refused")
}

// startCommit starts the span of committing changes.
func (s *Engine) startCommit(ctx context.Context, changes []*change) (context.Context, trace.Span) {
	ctx, span := s.span(ctx, "hashline.commit")
	if span.IsRecording() {
		span.SetAttributes(attrAgent.String(Agent(ctx)), attrChanges.Int(len(changes)))
		if id := requestID(ctx); id != "" {
			span.SetAttributes(attrRequestID.String(id))
		}
		setPaths(span, changes)
	}
	return ctx, span
}

// endCommit ends the span of a commit: the set's id, the change id the
// history gave it (in ctx, recordSet) and, for one content change, the
// version written.
func endCommit(ctx context.Context, span trace.Span, changes []*change, set string, err error) {
	if !span.IsRecording() {
		return
	}
	if err == nil {
		if set != "" {
			span.SetAttributes(attrChangeSet.String(set))
		}
		if id := changeID(ctx); id != "" {
			span.SetAttributes(attrChangeID.String(id))
		}
		if p, ok := changes[0].plan.(contentPlan); ok && len(changes) == 1 {
			span.SetAttributes(attrVersion.String(p.writing().wrote().Version))
		}
	}
	endSpan(span, err, "committed", "failed")
}

// setPaths names a change's path and kind, or a set's paths.
func setPaths(span trace.Span, changes []*change) {
	if len(changes) == 1 {
		c := changes[0]
		span.SetAttributes(attrPath.String(c.path), attrKind.String(c.plan.kind()))
		if m, ok := c.plan.(*movePlan); ok {
			span.SetAttributes(attribute.String("hashline.to", m.req.To))
		}
		return
	}
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.path
	}
	span.SetAttributes(attrPaths.StringSlice(paths))
}

// errRefusedSpan marks a plan some of whose changes were refused.
var errRefusedSpan = errors.New("refused")

// endSpan ends span with its outcome: ok without an error; canceled when
// the caller gave up or its deadline passed; failed otherwise, with the
// span's status an error. The error's message is not recorded: a
// refusal's may quote lines of the file.
func endSpan(span trace.Span, err error, ok, failed string) {
	outcome := ok
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		outcome = "canceled"
		span.SetStatus(codes.Error, outcome)
	default:
		outcome = failed
		span.SetStatus(codes.Error, outcome)
	}
	span.SetAttributes(attrOutcome.String(outcome))
	span.End()
}
