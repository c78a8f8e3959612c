package server

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// CacheStats returns the counters of the snapshot cache (hits, misses,
// evictions, bytes, entries, and its disk store's) that rebases read base
// versions from.
func (s *Service) CacheStats() versions.Stats { return s.cache.Stats() }

// SaveSnapshots spills every snapshot held in memory to the disk store
// (WithSnapshotDisk), for the next server of this workspace; without one it
// does nothing. Call it once no more calls are served, then close the disk.
func (s *Service) SaveSnapshots() { s.cache.Save() }

// ViewStats returns the counters of the per-agent views: how many (agent,
// file) pairs are remembered and how many were forgotten at the bound.
func (s *Service) ViewStats() versions.ViewStats { return s.views.Stats() }

// viewKey names the file rel resolves to, so that a symlink and its target
// share one view, as they share one lock.
func (s *Service) viewKey(rel string) string { return s.ws.LockKey(rel) }

// saw records that the calling agent was shown version of the file whose
// view key is key, and keeps what known keeps.
func (s *Service) saw(ctx context.Context, key, version string, doc *hashline.Document, exact bool) {
	s.known(key, version, doc, exact)
	s.views.See(AgentID(ctx), key, version)
}

// known keeps doc, the text of version, as a snapshot for later rebases
// and records version as the latest the server has seen of the file whose
// view key is key. Only a snapshot whose bytes are the file's (exact: UTF-8
// text, not a decoded UTF-16 file) is a latest version that readKnown may
// compare a file with; otherwise the latest is recorded as none. Comparing
// a UTF-8 file with the decoded text of a UTF-16 version would find it
// equal after a conversion that kept the text, and give it the UTF-16
// file's version.
func (s *Service) known(key, version string, doc *hashline.Document, exact bool) {
	s.cache.Put(version, doc)
	if !exact {
		version = ""
	}
	s.latest.See("", key, version)
}

// exactText reports whether a file of encoding enc holds its text as it is,
// so that a snapshot of the text is a snapshot of the file's bytes.
func exactText(enc workspace.Encoding) bool { return enc == "" || enc == workspace.UTF8 }

// readKnown reads the file rel (view key key). When its bytes are exactly
// the cached snapshot of the version the server last read or wrote there,
// that version is reused without hashing, and that snapshot is returned
// too (doc is nil otherwise): comparing bytes costs a small part of a
// hash. Bytes, not sizes or times, decide, so a change made outside the
// server is never missed.
func (s *Service) readKnown(rel, key string) (f *workspace.File, doc *hashline.Document, err error) {
	return s.readKnownBeside(rel, key, nil)
}

// readKnownBeside is readKnown that runs beside on the text of a file it
// did not know while the file's version is hashed (ReadOptions.Beside).
func (s *Service) readKnownBeside(rel, key string, beside func(text []byte)) (f *workspace.File, doc *hashline.Document, err error) {
	f, err = s.ws.ReadFileWith(rel, workspace.ReadOptions{Known: func(raw []byte) (string, []byte) {
		if v, d, ok := s.snapshot(key); ok && d.Equal(raw) {
			doc = d
			return v, d.View()
		}
		return "", nil
	}, Beside: beside})
	return f, doc, err
}

// snapshot returns the version the server last read or wrote at the file
// whose view key is key, and its parse, when the cache still holds it and
// its bytes are the file's (see known).
func (s *Service) snapshot(key string) (string, *hashline.Document, bool) {
	v, ok := s.latest.Seen("", key)
	if !ok || v == "" {
		return "", nil, false
	}
	d, ok := s.cache.Peek(v)
	return v, d, ok
}

// load is readKnown that also returns the parsed text, taken from the
// cache when it holds the version, so a file is not split into lines again.
func (s *Service) load(rel, key string) (*workspace.File, *hashline.Document, error) {
	var parsed *hashline.Document
	f, doc, err := s.readKnownBeside(rel, key, func(text []byte) {
		// A large file the server did not know is parsed while its hash
		// runs (ReadOptions.Beside).
		parsed = parseText(text)
	})
	if err != nil || doc != nil {
		return f, doc, err
	}
	if d, ok := s.cache.Peek(f.Version); ok {
		return f, d, nil // its line sums may be computed already
	}
	if parsed == nil { // a file too small to be parsed beside its hash
		parsed = parseText(f.Text)
	}
	return f, parsed, nil
}

