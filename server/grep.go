package server

import (
	"errors"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// DefaultMaxMatches is Grep's match limit when the request sets none.
const DefaultMaxMatches = 100

// Grep streams the matching lines of every file under the request's path,
// one message per file in path order, then a summary.
func (s *Service) Grep(req *hashlinev1.GrepRequest, stream hashlinev1.FileService_GrepServer) error {
	return toStatus(s.grep(req, stream))
}

func (s *Service) grep(req *hashlinev1.GrepRequest, stream hashlinev1.FileService_GrepServer) error {
	if req.GetPattern() == "" {
		return badRequest("pattern", "pattern is empty; give an RE2 pattern, or a plain string with literal set")
	}
	for _, f := range []struct {
		name string
		v    int32
	}{{"before", req.GetBefore()}, {"after", req.GetAfter()}, {"maxMatches", req.GetMaxMatches()}} {
		if f.v < 0 {
			return badRequest(f.name, "%s %d is negative", f.name, f.v)
		}
	}
	if err := grep.CheckTypes(req.GetType()); err != nil {
		return badRequest("type", "%v; or select files by name with glob", err)
	}
	path := req.GetPath()
	if path == "" {
		path = "." // the whole workspace
	}
	rel, err := s.ws.Rel(path)
	if err != nil {
		return err
	}
	// The path is resolved as Read resolves its own, so that a symlink
	// loop, a missing path, a link out of the root or into version-control
	// metadata is refused as Read refuses it.
	if _, _, err := s.ws.Stat(rel); err != nil {
		return err
	}
	maxMatches := int(req.GetMaxMatches())
	if maxMatches == 0 {
		maxMatches = DefaultMaxMatches
	}
	sum, err := grep.Search(stream.Context(), s.searchFS(stream.Context()), grep.Options{
		Pattern:         req.GetPattern(),
		Literal:         req.GetLiteral(),
		CaseInsensitive: req.GetCaseInsensitive(),
		Path:            rel,
		Globs:           req.GetGlob(),
		ExcludeGlobs:    req.GetExcludeGlob(),
		Types:           req.GetType(),
		Hidden:          req.GetHidden(),
		NoIgnore:        req.GetNoIgnore(),
		Before:          int(req.GetBefore()),
		After:           int(req.GetAfter()),
		MaxMatches:      maxMatches,
		MaxFileBytes:    s.ws.MaxFileBytes(),
		SkipFile:        workspace.IsTempName,
		SkipLink:        s.linksToVCS,
	}, func(f grep.File) error {
		gf := s.grepFile(f)
		if err := stream.Send(&hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_File{File: gf}}); err != nil {
			return err
		}
		// Edits this agent makes from these tags rebase from this version.
		s.sawGrep(stream.Context(), gf, f.Raw)
		return nil
	})
	if err != nil {
		return err
	}
	return stream.Send(&hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_Summary{Summary: &hashlinev1.GrepSummary{
		FilesScanned: int32(sum.FilesScanned),
		FilesMatched: int32(sum.FilesMatched),
		Matches:      int32(sum.Matches),
		Truncated:    sum.Truncated,
		BytesScanned: sum.BytesScanned,
		Elapsed:      durationpb.New(sum.Elapsed),
	}}})
}

// linksToVCS reports whether the symlink at rel leads into version-control
// metadata that this server does not read: the walk skips such
// directories by name, but would follow a link into one.
func (s *Service) linksToVCS(rel string) bool {
	_, _, err := s.ws.Stat(rel)
	return errors.Is(err, workspace.ErrVCSPath)
}

// grepFile turns one file's result into its message: tagged lines, with
// the version of the exact bytes that were searched (so an edit from these
// tags rebases like one from a Read of that version).
func (s *Service) grepFile(f grep.File) *hashlinev1.GrepFile {
	h := s.opts.hasher
	lines := make([]*hashlinev1.GrepLine, len(f.Lines))
	for i, l := range f.Lines {
		gl := &hashlinev1.GrepLine{
			Number:  int32(l.Number),
			Hash:    h.Sum(l.Content),
			Content: hashline.CutLine(l.Content, s.opts.maxLineBytes),
			Match:   l.Match,
		}
		shown := shownBytes(l.Content, s.opts.maxLineBytes)
		for _, sp := range l.Submatches {
			if sp.End > shown {
				break // past the cut: not in content
			}
			gl.Submatches = append(gl.Submatches, &hashlinev1.Span{Start: int32(sp.Start), End: int32(sp.End)})
		}
		lines[i] = gl
	}
	return &hashlinev1.GrepFile{Path: f.Path, Version: workspace.Version(f.Raw), Lines: lines}
}

// shownBytes returns how many bytes of content a line shows: all of them,
// or as many as hashline.CutLine keeps (at most max, backed off to a rune
// boundary) before its marker.
func shownBytes(content string, max int) int {
	if max <= 0 || len(content) <= max {
		return len(content)
	}
	n := max
	for n > 0 && !utf8.RuneStart(content[n]) {
		n--
	}
	return n
}
