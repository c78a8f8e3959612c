package server

import (
	"container/list"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/OneOfOne/xxhash"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Idempotency keys (EditRequest.request_id, WriteRequest.request_id). A
// call cut off by its deadline, or by a broken connection, may still have
// been applied: the server does not stop a write the client gave up on once
// it has started it. A client that retries must therefore be able to say
// "this is the same request again", and the server must answer it with the
// first call's outcome instead of applying it a second time.
const (
	// MaxRequestIDBytes bounds a request_id: a random key needs 32 hex
	// digits, and the table holds every key for the whole TTL.
	MaxRequestIDBytes = 128
	// DefaultRequestIDTTL is how long an outcome is remembered: long enough
	// for any client's retries and a harness re-running a command after a
	// timeout, short enough that the table stays small.
	DefaultRequestIDTTL = 10 * time.Minute
	// DefaultRequestIDBytes bounds the remembered outcomes, responses and
	// errors together; past it the oldest are forgotten first. An Edit
	// response is at most the response limit (4 MiB by default).
	DefaultRequestIDBytes = 64 << 20
)

// requestEntryBytes is counted for each remembered outcome besides its
// message (the key, the hash, the bookkeeping), so that the byte bound also
// bounds the number of entries.
const requestEntryBytes = 256

// errPanicked is remembered for a call that panicked: it may have written,
// so a retry must not run it again.
var errPanicked = errors.New("the first call with this request_id failed inside the server, and may or may not have written; Read the file to see, and send any new request with a new request_id")

// requestTable remembers the outcome of Edit and Write calls by (agent,
// request_id) for a bounded time and within a byte budget. A call whose
// key is new runs and its outcome is remembered; a call with a known key
// gets the remembered outcome, or waits for the first call while that is
// still running; a call with a known key but a different request is
// refused.
//
// What is remembered is every outcome that a retry must not change: the
// response, or the error, since an error may come after the write (an I/O
// error syncing the directory once the file was replaced, a panic) and a
// refusal answered once should be answered the same way. The exception is
// a call that ended because it was cancelled or ran out of time: the
// service checks its context just before it writes and never after, so
// such a call wrote nothing, and a retry runs it again.
type requestTable struct {
	ttl      time.Duration
	maxBytes int64
	now      func() time.Time

	mu sync.Mutex
	m  map[requestKey]*requestEntry
	// order holds the remembered (finished) entries, oldest first. Every
	// entry lives ttl after it finished, so this is also expiry order; a
	// replay does not extend an entry's life, since the TTL promises a time
	// since the first call.
	order list.List
	bytes int64
	// waiting, if set, is called when a call starts waiting for the
	// running call with its key (tests).
	waiting func()
}

type requestKey struct{ agent, id string }

// requestEntry is one key's call: running until done is closed, then its
// outcome.
type requestEntry struct {
	key  requestKey
	sum  uint64 // of the request (requestSum)
	done chan struct{}
	// Set before done is closed.
	resp proto.Message
	err  error // a status error
	kept bool  // false: the call left nothing to remember, and is gone from the table
	// Set while kept and in order.
	expires time.Time
	size    int64
	elem    *list.Element
}

func newRequestTable(ttl time.Duration, maxBytes int64, now func() time.Time) *requestTable {
	return &requestTable{ttl: ttl, maxBytes: maxBytes, now: now, m: make(map[requestKey]*requestEntry)}
}

// claim returns the entry of key: a new one the caller owns (and must
// finish), or the finished entry of an earlier call with the same request.
// It waits while another call with the key is running, and refuses a key
// whose call carried another request.
func (t *requestTable) claim(ctx context.Context, key requestKey, sum uint64) (e *requestEntry, owner bool, err error) {
	for {
		t.mu.Lock()
		t.expire(t.now())
		e = t.m[key]
		if e == nil {
			e = &requestEntry{key: key, sum: sum, done: make(chan struct{})}
			t.m[key] = e
			t.mu.Unlock()
			return e, true, nil
		}
		t.mu.Unlock()
		if e.sum != sum {
			return nil, false, invalid(ReasonRequestIDReused, "request_id",
				"request_id %q was already used by this agent for a different request within the last %s; a retry must resend exactly the same request, and a new request needs a new request_id", key.id, shortDuration(t.ttl))
		}
		if t.waiting != nil {
			t.waiting()
		}
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, false, &requestRunningError{id: key.id, err: ctx.Err()}
		}
		if e.kept {
			return e, false, nil
		}
		// The first call wrote nothing and left; this one runs instead.
	}
}

