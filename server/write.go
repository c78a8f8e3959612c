package server

import (
	"context"
	"errors"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// Write creates or overwrites a whole file, atomically and durably.
// A request_id makes a retry return the first call's outcome (idempotency.go).
func (s *Service) Write(ctx context.Context, req *hashlinev1.WriteRequest) (*hashlinev1.WriteResponse, error) {
	return once(ctx, s, req, req.GetRequestId(), false, func() (*hashlinev1.WriteResponse, error) {
		resp, err := s.write(ctx, req)
		return resp, toStatus(err)
	})
}

func (s *Service) write(ctx context.Context, req *hashlinev1.WriteRequest) (*hashlinev1.WriteResponse, error) {
	content := []byte(req.GetContent())
	if refusal := nulRefusal(req.GetContent()); refusal != "" {
		return nil, invalid(ReasonBinaryContent, "content", "content %s", refusal)
	}
	var mode workspace.WriteMode
	switch req.GetMode() {
	case hashlinev1.WriteMode_WRITE_MODE_UNSPECIFIED, hashlinev1.WriteMode_WRITE_MODE_UPSERT:
		mode = workspace.Upsert
	case hashlinev1.WriteMode_WRITE_MODE_CREATE:
		mode = workspace.CreateOnly
	case hashlinev1.WriteMode_WRITE_MODE_REPLACE:
		mode = workspace.ReplaceOnly
	default:
		return nil, badRequest("mode", "unknown write mode %d; use WRITE_MODE_UPSERT, WRITE_MODE_CREATE or WRITE_MODE_REPLACE", req.GetMode())
	}
	rel, key, unlock, err := s.lockPath(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	defer unlock()

	opts := workspace.WriteOptions{Mode: mode}
	// Keep the encoding of a file being replaced, and check the caller's
	// compare-and-swap version against it.
	cur, _, err := s.readKnown(rel, key)
	current := "" // the existing file's version; "" when there is none
	switch {
	case err == nil:
		opts.Encoding = cur.Encoding
		current = cur.Version
	case errors.Is(err, workspace.ErrNotFound):
	case errors.Is(err, workspace.ErrBinary), errors.Is(err, workspace.ErrNotText), errors.Is(err, workspace.ErrTooLarge):
		// A file we cannot show may still be replaced whole. Its version
		// is only needed for a compare-and-swap, and then only if it is
		// not too large to hash.
		if req.GetExpectedVersion() != "" {
			if errors.Is(err, workspace.ErrTooLarge) {
				return nil, err
			}
			v, verr := s.ws.FileVersion(rel)
			if verr != nil {
				return nil, err
			}
			current = v
		}
	default:
		return nil, err
	}
	if want := req.GetExpectedVersion(); want != "" && want != current {
		return nil, &versionMismatchError{
			path: rel, expected: want, current: current,
			hint: "someone changed the file since you read it; Read it again, merge, and retry with the new version",
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wr, err := s.ws.WriteFile(rel, content, opts)
	if err != nil {
		return nil, err
	}
	s.publishWrite(ctx, cur, wr, content)
	doc := hashline.ParseText(req.GetContent()) // no copy of the content
	// Its author knows every line of what it wrote.
	s.saw(ctx, key, doc, exactText(opts.Encoding), versions.Seen{Version: wr.Version, Lines: versions.Range(1, doc.Len())})
	return &hashlinev1.WriteResponse{
		Path:       wr.Path,
		Version:    wr.Version,
		TotalLines: int32(doc.Len()),
		Created:    wr.Created,
	}, nil
}
