package engine

import (
	"context"
	"errors"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// Write creates or overwrites a whole file, atomically and durably.
func (s *Engine) Write(ctx context.Context, req *hashlinev1.WriteRequest) (*hashlinev1.WriteResponse, error) {
	if err := checkWrite(req); err != nil {
		return nil, err
	}
	// The file replaced is read (its encoding, its version) as a Read
	// reads it.
	hold := s.fileBytes(req.GetPath())*readHoldFactor + int64(len(req.GetContent()))*writeHoldFactor
	release, err := s.memory.acquire(ctx, "this Write of "+req.GetPath(), hold)
	if err != nil {
		return nil, err
	}
	defer release()
	rel, key, unlock, err := s.lockPath(ctx, req.GetPath())
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, err := s.planWrite(ctx, req, rel, key)
	if err != nil {
		return nil, err
	}
	wr, err := s.ws.WriteFile(rel, p.content, p.opts)
	if err != nil {
		return nil, err
	}
	return s.written(ctx, p, wr, ""), nil
}

// checkWrite checks what can be checked of a Write before anything is
// read: the content and the mode.
func checkWrite(req *hashlinev1.WriteRequest) error {
	if refusal := nulRefusal(req.GetContent()); refusal != "" {
		return invalid(ReasonBinaryContent, "content", "content %s", refusal)
	}
	if _, err := writeMode(req.GetMode()); err != nil {
		return err
	}
	return nil
}

func writeMode(m hashlinev1.WriteMode) (workspace.WriteMode, error) {
	switch m {
	case hashlinev1.WriteMode_WRITE_MODE_UNSPECIFIED, hashlinev1.WriteMode_WRITE_MODE_UPSERT:
		return workspace.Upsert, nil
	case hashlinev1.WriteMode_WRITE_MODE_CREATE:
		return workspace.CreateOnly, nil
	case hashlinev1.WriteMode_WRITE_MODE_REPLACE:
		return workspace.ReplaceOnly, nil
	}
	return 0, BadRequest("mode", "unknown write mode %d; use WRITE_MODE_UPSERT, WRITE_MODE_CREATE or WRITE_MODE_REPLACE", m)
}

// writePlan is a Write checked against the file it replaces, not yet
// written.
type writePlan struct {
	req     *hashlinev1.WriteRequest
	key     string
	content []byte
	opts    workspace.WriteOptions
	cur     *workspace.File // the file replaced, when readable as text
	exists  bool            // a file is there
}

// planWrite checks a Write of the file rel (view key key) under its lock:
// the mode and the compare-and-swap version against the file there.
func (s *Engine) planWrite(ctx context.Context, req *hashlinev1.WriteRequest, rel, key string) (*writePlan, error) {
	mode, err := writeMode(req.GetMode())
	if err != nil {
		return nil, err
	}
	opts := workspace.WriteOptions{Mode: mode}
	// Keep the encoding of a file being replaced, and check the caller's
	// compare-and-swap version against it.
	cur, _, err := s.readKnown(rel, key)
	current := "" // the existing file's version; "" when there is none
	exists := !errors.Is(err, workspace.ErrNotFound)
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
		return nil, &VersionMismatchError{
			Path: rel, Expected: want, Current: current,
			Hint: "someone changed the file since you read it; Read it again, merge, and retry with the new version",
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &writePlan{req: req, key: key, content: []byte(req.GetContent()), opts: opts, cur: cur, exists: exists}, nil
}

// written records a Write's write wr (of change set set, if any): the
// Watch event, what its author saw, and the response.
func (s *Engine) written(ctx context.Context, p *writePlan, wr *workspace.WriteResult, set string) *hashlinev1.WriteResponse {
	s.publishWrite(ctx, p.cur, wr, p.content, set)
	doc := hashline.ParseText(p.req.GetContent()) // no copy of the content
	// Its author knows every line of what it wrote.
	s.saw(ctx, p.key, doc, exactText(p.opts.Encoding), versions.Seen{Version: wr.Version, Lines: versions.Range(1, doc.Len())})
	return &hashlinev1.WriteResponse{
		Path:       wr.Path,
		Version:    wr.Version,
		TotalLines: int32(doc.Len()),
		Created:    wr.Created,
	}
}