// finish records the outcome of the call that owns e and wakes the calls
// waiting for it.
func (t *requestTable) finish(e *requestEntry, resp proto.Message, err error) {
	code := status.Code(err)
	keep := code != codes.Canceled && code != codes.DeadlineExceeded
	t.mu.Lock()
	defer t.mu.Unlock()
	e.resp, e.err, e.kept = resp, err, keep
	close(e.done)
	if !keep {
		delete(t.m, e.key)
		return
	}
	e.size = requestEntryBytes + int64(len(e.key.agent)+len(e.key.id))
	if resp != nil {
		e.size += int64(proto.Size(resp))
	}
	if st, ok := status.FromError(err); ok && err != nil {
		e.size += int64(proto.Size(st.Proto()))
	}
	e.expires = t.now().Add(t.ttl)
	e.elem = t.order.PushBack(e)
	t.bytes += e.size
	for t.bytes > t.maxBytes {
		t.evict(t.order.Front().Value.(*requestEntry))
	}
}

// expire forgets the outcomes whose time is up.
func (t *requestTable) expire(now time.Time) {
	for f := t.order.Front(); f != nil; f = t.order.Front() {
		e := f.Value.(*requestEntry)
		if now.Before(e.expires) {
			return
		}
		t.evict(e)
	}
}

func (t *requestTable) evict(e *requestEntry) {
	t.order.Remove(e.elem)
	t.bytes -= e.size
	if t.m[e.key] == e {
		delete(t.m, e.key)
	}
}

// stats returns the remembered outcomes and their bytes, for tests.
func (t *requestTable) stats() (entries int, bytes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.order.Len(), t.bytes
}

// once runs call, the service's handling of req, at most once per agent
// and request id: the hook of Edit and Write. call returns status errors.
// Without an id, with a dry run (which writes nothing, so there is nothing
// to protect), or with the table turned off, call just runs.
func once[Resp proto.Message](ctx context.Context, s *Service, req proto.Message, id string, dryRun bool, call func() (Resp, error)) (resp Resp, err error) {
	if len(id) > MaxRequestIDBytes {
		return resp, toStatus(badRequest("request_id", "request_id is %d bytes; the most is %d (32 random hex digits are plenty)", len(id), MaxRequestIDBytes))
	}
	if id == "" || dryRun || s.requests == nil {
		return call()
	}
	sum := requestSum(req)
	key := requestKey{agent: AgentID(ctx), id: id}
	e, owner, err := s.requests.claim(ctx, key, sum)
	if err != nil {
		return resp, toStatus(err)
	}
	if !owner {
		s.opts.logger.DebugContext(ctx, "request replayed", "requestId", id)
		if e.err != nil {
			return resp, e.err
		}
		// Each caller gets its own copy: the remembered one stays as it
		// was sent first.
		return proto.Clone(e.resp).(Resp), nil
	}
	finished := false
	defer func() {
		if !finished { // call panicked
			s.requests.finish(e, nil, toStatus(errPanicked))
		}
	}()
	resp, err = call()
	finished = true
	if err != nil {
		s.requests.finish(e, nil, err)
	} else {
		s.requests.finish(e, resp, nil)
	}
	return resp, err
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

// shortDuration prints d without zero units: "10m", not "10m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
