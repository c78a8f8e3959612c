package server

import (
	"google.golang.org/protobuf/types/known/durationpb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/grep"
)

// The reading operations' messages and the engine's domain types: Read,
// List, Grep and Status.

func readRequest(req *hashlinev1.ReadRequest) engine.ReadRequest {
	return engine.ReadRequest{
		Path:      req.GetPath(),
		Offset:    int(req.GetOffset()),
		Limit:     int(req.GetLimit()),
		OmitLines: req.GetOmitLines(),
	}
}

func readResponse(r *engine.ReadResult) *hashlinev1.ReadResponse {
	resp := &hashlinev1.ReadResponse{
		Path:       r.Path,
		Version:    r.Version,
		Text:       r.Text,
		TotalLines: int32(r.TotalLines),
		Truncated:  r.Truncated,
		NextOffset: int32(r.NextOffset),
		Eol:        r.EOL,
		Bom:        r.BOM,
		Encoding:   string(r.Encoding),
	}
	if len(r.Lines) > 0 {
		// One backing array for the page's Line messages: one allocation
		// instead of one per line.
		backing := make([]hashlinev1.Line, len(r.Lines))
		resp.Lines = make([]*hashlinev1.Line, len(r.Lines))
		for i, l := range r.Lines {
			m := &backing[i]
			m.Number, m.Hash, m.Content = int32(l.Number), l.Hash, l.Content
			resp.Lines[i] = m
		}
	}
	return resp
}

func statusResponse(r *engine.StatusResult) *hashlinev1.StatusResponse {
	return &hashlinev1.StatusResponse{
		Root:        r.Root,
		Version:     r.Version,
		HashLen:     int32(r.HashLen),
		RequireRead: r.RequireRead,
	}
}

func listRequest(req *hashlinev1.ListRequest) engine.ListRequest {
	return engine.ListRequest{
		Path:            req.GetPath(),
		Globs:           req.GetGlob(),
		Recursive:       req.GetRecursive(),
		MaxEntries:      int(req.GetMaxEntries()),
		Hidden:          req.GetHidden(),
		NoIgnore:        req.GetNoIgnore(),
		IncludeVersions: req.GetIncludeVersions(),
		PageToken:       req.GetPageToken(),
	}
}

var entryTypes = [...]hashlinev1.EntryType{
	engine.EntryFile:    hashlinev1.EntryType_ENTRY_TYPE_FILE,
	engine.EntryDir:     hashlinev1.EntryType_ENTRY_TYPE_DIR,
	engine.EntrySymlink: hashlinev1.EntryType_ENTRY_TYPE_SYMLINK,
}

func listResponse(r *engine.ListResult) *hashlinev1.ListResponse {
	resp := &hashlinev1.ListResponse{Path: r.Path, Truncated: r.Truncated, NextPageToken: r.NextPageToken}
	if len(r.Entries) > 0 {
		// One backing array for the page's Entry messages: one allocation
		// instead of one per entry.
		backing := make([]hashlinev1.Entry, len(r.Entries))
		resp.Entries = make([]*hashlinev1.Entry, len(r.Entries))
		for i, e := range r.Entries {
			m := &backing[i]
			m.Path, m.Type, m.Size, m.Version = e.Path, entryTypes[e.Type], e.Size, e.Version
			resp.Entries[i] = m
		}
	}
	return resp
}

func grepRequest(req *hashlinev1.GrepRequest) engine.GrepRequest {
	return engine.GrepRequest{
		Pattern:         req.GetPattern(),
		Literal:         req.GetLiteral(),
		CaseInsensitive: req.GetCaseInsensitive(),
		Path:            req.GetPath(),
		Globs:           req.GetGlob(),
		ExcludeGlobs:    req.GetExcludeGlob(),
		Types:           req.GetType(),
		Hidden:          req.GetHidden(),
		NoIgnore:        req.GetNoIgnore(),
		Before:          int(req.GetBefore()),
		After:           int(req.GetAfter()),
		MaxMatches:      int(req.GetMaxMatches()),
	}
}

func grepFileResponse(f engine.GrepFile) *hashlinev1.GrepResponse {
	// One backing array for the file's GrepLine messages: one allocation
	// instead of one per line.
	backing := make([]hashlinev1.GrepLine, len(f.Lines))
	lines := make([]*hashlinev1.GrepLine, len(f.Lines))
	for i, l := range f.Lines {
		m := &backing[i]
		m.Number, m.Hash, m.Content, m.Match = int32(l.Number), l.Hash, l.Content, l.Match
		if len(l.Submatches) > 0 {
			m.Submatches = make([]*hashlinev1.Span, len(l.Submatches))
			for j, sp := range l.Submatches {
				m.Submatches[j] = &hashlinev1.Span{Start: int32(sp.Start), End: int32(sp.End)}
			}
		}
		lines[i] = m
	}
	return &hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_File{File: &hashlinev1.GrepFile{
		Path: f.Path, Version: f.Version, Lines: lines,
	}}}
}

func grepSummaryResponse(sum *grep.Summary) *hashlinev1.GrepResponse {
	return &hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_Summary{Summary: &hashlinev1.GrepSummary{
		FilesScanned: int32(sum.FilesScanned),
		FilesMatched: int32(sum.FilesMatched),
		Matches:      int32(sum.Matches),
		Truncated:    sum.Truncated,
		BytesScanned: sum.BytesScanned,
		Elapsed:      durationpb.New(sum.Elapsed),
	}}}
}