// sawGrep is saw for a file Grep showed. Grep searches raw bytes; only valid
// UTF-8 is exactly the text a Read of that version returns, so only that is
// cached (the view is recorded either way).
// A version already cached is not parsed again.
func (s *Service) sawGrep(ctx context.Context, f *hashlinev1.GrepFile, raw []byte) {
	exact := utf8.Valid(raw)
	var doc *hashline.Document
	if !s.cache.Touch(f.GetVersion()) && exact {
		doc = hashline.ParseDocument(raw)
	}
	s.saw(ctx, s.viewKey(f.GetPath()), f.GetVersion(), doc, exact)
}

// needsRead returns the index of the first edit that refers to existing
// content (replace, insert, delete, replaceText), or -1. Append and prepend
// only add lines at an end of the file, so they need no read.
func needsRead(edits []hashline.Edit) int {
	for i, e := range edits {
		switch e.Op {
		case hashline.OpReplace, hashline.OpInsertAfter, hashline.OpInsertBefore, hashline.OpDelete, hashline.OpReplaceText:
			return i
		}
	}
	return -1
}

// rebased is how an Edit's references were resolved.
type rebased struct {
	edits    []hashline.Edit
	from     string // the base version, when the references were rebased
	moved    []versions.Move
	warnings []string
}

// rebaseBase is the version an Edit's references are read against: the
// request's baseVersion, else the one the agent last saw ("" if none).
func rebaseBase(req *hashlinev1.EditRequest, seen string) string {
	if b := req.GetBaseVersion(); b != "" {
		return b
	}
	return seen
}

// rebase resolves the batch's base: the request's baseVersion, else the
// version this agent last saw (seen), else the current file. When the base
// is an older version whose snapshot is held (in memory or on disk), the
// references are carried onto doc (the current file); a
// *versions.ConflictError is returned when other changes touched them.
//
// When the base is an older version the server does not hold (evicted, a
// restart without the state store, a change made behind its back that
// nobody read, a version it never saw), no referenced line can be proven
// unchanged, so a batch with line references is refused with STALE_REF
// and the current lines (versions.UnknownBase); nothing is written. A batch
// without references (append, prepend, replaceText) reads no line of the
// base and is checked against the current file, as a rebase would. With
// no base at all (an agent that never saw the file, require-read off) the
// batch is checked against the current file by line and hash.
func (s *Service) rebase(req *hashlinev1.EditRequest, f *workspace.File, doc *hashline.Document, seen string, edits []hashline.Edit) (*rebased, error) {
	out := &rebased{edits: edits}
	base, how := rebaseBase(req, seen), "gave as baseVersion"
	if req.GetBaseVersion() == "" {
		how = "last saw"
	}
	if base == "" || base == f.Version {
		return out, nil
	}
	bdoc, ok := s.cache.Get(base)
	if !ok {
		if b := versions.UnknownBase(doc, edits, s.opts.hasher); b != nil {
			return nil, &staleError{batch: b, currentVersion: f.Version, unknownBase: base, how: how}
		}
		return out, nil
	}
	r, err := versions.Rebase(bdoc, doc, edits, s.opts.hasher)
	var ce *versions.ConflictError
	switch {
	case errors.As(err, &ce):
		ce.BaseVersion, ce.CurrentVersion = base, f.Version
		return nil, ce
	case errors.Is(err, versions.ErrNotBase):
		out.warnings = append(out.warnings, fmt.Sprintf(
			"the references do not all match version %s, the one you %s (%v); they were checked against the current file %s by line and hash instead. Pass baseVersion with the version your tags come from to have them rebased exactly",
			base, how, err, f.Version))
		return out, nil
	case err != nil:
		return nil, err
	case r.Refs > 0:
		out.edits, out.from, out.moved = r.Edits, base, r.Moved
	}
	return out, nil
}

func movedProto(moved []versions.Move) []*hashlinev1.MovedRef {
	out := make([]*hashlinev1.MovedRef, len(moved))
	for i, m := range moved {
		out[i] = &hashlinev1.MovedRef{Ref: m.Ref, From: int32(m.From), To: int32(m.To)}
	}
	return out
}
