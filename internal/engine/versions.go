package engine

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// CacheStats returns the counters of the snapshot cache (hits, misses,
// evictions, bytes, entries, and its disk store's) that rebases read base
// versions from.
func (s *Engine) CacheStats() versions.Stats { return s.cache.Stats() }

// SaveSnapshots spills every snapshot held in memory to the disk store
// (WithSnapshotDisk), for the next server of this workspace; without one it
// does nothing. Call it once no more calls are served, then close the disk.
func (s *Engine) SaveSnapshots() { s.cache.Save() }

// ViewStats returns the counters of the per-agent views: how many (agent,
// file) pairs are remembered and how many were forgotten at the bound.
func (s *Engine) ViewStats() versions.ViewStats { return s.views.Stats() }

// viewKey names the file rel resolves to, so that a symlink and its target
// share one view, as they share one lock.
func (s *Engine) viewKey(rel string) string { return s.ws.LockKey(rel) }

// saw records that the calling agent was shown the lines of seen of the
// file whose view key is key, and keeps what known keeps of seen.Version
// (its text is doc).
func (s *Engine) saw(ctx context.Context, key string, doc *hashline.Document, exact bool, seen versions.Seen) {
	s.known(key, seen.Version, doc, exact)
	s.views.See(Agent(ctx), key, seen)
}

// known keeps doc, the text of version, as a snapshot for later rebases
// and records version as the latest the server has seen of the file whose
// view key is key. Only a snapshot whose bytes are the file's (exact: UTF-8
// text, not a decoded UTF-16 file) is a latest version that readKnown may
// compare a file with; otherwise the latest is recorded as none. Comparing
// a UTF-8 file with the decoded text of a UTF-16 version would find it
// equal after a conversion that kept the text, and give it the UTF-16
// file's version.
func (s *Engine) known(key, version string, doc *hashline.Document, exact bool) {
	s.cache.Put(version, doc)
	if !exact {
		version = ""
	}
	s.latest.Set(key, version)
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
func (s *Engine) readKnown(rel, key string) (f *workspace.File, doc *hashline.Document, err error) {
	var opts workspace.ReadOptions
	v, d, ok := s.snapshot(key)
	if ok {
		opts.Known = &workspace.Known{Version: v, Text: d.View()}
	}
	f, err = s.ws.ReadFileWith(rel, opts)
	if err == nil && ok && f.Version == v {
		doc = d
	}
	return f, doc, err
}

// snapshot returns the version the server last read or wrote at the file
// whose view key is key, and its parse, when the cache still holds it and
// its bytes are the file's (see known).
func (s *Engine) snapshot(key string) (string, *hashline.Document, bool) {
	v, ok := s.latest.Get(key)
	if !ok || v == "" {
		return "", nil, false
	}
	d, ok := s.cache.Peek(v)
	return v, d, ok
}

// load is readKnown that also returns the parsed text, taken from the
// cache when it holds the version, so a file is not split into lines again.
func (s *Engine) load(rel, key string) (*workspace.File, *hashline.Document, error) {
	f, doc, err := s.readKnown(rel, key)
	if err != nil || doc != nil {
		return f, doc, err
	}
	if d, ok := s.cache.Peek(f.Version); ok {
		return f, d, nil // its line sums may be computed already
	}
	return f, parseText(f.Text), nil
}

// sawGrep is saw for a file Grep showed: its matched lines and their
// context. Grep searches raw bytes; only valid UTF-8 is exactly the text a
// Read of that version returns, so only that is cached (the view is
// recorded either way). A version already cached is not parsed again.
func (s *Engine) sawGrep(ctx context.Context, f GrepFile, raw []byte) {
	exact := utf8.Valid(raw)
	var doc *hashline.Document
	if !s.cache.Touch(f.Version) && exact {
		doc = hashline.ParseDocument(raw)
	}
	if s.opts.history != nil && exact {
		// A Grep, like a Read, may be the first to find a file changed
		// outside the server.
		d := doc
		if d == nil {
			d, _ = s.cache.Peek(f.Version)
		}
		if d != nil {
			s.noticeRead(ctx, f.Path, s.viewKey(f.Path), &workspace.File{Path: f.Path, Version: f.Version, Text: raw}, d)
		}
	}
	nums := make([]int, len(f.Lines))
	for i, l := range f.Lines {
		nums[i] = l.Number
	}
	s.saw(ctx, s.viewKey(f.Path), doc, exact, versions.Seen{Version: f.Version, Lines: versions.LinesOf(nums...)})
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

// rebased is how an Edit's references were resolved: versions.Resolved,
// under the names planEdit reads.
type rebased struct {
	edits    []hashline.Edit
	from     string // the base version, when the references were rebased
	moved    []versions.Move
	warnings []string
}

// rebase resolves the batch's line references against the file as it is
// (f, text doc) and the versions the agent saw (hist, of the file whose
// view key is key): the policy is versions.Resolve's. The engine records a
// base it rebased from as used by the agent, and gives a refusal the
// current version, as a StaleError.
func (s *Engine) rebase(baseVersion string, f *workspace.File, doc *hashline.Document, agent, key string, hist []versions.Seen, edits []hashline.Edit) (*rebased, error) {
	r, err := versions.Resolve(versions.Batch{
		Edits: edits, Hasher: s.opts.hasher, BaseVersion: baseVersion, Views: hist,
		Current: f.Version, Doc: doc, Snapshot: s.cache.Get,
	})
	var refusal *versions.Refusal
	if errors.As(err, &refusal) {
		return nil, &StaleError{Batch: refusal.Batch, CurrentVersion: f.Version, UnknownBase: refusal.UnknownBase, How: refusal.How, NotShown: refusal.NotShown}
	}
	if err != nil {
		return nil, err
	}
	if r.From != "" {
		s.views.Use(agent, key, r.From)
	}
	return &rebased{edits: r.Edits, from: r.From, moved: r.Moved, warnings: r.Warnings}, nil
}
