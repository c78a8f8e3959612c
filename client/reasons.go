package client

import (
	"google.golang.org/grpc/codes"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/wire"
)

// ReasonCode returns the gRPC code the server always sends reason r with,
// as its grpc_code option in errors.proto declares it; ok is false for
// ERROR_REASON_UNSPECIFIED and numbers the enum does not have.
func ReasonCode(r hashlinev1.ErrorReason) (c codes.Code, ok bool) {
	return wire.ReasonCode(r)
}
