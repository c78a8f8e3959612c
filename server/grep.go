package server

import (
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
	path := req.GetPath()
	if path == "" {
		path = "." // the whole workspace
	}
	rel, err := s.ws.Rel(path)
	if err != nil {
		return err
	}
	maxMatches := int(req.GetMaxMatches())
	if maxMatches == 0 {
		maxMatches = DefaultMaxMatches
	}
	h := s.opts.hasher
	sum, err := grep.Search(stream.Context(), s.ws.Root().FS(), grep.Options{
		Pattern:         req.GetPattern(),
		Literal:         req.GetLiteral(),
		CaseInsensitive: req.GetCaseInsensitive(),
		Path:            rel,
		Globs:           req.GetGlob(),
		ExcludeGlobs:    req.GetExcludeGlob(),
		Before:          int(req.GetBefore()),
		After:           int(req.GetAfter()),
		MaxMatches:      maxMatches,
		MaxFileBytes:    s.ws.MaxFileBytes(),
		SkipFile:        workspace.IsTempName,
	}, func(f grep.File) error {
		lines := make([]*hashlinev1.GrepLine, len(f.Lines))
		for i, l := range f.Lines {
			lines[i] = &hashlinev1.GrepLine{
				Number:  int32(l.Number),
				Hash:    h.Sum(l.Content),
				Content: hashline.CutLine(l.Content, s.opts.maxLineBytes),
				Match:   l.Match,
			}
		}
		return stream.Send(&hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_File{File: &hashlinev1.GrepFile{
			Path:    f.Path,
			Version: workspace.Version(f.Raw),
			Lines:   lines,
		}}})
	})
	if err != nil {
		return err
	}
	return stream.Send(&hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_Summary{Summary: &hashlinev1.GrepSummary{
		FilesScanned: int32(sum.FilesScanned),
		FilesMatched: int32(sum.FilesMatched),
		Matches:      int32(sum.Matches),
		Truncated:    sum.Truncated,
	}}})
}
