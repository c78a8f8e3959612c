package engine

import (
	"context"

	"github.com/hashline/hashline/internal/buildinfo"
)

// StatusResult describes the server.
type StatusResult struct {
	// Root is the workspace's absolute path on the server's machine.
	Root string
	// Version is the server's build version.
	Version string
	// HashLen is the hex digits of a line's hash: the length of HASH in
	// every "LINE:HASH" tag.
	HashLen int
	// RequireRead says an agent must have seen a file before it may
	// replace, insert, delete or replaceText in it (WithRequireRead).
	RequireRead bool
}

// Status describes the server. The root is the absolute path on the
// server's machine: a caller that may call Status is already trusted with
// the workspace's contents, and the path is what lets a person or an agent
// tell which checkout a server edits (a NOT_FOUND from the wrong one is
// the usual confusion). Tokens limited to path prefixes may call it too;
// it names no file.
func (s *Engine) Status(context.Context) (*StatusResult, error) {
	return &StatusResult{
		Root:        s.ws.Dir(),
		Version:     buildinfo.Version(),
		HashLen:     s.opts.hasher.Len(),
		RequireRead: s.opts.requireRead,
	}, nil
}
