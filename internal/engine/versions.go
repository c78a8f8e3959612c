package engine

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
	s.latest.See("", key, versions.Seen{Version: version})
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
	return s.readKnownBeside(rel, key, nil)
}

// readKnownBeside is readKnown that runs beside on the text of a file it
// did not know while the file's version is hashed (ReadOptions.Beside).
func (s *Engine) readKnownBeside(rel, key string, beside func(text []byte)) (f *workspace.File, doc *hashline.Document, err error) {
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
func (s *Engine) snapshot(key string) (string, *hashline.Document, bool) {
	v, ok := s.latest.Seen("", key)
	if !ok || v == "" {
		return "", nil, false
	}
	d, ok := s.cache.Peek(v)
	return v, d, ok
}

// load is readKnown that also returns the parsed text, taken from the
// cache when it holds the version, so a file is not split into lines again.
func (s *Engine) load(rel, key string) (*workspace.File, *hashline.Document, error) {
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

// sawGrep is saw for a file Grep showed: its matched lines and their
// context. Grep searches raw bytes; only valid UTF-8 is exactly the text a
// Read of that version returns, so only that is cached (the view is
// recorded either way). A version already cached is not parsed again.
func (s *Engine) sawGrep(ctx context.Context, f *hashlinev1.GrepFile, raw []byte) {
	exact := utf8.Valid(raw)
	var doc *hashline.Document
	if !s.cache.Touch(f.GetVersion()) && exact {
		doc = hashline.ParseDocument(raw)
	}
	nums := make([]int, len(f.GetLines()))
	for i, l := range f.GetLines() {
		nums[i] = int(l.GetNumber())
	}
	s.saw(ctx, s.viewKey(f.GetPath()), doc, exact, versions.Seen{Version: f.GetVersion(), Lines: versions.LinesOf(nums...)})
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

// baseChoice is a version an Edit's references may have been made
// against: the request's baseVersion, or one the agent saw.
type baseChoice struct {
	version string
	// seen has the lines of version the agent was shown; known is false
	// when that is not known (a baseVersion from an agent with no view at
	// all), and then any line counts.
	seen  versions.Seen
	known bool
	how   string // how the agent came by it, for messages
}

func (c baseChoice) shown() func(int) bool {
	if !c.known {
		return nil
	}
	return c.seen.Has
}

// rebase resolves the batch's line references (see the package versions
// documentation for how a rebase maps them). The versions tried, in order:
// the request's baseVersion, then the versions this agent saw of the file
// (views: the last few, the most recently shown first). The first against
// which every reference names a line by number and hash, and a line the
// agent was shown in that version (a range's start and end, an insertion's
// anchor), is the base: the batch is planned as it is when that is the
// current file (doc), and rebased from it onto doc when its snapshot is
// held (in memory or on disk); a *versions.ConflictError is returned when
// other changes touched the referenced lines. A base other than the first
// tried is named in a warning.
//
// A reference the base counts only by where an edit's reply said its line
// moved may name another line by its old number in a version read before,
// where a short hash matches by chance (or because the two lines differ
// only in spaces). Then the versions tried after the base that the
// references match too are read the same way, and where two readings land
// on different lines the batch is refused with both places shown
// (versions.Ambiguous); a later version the server no longer holds could
// be such a reading, and the batch is refused as for an unknown base.
//
// When no version verifies:
//   - If a version tried before is an older one the server does not hold
//     (evicted, a restart without the state store, a change made behind
//     its back that nobody read, a version it never saw), no referenced
//     line can be proven unchanged: STALE_REF with the current lines
//     (versions.UnknownBase).
//   - If the agent was shown every referenced line of the current file,
//     the planner checks the references against it by line and hash (and
//     reports the stale ones with fresh tags).
//   - Otherwise the references that do not name a line of the current file
//     the agent was shown are refused as stale (reason NOT_SHOWN,
//     versions.Unshown): a line number the agent never saw names nothing
//     it read, and a 2-hex hash that matches there is a collision or a
//     number from before lines moved.
//
// A baseVersion the views do not hold is taken at its word (baseChoices).
// An agent with no view of the file at all (read-before-edit off, or a
// batch of append, prepend and replaceText only) has only its baseVersion,
// if any, to go by; failing that, the batch is checked against the current
// file by line and hash, as before views remembered lines. A batch without
// line references (append, prepend, replaceText) reads no line of any
// version and is resolved against the current file; one with a malformed
// reference goes to the planner, which reports it.
func (s *Engine) rebase(baseVersion string, f *workspace.File, doc *hashline.Document, agent, key string, hist []versions.Seen, edits []hashline.Edit) (*rebased, error) {
	out := &rebased{edits: edits}
	h := s.opts.hasher
	if !versions.HasLineRefs(edits) || !versions.WellFormed(edits, h) {
		return out, nil
	}
	choices := baseChoices(baseVersion, hist)
	if len(choices) == 0 {
		return out, nil // no view and no baseVersion: the planner checks by line and hash
	}
	first := choices[0]
	for i, c := range choices {
		bdoc, ok := s.versionDoc(c.version, f, doc)
		if !ok {
			// The references may come from this version, and nothing
			// proves what they named in it: a version tried after it
			// that they happen to match is no proof either.
			return out, s.unknownBase(c, f, doc, edits)
		}
		if !versions.Check(bdoc, edits, h, c.shown()) {
			continue
		}
		r, landing, err := s.readAgainst(c.version, bdoc, f, doc, edits)
		if err != nil {
			return nil, err
		}
		if err := s.otherReadings(c, choices[i+1:], landing, f, doc, edits); err != nil {
			return nil, err
		}
		if i > 0 {
			out.warnings = append(out.warnings, fmt.Sprintf(
				"the references do not all match lines you were shown of version %s, the one you %s; they all match lines you were shown of version %s, which you %s, so they were read against that version",
				first.version, first.how, c.version, c.how))
		}
		if r != nil {
			s.views.Use(agent, key, c.version)
			out.edits, out.from, out.moved = r.Edits, c.version, r.Moved
		}
		return out, nil
	}
	if len(hist) == 0 {
		// Only a baseVersion, held, that the references do not match.
		out.warnings = append(out.warnings, fmt.Sprintf(
			"the references do not all match version %s, the one you %s; they were checked against the current file %s by line and hash instead. Pass baseVersion with the version your tags come from to have them rebased exactly",
			first.version, first.how, f.Version))
		return out, nil
	}
	var cur versions.Seen
	for _, v := range hist {
		if v.Version == f.Version {
			cur = v
		}
	}
	for _, n := range versions.RefLines(edits, h) {
		// A number past the end names no line: the planner says so
		// (LINE_OUT_OF_RANGE) with the file's length.
		if n <= doc.Len() && !cur.Has(n) {
			return nil, &StaleError{Batch: versions.Unshown(doc, edits, h, cur.Has), CurrentVersion: f.Version, NotShown: true}
		}
	}
	// Every referenced line was shown as the file is now: the planner
	// checks their hashes, and reports the changed ones with fresh tags.
	return out, nil
}

// versionDoc returns the text of version: doc when it is the current
// file's, else the snapshot held in memory or on disk.
func (s *Engine) versionDoc(version string, f *workspace.File, doc *hashline.Document) (*hashline.Document, bool) {
	if version == f.Version {
		return doc, true
	}
	return s.cache.Get(version)
}

// unknownBase is the refusal of a batch that may have been made against
// the version of c, which the server no longer holds (versions.UnknownBase);
// nil for a batch without line references.
func (s *Engine) unknownBase(c baseChoice, f *workspace.File, doc *hashline.Document, edits []hashline.Edit) error {
	if b := versions.UnknownBase(doc, edits, s.opts.hasher); b != nil {
		return &StaleError{Batch: b, CurrentVersion: f.Version, UnknownBase: c.version, How: c.how}
	}
	return nil
}

// readAgainst reads the batch against version (text bdoc): as it is when
// that is the current file, else rebased onto it (r). It returns where
// each reference lands in the current file (versions.Landing), and the
// conflict when the rebase meets other changes.
func (s *Engine) readAgainst(version string, bdoc *hashline.Document, f *workspace.File, doc *hashline.Document, edits []hashline.Edit) (*versions.Rebased, []int, error) {
	h := s.opts.hasher
	if version == f.Version {
		return nil, versions.Landing(edits, h, nil, nil), nil
	}
	r, err := versions.Rebase(bdoc, doc, edits, h)
	var ce *versions.ConflictError
	if errors.As(err, &ce) {
		ce.BaseVersion, ce.CurrentVersion = version, f.Version
		return nil, nil, ce
	}
	if err != nil {
		return nil, nil, err
	}
	return r, versions.Landing(edits, h, r, nil), nil
}

// otherReadings checks, when the base counts a referenced line only as
// moved (versions.Seen.Moved: the agent was shown it at another number,
// and a reply said where it went), the versions tried after the base
// (rest) that the references match too: a reading that lands a reference
// on another line than the base's (landing) refuses the batch
// (versions.Ambiguous), and a version no longer held, which could be such
// a reading, refuses it as an unknown base does. A base that showed every
// referenced line at that number is what the references name: the latest
// version they match, as they were shown.
func (s *Engine) otherReadings(base baseChoice, rest []baseChoice, landing []int, f *workspace.File, doc *hashline.Document, edits []hashline.Edit) error {
	h := s.opts.hasher
	renumbered := false
	for _, n := range versions.RefLines(edits, h) {
		renumbered = renumbered || (base.known && !base.seen.Lines.Has(n) && base.seen.Moved.Has(n))
	}
	if !renumbered {
		// Every referenced line was shown at that number in the base, the
		// latest version the references match: that is what they name.
		return nil
	}
	for _, c := range rest {
		bdoc, ok := s.versionDoc(c.version, f, doc)
		if !ok {
			if renumbered {
				return s.unknownBase(c, f, doc, edits)
			}
			continue
		}
		if !versions.Check(bdoc, edits, h, c.shown()) {
			continue
		}
		var other []int
		if c.version == f.Version {
			other = versions.Landing(edits, h, nil, nil)
		} else {
			r, err := versions.Rebase(bdoc, doc, edits, h)
			var ce *versions.ConflictError
			switch {
			case errors.As(err, &ce):
				other = versions.Landing(edits, h, nil, ce)
			case err != nil:
				continue
			default:
				other = versions.Landing(edits, h, r, nil)
			}
		}
		if b := versions.Ambiguous(doc, edits, h, landing, other, c.version); b != nil {
			return &StaleError{Batch: b, CurrentVersion: f.Version, NotShown: true}
		}
	}
	return nil
}

// baseChoices lists the versions an Edit's references are tried against,
// in order: baseVersion (explicit), then the versions the agent saw (hist,
// the most recent first). An explicit version the agent saw counts the
// lines it was shown. Of one the views do not hold (shown before a
// restart, or forgotten at their bounds) the server cannot know what the
// agent was shown: the agent's word that its tags come from that version
// is taken, for every line, and the rebase from it is as exact as ever.
func baseChoices(explicit string, hist []versions.Seen) []baseChoice {
	var out []baseChoice
	if explicit != "" {
		c := baseChoice{version: explicit, how: "gave as baseVersion"}
		for _, v := range hist {
			if v.Version == explicit {
				c.seen, c.known = v, true
			}
		}
		out = append(out, c)
	}
	for i, v := range hist {
		if v.Version == explicit {
			continue
		}
		how := "last saw"
		if i > 0 {
			how = "saw earlier"
		}
		if explicit != "" {
			how = "saw"
		}
		out = append(out, baseChoice{version: v.Version, seen: v, known: true, how: how})
	}
	return out
}

func movedProto(moved []versions.Move) []*hashlinev1.MovedRef {
	out := make([]*hashlinev1.MovedRef, len(moved))
	for i, m := range moved {
		out[i] = &hashlinev1.MovedRef{Ref: m.Ref, From: int32(m.From), To: int32(m.To)}
	}
	return out
}
