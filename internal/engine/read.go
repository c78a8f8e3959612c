package engine

import (
	"context"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// ReadRequest asks for a page of a file.
type ReadRequest struct {
	Path string
	// Offset is the first line of the page, from 1; 0 means 1.
	Offset int
	// Limit is the most lines of the page; 0 means the engine's read limit
	// (WithReadLimit), as does anything over it.
	Limit int
	// OmitLines leaves the page's lines out of the result (Lines), its
	// tagged text (Text) only.
	OmitLines bool
}

// ReadResult is a page of a file.
type ReadResult struct {
	Path    string
	Version string
	// Lines are the page's lines, their content cut to the engine's line
	// limit (WithMaxLineBytes); none with OmitLines.
	Lines []hashline.TaggedLine
	// Text is the page as tagged text: lines "LINE:HASH|content" joined by
	// "\n" (hashline.AppendTagged).
	Text       string
	TotalLines int
	// Truncated says the page ended before the file did, at the line limit
	// or the byte budget; NextOffset is then the offset to ask for next.
	Truncated  bool
	NextOffset int
	// EOL is the file's line-ending style ("lf", "crlf" or "mixed"); BOM
	// says it starts with a UTF-8 byte order mark.
	EOL      string
	BOM      bool
	Encoding workspace.Encoding
}

// Read returns a page of a file as tagged lines. The page ends at the line
// limit or when the next line would take the tagged text over the byte
// budget (a page always holds at least one line), and then says truncated
// with the offset to ask for next.
func (s *Engine) Read(ctx context.Context, req ReadRequest) (*ReadResult, error) {
	if req.Offset < 0 {
		return nil, BadRequest("offset", "offset %d is negative; lines are numbered from 1 (0 means 1)", req.Offset)
	}
	if req.Limit < 0 {
		return nil, BadRequest("limit", "limit %d is negative; use 0 for the default of %d lines", req.Limit, s.opts.readLimit)
	}
	rel, key, err := s.resolve(req.Path)
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
	s.noticeRead(ctx, rel, key, f, doc)
	total := doc.Len()

	first := max(req.Offset, 1)
	if first > total && !(total == 0 && first == 1) {
		return nil, invalid(ReasonLineOutOfRange, "offset",
			"offset %d is past the end of %s (%d lines); read from offset 1", first, f.Path, total)
	}
	limit := req.Limit
	if limit == 0 || limit > s.opts.readLimit {
		limit = s.opts.readLimit
	}
	last := min(total, first+limit-1)

	// Stop early at the byte budget, counting the tagged text as it will be
	// sent. Lines are cut to maxLineBytes, so one line never exceeds
	// the budget by more than a tag and a marker. The text and the
	// structured lines come from one pass that hashes each line once.
	h := s.opts.hasher
	var lines []hashline.TaggedLine
	var each func(n int, hash, content string)
	if !req.OmitLines && last >= first {
		lines = make([]hashline.TaggedLine, 0, last-first+1)
		each = func(n int, hash, content string) {
			lines = append(lines, hashline.TaggedLine{Number: n, Hash: hash, Content: hashline.CutLine(content, s.opts.maxLineBytes)})
		}
	}
	text, end := hashline.AppendTaggedPage(nil, h, doc, first, last, s.opts.maxLineBytes, s.opts.readByteBudget, each)
	res := &ReadResult{
		Path:       f.Path,
		Version:    f.Version,
		Lines:      lines,
		Text:       string(text),
		TotalLines: total,
		EOL:        doc.EOLStyle(),
		BOM:        doc.BOM(),
		Encoding:   f.Encoding,
	}
	if end < total {
		res.Truncated = true
		res.NextOffset = end + 1
	}
	// Edits this agent makes from these tags are read against this
	// version, and may name the lines of this page.
	s.saw(ctx, key, doc, exactText(f.Encoding), versions.Seen{Version: f.Version, Lines: versions.Range(first, end)})
	return res, nil
}

// parseText parses a File's Text into a document of its own, which the
// version cache may keep after the File is gone.
func parseText(text []byte) *hashline.Document {
	return hashline.ParseDocument(text)
}
