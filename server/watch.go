package server

import (
	"context"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/watch"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Watch streams change events for a path prefix until the client cancels,
// the server shuts down (see Shutdown), or a token file reload revokes or
// narrows the caller's token (see Authenticator.Replace).
func (s *Service) Watch(req *hashlinev1.WatchRequest, stream hashlinev1.FileService_WatchServer) error {
	return toStatus(s.watchStream(req, stream))
}

func (s *Service) watchStream(req *hashlinev1.WatchRequest, stream hashlinev1.FileService_WatchServer) error {
	prefix, err := s.e.WatchPrefix(req.GetPath())
	if err != nil {
		return err
	}
	sub, err := s.e.Subscribe(prefix)
	if err != nil {
		return err
	}
	defer s.e.Unsubscribe(sub)
	// The response headers say the subscription is live: a client that
	// waits for them (ClientStream.Header) misses no change made after.
	if err := stream.SendHeader(metadata.MD{}); err != nil {
		return err
	}
	ctx := stream.Context()
	var carried int64 // dropped counts of events this caller may not see
	for {
		select {
		case <-ctx.Done():
			// The cause says why: the client went away, or the server
			// ended the stream (a revoked token).
			return context.Cause(ctx)
		case <-sub.Done():
			return engine.ErrShuttingDown
		case <-sub.Ready():
			if err := sendEvents(ctx, sub, stream, &carried); err != nil {
				return err
			}
		}
	}
}

// sendEvents sends the events sub holds that the caller may see; carried
// adds up the dropped counts of those it may not, for the next one it may.
func sendEvents(ctx context.Context, sub *watch.Subscription, stream hashlinev1.FileService_WatchServer, carried *int64) error {
	for {
		ev, ok := sub.Next()
		if !ok {
			return nil
		}
		ev = visibleMove(ctx, ev)
		if !allowed(ctx, ev.Path) {
			// A token limited to path prefixes sees only those files; a
			// loss counted on a hidden event still counts.
			*carried += ev.Dropped
			continue
		}
		ev.Dropped += *carried
		*carried = 0
		if err := stream.Send(watchResponse(ev)); err != nil {
			return err
		}
	}
}

var watchKinds = map[watch.Kind]hashlinev1.WatchEventKind{
	watch.Created:  hashlinev1.WatchEventKind_WATCH_EVENT_KIND_CREATED,
	watch.Modified: hashlinev1.WatchEventKind_WATCH_EVENT_KIND_MODIFIED,
	watch.Deleted:  hashlinev1.WatchEventKind_WATCH_EVENT_KIND_DELETED,
	watch.Moved:    hashlinev1.WatchEventKind_WATCH_EVENT_KIND_MOVED,
}

// visibleMove is a move as a caller whose token sees only one of its ends
// may see it: a file that left what it may see was deleted, one that came
// in was created, and the other path is not named.
func visibleMove(ctx context.Context, ev watch.Event) watch.Event {
	if ev.Kind != watch.Moved {
		return ev
	}
	to, from := allowed(ctx, ev.Path), allowed(ctx, ev.From)
	switch {
	case to && !from:
		ev.Kind, ev.From, ev.OldVersion, ev.Changed = watch.Created, "", "", nil
	case from && !to:
		ev.Kind, ev.Path, ev.From, ev.NewVersion, ev.Changed = watch.Deleted, ev.From, "", "", nil
	}
	return ev
}

func watchResponse(ev watch.Event) *hashlinev1.WatchResponse {
	r := &hashlinev1.WatchResponse{
		Path:       ev.Path,
		Kind:       watchKinds[ev.Kind],
		Agent:      ev.Agent,
		External:   ev.External,
		OldVersion: ev.OldVersion,
		NewVersion: ev.NewVersion,
		Dropped:    ev.Dropped,
		Time:       timestamppb.New(ev.Time),
		FromPath:   ev.From,
		ChangeSet:  ev.ChangeSet,
		ChangeId:   ev.ChangeID,
	}
	if len(ev.Changed) > 0 {
		r.Changed = make([]*hashlinev1.LineRange, len(ev.Changed))
		for i, c := range ev.Changed {
			r.Changed[i] = &hashlinev1.LineRange{
				OldStart: int32(c.OldStart), OldCount: int32(c.OldCount),
				NewStart: int32(c.NewStart), NewCount: int32(c.NewCount),
			}
		}
	}
	return r
}
