package engine

import (
	"context"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/buildinfo"
)

// Status describes the server. The root is the absolute path on the
// server's machine: a caller that may call Status is already trusted with
// the workspace's contents, and the path is what lets a person or an agent
// tell which checkout a server edits (a NOT_FOUND from the wrong one is
// the usual confusion). Tokens limited to path prefixes may call it too;
// it names no file.
func (s *Engine) Status(ctx context.Context, _ *hashlinev1.StatusRequest) (*hashlinev1.StatusResponse, error) {
	return &hashlinev1.StatusResponse{
		Root:        s.ws.Dir(),
		Version:     buildinfo.Version(),
		HashLen:     int32(s.opts.hasher.Len()),
		RequireRead: s.opts.requireRead,
	}, nil
}
