package client

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// reasonCodes is the gRPC code of every ErrorReason, read once from the
// grpc_code option each value declares in proto/hashline/v1/errors.proto:
// the server sends each reason with this code, and this client's
// sentinels document it, so neither keeps a list of its own.
var reasonCodes = readReasonCodes()

func readReasonCodes() map[hashlinev1.ErrorReason]codes.Code {
	values := hashlinev1.ErrorReason(0).Descriptor().Values()
	out := make(map[hashlinev1.ErrorReason]codes.Code, values.Len())
	for i := range values.Len() {
		v := values.Get(i)
		c := proto.GetExtension(v.Options(), hashlinev1.E_GrpcCode).(hashlinev1.GrpcCode)
		if c != hashlinev1.GrpcCode_GRPC_CODE_UNSPECIFIED {
			// GrpcCode numbers its values as google.rpc.Code, which
			// codes.Code follows.
			out[hashlinev1.ErrorReason(v.Number())] = codes.Code(c)
		}
	}
	return out
}

// ReasonCode returns the gRPC code the server always sends reason r with,
// as its grpc_code option in errors.proto declares it; ok is false for
// ERROR_REASON_UNSPECIFIED and numbers the enum does not have.
func ReasonCode(r hashlinev1.ErrorReason) (c codes.Code, ok bool) {
	c, ok = reasonCodes[r]
	return c, ok
}
