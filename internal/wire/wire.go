// Package wire is the API's vocabulary as the server and the clients both
// speak it on the wire: the string each reason is sent as, the gRPC code
// each reason is declared with in errors.proto, and the agent's metadata
// key. It lives below both so that the server never imports a client: the
// public client re-exports what its users need.
package wire

import (
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// AgentMetadataKey is the request metadata that names the calling agent.
const AgentMetadataKey = "x-agent-id"

const (
	errorReasonPrefix    = "ERROR_REASON_"
	staleRefReasonPrefix = "STALE_REF_REASON_"
)

// ReasonName returns the string sent for r in ErrorInfo.reason and
// EditError.reason: the value's name without its ERROR_REASON_ prefix,
// e.g. "STALE_REF"; "" for ERROR_REASON_UNSPECIFIED and for numbers the
// enum does not have.
func ReasonName(r hashlinev1.ErrorReason) string {
	return wireName(hashlinev1.ErrorReason_name[int32(r)], errorReasonPrefix)
}

// ParseReason returns the ErrorReason a reason string names (the inverse
// of ReasonName), or ERROR_REASON_UNSPECIFIED for one not in the enum.
func ParseReason(reason string) hashlinev1.ErrorReason {
	return hashlinev1.ErrorReason(hashlinev1.ErrorReason_value[errorReasonPrefix+reason])
}

// StaleRefReasonName returns the string sent for r in StaleRef.reason,
// e.g. "CONFLICT"; "" for STALE_REF_REASON_UNSPECIFIED and for numbers the
// enum does not have.
func StaleRefReasonName(r hashlinev1.StaleRefReason) string {
	return wireName(hashlinev1.StaleRefReason_name[int32(r)], staleRefReasonPrefix)
}

// ParseStaleRefReason returns the StaleRefReason a StaleRef.reason string
// names, or STALE_REF_REASON_UNSPECIFIED for one not in the enum.
func ParseStaleRefReason(reason string) hashlinev1.StaleRefReason {
	return hashlinev1.StaleRefReason(hashlinev1.StaleRefReason_value[staleRefReasonPrefix+reason])
}

func wireName(name, prefix string) string {
	if name == "" || name == prefix+"UNSPECIFIED" {
		return ""
	}
	return strings.TrimPrefix(name, prefix)
}

// reasonCodes is the gRPC code of every ErrorReason, read from the
// grpc_code option each value declares in proto/hashline/v1/errors.proto,
// so that no list of codes is kept anywhere else. It is read on first use:
// building the descriptors allocates, and a hashline command that sees no
// error must not pay for it at start.
var reasonCodes = sync.OnceValue(readReasonCodes)

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

// ReasonCode returns the gRPC code reason r is always sent with, as its
// grpc_code option declares it; ok is false for ERROR_REASON_UNSPECIFIED
// and numbers the enum does not have.
func ReasonCode(r hashlinev1.ErrorReason) (c codes.Code, ok bool) {
	c, ok = reasonCodes()[r]
	return c, ok
}
