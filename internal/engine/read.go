package engine

import (
	"context"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// Read returns a page of a file as tagged lines. The page ends at the line
// limit or when the next line would take the tagged text over the byte
// budget (a page always holds at least one line), and then says truncated
// with the offset to ask for next.
func (s *Engine) Read(ctx context.Context, req *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	if req.GetOffset() < 0 {
		return nil, BadRequest("offset", "offset %d is negative; lines are numbered from 1 (0 means 1)", req.GetOffset())
	}
	if req.GetLimit() < 0 {
		return nil, BadRequest("limit", "limit %d is negative; use 0 for the default of %d lines", req.GetLimit(), s.opts.readLimit)
	}
	rel, key, err := s.resolve(req.GetPath())
	if err != nil {
		return nil, err
	}
	// Reading, hashing and parsing a large file is the expensive part; a
	// caller that has given up (queued behind others, say) gets nothing.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	release, err := s.memory.acquire(ctx, "this Read of "+rel, s.fileBytes(rel)*readHoldFactor)
	if err != nil {
		return nil, err
	}
	defer release()
	f, doc, err := s.load(rel, key)
	if err != nil {
		return nil, err
	}
	total := doc.Len()

	first := max(int(req.GetOffset()), 1)
	if first > total && !(total == 0 && first == 1) {
		return nil, invalid(ReasonLineOutOfRange, "offset",
			"offset %d is past the end of %s (%d lines); read from offset 1", first, f.Path, total)
	}
	limit := int(req.GetLimit())
	if limit == 0 || limit > s.opts.readLimit {
		limit = s.opts.readLimit
	}
	last := min(total, first+limit-1)

	// Stop early at the byte budget, counting the tagged text as it will be
	// sent. Lines are cut to maxLineBytes, so one line never exceeds
	// the budget by more than a tag and a marker. The text and the
	// structured lines come from one pass that hashes each line once.
	h := s.opts.hasher
	var lines []*hashlinev1.Line
	var each func(n int, hash, content string)
	if !req.GetOmitLines() && last >= first {
		// One backing array for the page's Line messages: one allocation
		// instead of one per line.
		backing := make([]hashlinev1.Line, last-first+1)
		lines = make([]*hashlinev1.Line, 0, len(backing))
		each = func(n int, hash, content string) {
			l := &backing[len(lines)]
			l.Number = int32(n)
			l.Hash = hash
			l.Content = hashline.CutLine(content, s.opts.maxLineBytes)
			lines = append(lines, l)
		}
	}
	text, end := hashline.AppendTaggedPage(nil, h, doc, first, last, s.opts.maxLineBytes, s.opts.readByteBudget, each)
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
	// Edits this agent makes from these tags are read against this
	// version, and may name the lines of this page.
	s.saw(ctx, key, doc, exactText(f.Encoding), versions.Seen{Version: f.Version, Lines: versions.Range(first, end)})
	return resp, nil
}

// parseText parses a File's Text into a document of its own, which the
// version cache may keep after the File is gone.
func parseText(text []byte) *hashline.Document {
	return hashline.ParseDocument(text)
}
