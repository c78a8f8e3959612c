package server

import (
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
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
