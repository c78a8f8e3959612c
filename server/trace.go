package server

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// Tracing: a program that exports traces (hashlined with --otlp-endpoint)
// gives the server an OpenTelemetry stats handler in
// GRPCConfig.ServerOptions, which continues the caller's trace context and
// starts a span for every call, and sets GRPCConfig.Tracing, which adds
// the interceptors below to say what the call was about: the agent (as the
// token or metadata names it), the paths, the request_id and change id it
// names, and how it ended (the outcome of a change, as the metrics count
// it, and the reason of a refusal). Never a file's content or an edit's
// text, nor a refusal's message, which may quote the file. This package
// links only the trace API; the SDK and the exporters stay hashlined's.

// The attribute keys of the call's span.
const (
	attrAgent     = attribute.Key("hashline.agent")
	attrPath      = attribute.Key("hashline.path")
	attrTo        = attribute.Key("hashline.to")
	attrRequestID = attribute.Key("hashline.request_id")
	attrChangeID  = attribute.Key("hashline.change_id")
	attrChanges   = attribute.Key("hashline.changes")
	attrOutcome   = attribute.Key("hashline.outcome")
	attrReason    = attribute.Key("hashline.reason")
)

// changeOutcomes are the calls whose span gets an outcome (EditOutcome):
// the calls that change files.
var changeOutcomes = map[string]bool{
	hashlinev1.FileService_Edit_FullMethodName:   true,
	hashlinev1.FileService_Write_FullMethodName:  true,
	hashlinev1.FileService_Delete_FullMethodName: true,
	hashlinev1.FileService_Move_FullMethodName:   true,
	hashlinev1.FileService_Apply_FullMethodName:  true,
	hashlinev1.FileService_Revert_FullMethodName: true,
}

// traceUnary annotates the span of a unary call, when one records.
func traceUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return handler(ctx, req)
	}
	span.SetAttributes(attrAgent.String(AgentID(ctx)))
	requestAttrs(span, req)
	resp, err := handler(ctx, req)
	if changeOutcomes[info.FullMethod] {
		span.SetAttributes(attrOutcome.String(EditOutcome(resp, err)))
	}
	endAttrs(span, err)
	return resp, err
}

// traceStream annotates the span of a stream (Grep, Watch), when one
// records: the path from its request, once it is read.
func traceStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	span := trace.SpanFromContext(ss.Context())
	if !span.IsRecording() {
		return handler(srv, ss)
	}
	span.SetAttributes(attrAgent.String(AgentID(ss.Context())))
	err := handler(srv, &tracedStream{ServerStream: ss, span: span})
	endAttrs(span, err)
	return err
}

type tracedStream struct {
	grpc.ServerStream
	span trace.Span
	read bool
}

func (s *tracedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil && !s.read {
		s.read = true
		requestAttrs(s.span, m)
	}
	return err
}

// requestAttrs names what the request is about.
func requestAttrs(span trace.Span, req any) {
	switch r := req.(type) {
	case *hashlinev1.MoveRequest:
		span.SetAttributes(attrPath.String(r.GetFrom()), attrTo.String(r.GetTo()))
	case *hashlinev1.ApplyRequest:
		span.SetAttributes(attrChanges.Int(len(r.GetChanges())))
	case interface{ GetPath() string }:
		span.SetAttributes(attrPath.String(r.GetPath()))
	}
	if r, ok := req.(interface{ GetChangeId() string }); ok && r.GetChangeId() != "" {
		span.SetAttributes(attrChangeID.String(r.GetChangeId()))
	}
	if r, ok := req.(interface{ GetRequestId() string }); ok && r.GetRequestId() != "" {
		span.SetAttributes(attrRequestID.String(r.GetRequestId()))
	}
}

// endAttrs gives a refused call's span its reason (ErrorInfo.reason); the
// stats handler sets its status code.
func endAttrs(span trace.Span, err error) {
	if err == nil {
		return
	}
	if reason := StatusReason(err); reason != "" {
		span.SetAttributes(attrReason.String(reason))
	}
}

// StatusReason is the reason (ErrorInfo.reason, e.g. "STALE_REF") of a
// status error the server returned, or "" for none.
func StatusReason(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return ""
	}
	for _, d := range st.Details() {
		if info, ok := d.(*hashlinev1.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}
