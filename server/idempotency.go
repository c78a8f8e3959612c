package server

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/OneOfOne/xxhash"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hashline/hashline/internal/engine"
)

// once runs call, the service's handling of req, at most once per agent
// and request id (engine.Once): the hook of Edit, Write, Delete, Move and
// Apply. call returns the engine's errors; once returns status errors, and
// each caller of a replay gets its own copy of the remembered response.
func once[Resp proto.Message](ctx context.Context, s *Service, req proto.Message, id string, dryRun bool, call func() (Resp, error)) (Resp, error) {
	sum := uint64(0)
	if id != "" && !dryRun {
		sum = requestSum(req)
	}
	resp, replayed, err := engine.Once(ctx, s.e, id, sum, dryRun, outcomeSize[Resp], call)
	if err != nil {
		return resp, toStatus(err)
	}
	if replayed {
		resp = proto.Clone(resp).(Resp)
	}
	return resp, nil
}

// outcomeSize is what a remembered outcome holds, as sent: the response, or
// the status of the error.
func outcomeSize[Resp proto.Message](resp Resp, err error) int64 {
	if err != nil {
		st, _ := status.FromError(toStatus(err))
		return int64(proto.Size(st.Proto()))
	}
	return int64(proto.Size(resp))
}

// requestSum identifies a request by its message type and every field it
// sets, request_id included: entries are compared only under the same id,
// so the id changes nothing. The fields are hashed as they are, not
// encoded first: an encoding would copy a large Write's content, and
// protobuf refuses to encode a string that is not UTF-8, which an
// in-process caller can send (the service then refuses or writes it).
//
// 64 bits of a fast hash are enough: sums are compared only between two
// requests of one agent under one key, which differ only when that
// agent's client reuses a key by mistake, and then a collision (2^-64)
// would have to follow. Nobody gains by forcing one: keys are per agent.
func requestSum(req proto.Message) uint64 {
	h := xxhash.New64()
	m := req.ProtoReflect()
	writeString(h, string(m.Descriptor().FullName()))
	hashMessage(h, m)
	return h.Sum64()
}

// hashMessage writes m to h unambiguously for its type: the number of set
// fields, then each field's number and value in field-number order, then
// any unknown fields as they arrived.
func hashMessage(h *xxhash.XXHash64, m protoreflect.Message) {
	type field struct {
		fd protoreflect.FieldDescriptor
		v  protoreflect.Value
	}
	var fields []field
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		fields = append(fields, field{fd, v})
		return true
	})
	slices.SortFunc(fields, func(a, b field) int { return int(a.fd.Number()) - int(b.fd.Number()) })
	writeUvarint(h, uint64(len(fields)))
	for _, f := range fields {
		writeUvarint(h, uint64(f.fd.Number()))
		switch {
		case f.fd.IsList():
			l := f.v.List()
			writeUvarint(h, uint64(l.Len()))
			for i := range l.Len() {
				hashValue(h, f.fd, l.Get(i))
			}
		case f.fd.IsMap():
			mp := f.v.Map()
			keys := make([]protoreflect.MapKey, 0, mp.Len())
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				keys = append(keys, k)
				return true
			})
			slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return strings.Compare(a.String(), b.String()) })
			writeUvarint(h, uint64(len(keys)))
			for _, k := range keys {
				hashValue(h, f.fd.MapKey(), k.Value())
				hashValue(h, f.fd.MapValue(), mp.Get(k))
			}
		default:
			hashValue(h, f.fd, f.v)
		}
	}
	writeString(h, string(m.GetUnknown()))
}

func hashValue(h *xxhash.XXHash64, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		hashMessage(h, v.Message())
	case protoreflect.StringKind:
		writeString(h, v.String())
	case protoreflect.BytesKind:
		writeString(h, string(v.Bytes()))
	case protoreflect.BoolKind:
		if v.Bool() {
			writeUvarint(h, 1)
		} else {
			writeUvarint(h, 0)
		}
	case protoreflect.EnumKind:
		writeUvarint(h, uint64(v.Enum()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		writeUvarint(h, uint64(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		writeUvarint(h, v.Uint())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		writeUvarint(h, math.Float64bits(v.Float()))
	}
}

func writeUvarint(h *xxhash.XXHash64, x uint64) {
	var b [binary.MaxVarintLen64]byte
	h.Write(b[:binary.PutUvarint(b[:], x)])
}

// writeString writes s with its length first.
func writeString(h *xxhash.XXHash64, s string) {
	writeUvarint(h, uint64(len(s)))
	h.WriteString(s)
}
