package server

import (
	"context"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
)

// Read returns a page of a file as tagged lines. The page ends at the line
// limit or when the next line would take the tagged text over the byte
// budget (a page always holds at least one line), and then says truncated
// with the offset to ask for next.
func (s *Service) Read(ctx context.Context, req *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	resp, err := s.read(ctx, req)
	return resp, toStatus(err)
}

func (s *Service) read(ctx context.Context, req *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	if req.GetOffset() < 0 {
		return nil, badRequest("offset", "offset %d is negative; lines are numbered from 1 (0 means 1)", req.GetOffset())
	}
	if req.GetLimit() < 0 {
		return nil, badRequest("limit", "limit %d is negative; use 0 for the default of %d lines", req.GetLimit(), s.opts.readLimit)
	}
	f, err := s.ws.ReadFile(req.GetPath())
	if err != nil {
		return nil, err
	}
	doc := hashline.ParseDocument(f.Text)
	total := doc.Len()

	first := max(int(req.GetOffset()), 1)
	if first > total && !(total == 0 && first == 1) {
		return nil, invalid(string(hashline.ReasonLineOutOfRange), "offset",
			"offset %d is past the end of %s (%d lines); read from offset 1", first, f.Path, total)
	}
	limit := int(req.GetLimit())
	if limit == 0 || limit > s.opts.readLimit {
		limit = s.opts.readLimit
	}
	last := min(total, first+limit-1)

	// Stop early at the byte budget, counting the tagged text as it will be
	// sent. Lines are cut to maxLineBytes, so one line never exceeds
	// the budget by more than a tag and a marker.
	h := s.opts.hasher
	budget := s.opts.readByteBudget
	text := make([]byte, 0, min(budget, len(f.Text)+16*(last-first+1))+64)
	lines := make([]*hashlinev1.Line, 0, last-first+1)
	end := first - 1
	for n := first; n <= last; n++ {
		before := len(text)
		if n > first {
			text = append(text, '\n')
		}
		text = hashline.AppendTagged(text, h, doc, n, n, s.opts.maxLineBytes)
		if len(text) > budget && n > first {
			text = text[:before]
			break
		}
		content := doc.Line(n)
		lines = append(lines, &hashlinev1.Line{
			Number:  int32(n),
			Hash:    h.Sum(content),
			Content: hashline.CutLine(content, s.opts.maxLineBytes),
		})
		end = n
	}
	resp := &hashlinev1.ReadResponse{
		Path:       f.Path,
		Version:    f.Version,
		Lines:      lines,
		Text:       string(text),
		TotalLines: int32(total),
		Eol:        doc.EOLStyle(),
		Bom:        doc.BOM(),
		Encoding:   string(f.Encoding),
	}
	if end < total {
		resp.Truncated = true
		resp.NextOffset = int32(end + 1)
	}
	// Edits this agent makes from these tags rebase from this version.
	s.saw(ctx, f.Path, f.Version, doc)
	return resp, nil
}
