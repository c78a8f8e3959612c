package engine

import (
	"context"
	"errors"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// WriteMode is what a Write does about a file already at its path.
type WriteMode int

const (
	// WriteUpsert creates the file or replaces the one there (the zero
	// value).
	WriteUpsert WriteMode = iota
	// WriteCreate creates the file; one already there is an error.
	WriteCreate
	// WriteReplace replaces the file there; none there is an error.
	WriteReplace
)

// WriteRequest is a Write: a whole file's new content.
type WriteRequest struct {
	// Path is the file, relative to the workspace root.
	Path    string
	Content string
	Mode    WriteMode
	// ExpectedVersion, if set, is the version the file must have
	// (compare-and-swap).
	ExpectedVersion string
	// StrictSyntax refuses the write, with a *SyntaxError, when its
	// content would have syntax errors the file had not, whatever the
	// engine's mode (WithSyntax).
	StrictSyntax bool
}

// WriteResult is what a Write did (or, in a dry run of a set, would do).
type WriteResult struct {
	// Path is the cleaned path; Version the new file's.
	Path, Version string
	TotalLines    int
	// Created says no file was there before.
	Created bool
	// Diagnostics are the syntax errors the write introduced (those the
	// file it replaced had not); SyntaxNotChecked says why the content
	// was not checked, when that matters.
	Diagnostics      []Diagnostic
	SyntaxNotChecked string
	// Warnings are what the operator's commands did that the caller
	// should know (checkers.go): the content formatted, a command that
	// failed.
	Warnings []string
}

func (*WriteRequest) isChange()      {}
func (*WriteResult) isChangeResult() {}

// Write creates or overwrites a whole file, atomically and durably: a
// change set of one change (change.go).
func (s *Engine) Write(ctx context.Context, req *WriteRequest) (*WriteResult, error) {
	return applyOne[*WriteResult](ctx, s, req, false)
}

// checkWrite checks what can be checked of a Write before anything is
// read: the content and the mode.
func checkWrite(req *WriteRequest) error {
	if refusal := nulRefusal(req.Content); refusal != "" {
		return invalid(ReasonBinaryContent, "content", "content %s", refusal)
	}
	if _, err := writeMode(req.Mode); err != nil {
		return err
	}
	return nil
}

// writeMode is the workspace's mode of m. A mode the engine does not know
// keeps the number it was given, which the refusal names.
func writeMode(m WriteMode) (workspace.WriteMode, error) {
	switch m {
	case WriteUpsert:
		return workspace.Upsert, nil
	case WriteCreate:
		return workspace.CreateOnly, nil
	case WriteReplace:
		return workspace.ReplaceOnly, nil
	}
	return 0, BadRequest("mode", "unknown write mode %d; use WRITE_MODE_UPSERT, WRITE_MODE_CREATE or WRITE_MODE_REPLACE", int(m))
}

// writePlan is a write change: its request, and once planned (planWrite)
// the write checked against the file it replaces, not yet written.
type writePlan struct {
	req    *WriteRequest
	key    string
	text   []byte // the new content
	opts   workspace.WriteOptions
	cur    *workspace.File // the file replaced, when readable as text
	exists bool            // a file is there
	written
	syntaxState
	commandState
}

// before is the replaced file's text; nil for none, or one not read as
// text: then every error of the content is new.
func (p *writePlan) before() []byte {
	if p.cur == nil {
		return nil
	}
	return p.cur.Text
}

// newDoc is the content written: as sent (not copied), or as formatted.
func (p *writePlan) newDoc() *hashline.Document {
	if p.formatted {
		return hashline.ParseDocument(p.text)
	}
	return hashline.ParseText(p.req.Content)
}

// knownLines are the lines of the content written its author knows: all
// of them, unless a formatter changed some (reformatWrite).
func (p *writePlan) knownLines(n int) versions.Lines {
	if p.formatted {
		return p.shown
	}
	return versions.Range(1, n)
}

// planWrite checks a write of the file rel (view key key) under its lock:
// the mode and the compare-and-swap version against the file there.
func (s *Engine) planWrite(ctx context.Context, p *writePlan, rel, key string) error {
	req := p.req
	mode, err := writeMode(req.Mode)
	if err != nil {
		return err
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
		s.noticeLoaded(ctx, rel, key, cur, nil)
	case errors.Is(err, workspace.ErrNotFound):
	case errors.Is(err, workspace.ErrBinary), errors.Is(err, workspace.ErrNotText), errors.Is(err, workspace.ErrTooLarge):
		// A file we cannot show may still be replaced whole. Its version
		// is only needed for a compare-and-swap, and then only if it is
		// not too large to hash.
		if req.ExpectedVersion != "" {
			if errors.Is(err, workspace.ErrTooLarge) {
				return err
			}
			v, verr := s.ws.FileVersion(rel)
			if verr != nil {
				return err
			}
			current = v
		}
	default:
		return err
	}
	if want := req.ExpectedVersion; want != "" && want != current {
		return &VersionMismatchError{
			Path: rel, Expected: want, Current: current,
			Hint: "someone changed the file since you read it; Read it again, merge, and retry with the new version",
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.key, p.text, p.opts, p.cur, p.exists = key, []byte(req.Content), opts, cur, exists
	return nil
}

// writeWritten records a Write's write wr (of change set set, if any): the
// Watch event, what its author saw, and the result.
func (s *Engine) writeWritten(ctx context.Context, p *writePlan, wr *workspace.WriteResult, set string) *WriteResult {
	s.publishWrite(ctx, p.cur, wr, p.text, set)
	doc := p.newDoc()
	// Its author knows every line of what it wrote, but those a formatter
	// changed.
	s.saw(ctx, p.key, doc, exactText(p.opts.Encoding), versions.Seen{Version: wr.Version, Lines: p.knownLines(doc.Len())})
	return &WriteResult{
		Path:       wr.Path,
		Version:    wr.Version,
		TotalLines: doc.Len(),
		Created:    wr.Created,
	}
}
