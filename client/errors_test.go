package client_test

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

func TestFromStatusDecodesEveryReason(t *testing.T) {
	tests := []struct {
		code     codes.Code
		reason   string
		sentinel error
		details  []protoadapt.MessageV1
		delay    time.Duration
	}{
		{codes.FailedPrecondition, "NOT_READ", client.ErrNotRead, nil, 0},
		{codes.Unauthenticated, "UNAUTHENTICATED", client.ErrUnauthenticated, nil, 0},
		{codes.PermissionDenied, "READ_ONLY", client.ErrReadOnly, nil, 0},
		{codes.PermissionDenied, "PATH_NOT_ALLOWED", client.ErrPathNotAllowed, nil, 0},
		{codes.PermissionDenied, "VCS_METADATA", client.ErrVCSMetadata, nil, 0},
		{codes.InvalidArgument, "BINARY_CONTENT", client.ErrBinaryContent, nil, 0},
		{codes.InvalidArgument, "INVALID_PATH", client.ErrInvalidPath, nil, 0},
		{codes.InvalidArgument, "INVALID_EDIT", client.ErrInvalidEdit, nil, 0},
		{codes.Unavailable, "SHUTTING_DOWN", client.ErrShuttingDown, nil, 0},
		{codes.ResourceExhausted, "TOO_MANY_STREAMS", client.ErrTooManyStreams, nil, 0},
		{codes.ResourceExhausted, "RATE_LIMITED", client.ErrRateLimited,
			[]protoadapt.MessageV1{protoadapt.MessageV1Of(&hashlinev1.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)})}, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		st := status.New(tt.code, "message for a model")
		details := append([]protoadapt.MessageV1{protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{Reason: tt.reason, Domain: "hashline.v1"})}, tt.details...)
		st, err := st.WithDetails(details...)
		if err != nil {
			t.Fatal(err)
		}
		got := client.FromStatus(st.Err())
		if !errors.Is(got, tt.sentinel) {
			t.Errorf("%s: errors.Is(%v, sentinel) = false", tt.reason, got)
		}
		var e *client.Error
		if !errors.As(got, &e) || e.Code != tt.code || e.RetryDelay != tt.delay {
			t.Errorf("%s: decoded %+v, want code %v and retry delay %v", tt.reason, e, tt.code, tt.delay)
		}
		if errors.Is(got, client.ErrNotFound) {
			t.Errorf("%s: matches ErrNotFound", tt.reason)
		}
	}
}

// A REVERT_CONFLICT decodes to an *Error (not a StaleRefError: it is no
// stale reference of the caller's) with the later changes and the lines.
func TestFromStatusDecodesARevertConflict(t *testing.T) {
	st, err := status.New(codes.Aborted, "reverting c1-0000000a would undo what later changes wrote").WithDetails(
		protoadapt.MessageV1Of(&hashlinev1.ErrorInfo{Reason: "REVERT_CONFLICT", Domain: "hashline.v1"}),
		protoadapt.MessageV1Of(&hashlinev1.LaterChange{ChangeId: "c2-0000000a", Agent: "bob", Path: "f.txt"}),
		protoadapt.MessageV1Of(&hashlinev1.StaleRef{Line: 3, Fresh: []string{"3:ab|bob's"}}))
	if err != nil {
		t.Fatal(err)
	}
	got := client.FromStatus(st.Err())
	var e *client.Error
	var stale client.StaleRefError
	if !errors.Is(got, client.ErrRevertConflict) || !errors.As(got, &e) || errors.As(got, &stale) {
		t.Fatalf("decoded %#v", got)
	}
	if len(e.Later) != 1 || e.Later[0].GetChangeId() != "c2-0000000a" || e.Later[0].GetAgent() != "bob" || len(e.Stale) != 1 {
		t.Fatalf("later %v, stale %v", e.Later, e.Stale)
	}
}
