package server

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/wire"
)

func TestHistoryErrorsHaveTheirReasons(t *testing.T) {
	for _, tc := range []struct {
		err    error
		reason hashlinev1.ErrorReason
		code   codes.Code
	}{
		{history.ErrMalformed, ReasonMalformedChangeID, codes.InvalidArgument},
		{history.ErrUnknown, ReasonUnknownChange, codes.NotFound},
		{history.ErrExpired, ReasonChangeExpired, codes.NotFound},
	} {
		st := status.Convert(toStatus(fmt.Errorf("history: %w: c3-0000000a", tc.err)))
		var reason string
		for _, d := range st.Details() {
			if info, ok := d.(*hashlinev1.ErrorInfo); ok {
				reason = info.GetReason()
			}
		}
		if st.Code() != tc.code || reason != wire.ReasonName(tc.reason) {
			t.Errorf("%v: %v %q, want %v %s", tc.err, st.Code(), reason, tc.code, wire.ReasonName(tc.reason))
		}
	}
}
