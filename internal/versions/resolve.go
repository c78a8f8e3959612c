package versions

import (
	"errors"
	"fmt"

	"github.com/hashline/hashline/internal/hashline"
)

// Batch is an Edit batch to resolve: its edits, and what Resolve reads their
// line references against. Every field is a plain value the caller has at
// hand: nothing here reads a file or a request.
type Batch struct {
	Edits  []hashline.Edit
	Hasher hashline.Hasher
	// BaseVersion is the version the agent says its references come from,
	// "" for none.
	BaseVersion string
	// Views are what the agent was shown of the file, the most recently
	// shown version first (Views.History); none when it has no view.
	Views []Seen
	// Current is the file's version now, Doc its text.
	Current string
	Doc     *hashline.Document
	// Snapshot returns the text of an older version when it is held (in
	// memory or on disk: Cache.Get).
	Snapshot func(version string) (*hashline.Document, bool)
}

// Resolved is how a batch's line references were resolved.
type Resolved struct {
	// Edits are the batch to plan against the current file: rebased onto
	// it from From, or as they came.
	Edits []hashline.Edit
	// From is the base version the references were rebased from; "" when
	// they were read against the current file.
	From string
	// Moved are the references the rebase moved to another line.
	Moved []Move
	// Warnings say when the base was not the first version tried, or when
	// a baseVersion the references do not match was passed over.
	Warnings []string
}

// Refusal is a batch Resolve refuses before it is planned: its references
// name no line the agent was shown as the file is now, or two (NotShown:
// Unshown, Ambiguous), or may come from a version the server no longer
// holds (UnknownBase). Batch has the current lines to retry with.
type Refusal struct {
	Batch *hashline.BatchError
	// UnknownBase is the version no longer held; How says how the agent
	// came by it ("gave as baseVersion", "last saw", ...), for messages.
	UnknownBase, How string
	// NotShown: the references do not each name one line the agent was
	// shown; their StaleRef reason is ReasonNotShown.
	NotShown bool
}

func (r *Refusal) Error() string { return r.Batch.Error() }
func (r *Refusal) Unwrap() error { return r.Batch }

// Resolve resolves the batch's line references (see the package
// documentation for how a rebase maps them). The versions tried, in order:
// the batch's BaseVersion, then the versions the agent saw of the file
// (Views: the last few, the most recently shown first). The first against
// which every reference names a line by number and hash, and a line the
// agent was shown in that version (a range's start and end, an insertion's
// anchor), is the base: the batch is planned as it is when that is the
// current file, and rebased from it onto the current file when its
// snapshot is held; a *ConflictError (with both versions named) is
// returned when other changes touched the referenced lines. A base other
// than the first tried is named in a warning.
//
// A reference the base counts only by where an edit's reply said its line
// moved (Seen.Moved) may name another line by its old number in a version
// read before, where a short hash matches by chance (or because the two
// lines differ only in spaces). Then the versions tried after the base
// that the references match too are read the same way, and where two
// readings land on different lines the batch is refused with both places
// shown (Ambiguous); a later version no longer held could be such a
// reading, and the batch is refused as for an unknown base.
//
// When no version verifies:
//   - If a version tried before is an older one that is not held (evicted,
//     a restart without the state store, a change made behind the server's
//     back that nobody read, a version it never saw), no referenced line
//     can be proven unchanged: a *Refusal with the current lines
//     (UnknownBase).
//   - If the agent was shown every referenced line of the current file,
//     the batch is returned as it is: the planner checks the references
//     against it by line and hash (and reports the stale ones with fresh
//     tags).
//   - Otherwise the references that do not name a line of the current file
//     the agent was shown are refused as stale (a NotShown *Refusal,
//     Unshown): a line number the agent never saw names nothing it read,
//     and a 2-hex hash that matches there is a collision or a number from
//     before lines moved.
//
// A BaseVersion the views do not hold is taken at its word (baseChoices).
// An agent with no view of the file at all (read-before-edit off, or a
// batch of append, prepend and replaceText only) has only its
// BaseVersion, if any, to go by; failing that, the batch is checked
// against the current file by line and hash, as before views remembered
// lines. A batch without line references (append, prepend, replaceText)
// reads no line of any version and is resolved against the current file;
// one with a malformed reference goes to the planner, which reports it.
func Resolve(b Batch) (*Resolved, error) {
	out := &Resolved{Edits: b.Edits}
	if !HasLineRefs(b.Edits) || !WellFormed(b.Edits, b.Hasher) {
		return out, nil
	}
	choices := baseChoices(b.BaseVersion, b.Views)
	if len(choices) == 0 {
		return out, nil // no view and no baseVersion: the planner checks by line and hash
	}
	first := choices[0]
	for i, c := range choices {
		bdoc, ok := b.versionDoc(c.version)
		if !ok {
			// The references may come from this version, and nothing
			// proves what they named in it: a version tried after it
			// that they happen to match is no proof either.
			if err := b.unknownBase(c); err != nil {
				return nil, err
			}
			return out, nil
		}
		if !Check(bdoc, b.Edits, b.Hasher, c.shown()) {
			continue
		}
		r, landing, err := b.readAgainst(c.version, bdoc)
		if err != nil {
			return nil, err
		}
		if err := b.otherReadings(c, choices[i+1:], landing); err != nil {
			return nil, err
		}
		if i > 0 {
			out.Warnings = append(out.Warnings, fmt.Sprintf(
				"the references do not all match lines you were shown of version %s, the one you %s; they all match lines you were shown of version %s, which you %s, so they were read against that version",
				first.version, first.how, c.version, c.how))
		}
		if r != nil {
			out.Edits, out.From, out.Moved = r.Edits, c.version, r.Moved
		}
		return out, nil
	}
	if len(b.Views) == 0 {
		// Only a baseVersion, held, that the references do not match.
		out.Warnings = append(out.Warnings, fmt.Sprintf(
			"the references do not all match version %s, the one you %s; they were checked against the current file %s by line and hash instead. Pass baseVersion with the version your tags come from to have them rebased exactly",
			first.version, first.how, b.Current))
		return out, nil
	}
	var cur Seen
	for _, v := range b.Views {
		if v.Version == b.Current {
			cur = v
		}
	}
	for _, n := range RefLines(b.Edits, b.Hasher) {
		// A number past the end names no line: the planner says so
		// (LINE_OUT_OF_RANGE) with the file's length.
		if n <= b.Doc.Len() && !cur.Has(n) {
			return nil, &Refusal{Batch: Unshown(b.Doc, b.Edits, b.Hasher, cur.Has), NotShown: true}
		}
	}
	// Every referenced line was shown as the file is now: the planner
	// checks their hashes, and reports the changed ones with fresh tags.
	return out, nil
}

// baseChoice is a version an Edit's references may have been made
// against: the batch's BaseVersion, or one the agent saw.
type baseChoice struct {
	version string
	// seen has the lines of version the agent was shown; known is false
	// when that is not known (a BaseVersion the views do not hold), and
	// then any line counts.
	seen  Seen
	known bool
	how   string // how the agent came by it, for messages
}

func (c baseChoice) shown() func(int) bool {
	if !c.known {
		return nil
	}
	return c.seen.Has
}

// baseChoices lists the versions an Edit's references are tried against,
// in order: explicit (the batch's BaseVersion), then the versions the agent
// saw (views, the most recent first). An explicit version the agent saw
// counts the lines it was shown. Of one the views do not hold (shown before
// a restart, or forgotten at their bounds) nobody can know what the agent
// was shown: the agent's word that its tags come from that version is
// taken, for every line, and the rebase from it is as exact as ever.
func baseChoices(explicit string, views []Seen) []baseChoice {
	var out []baseChoice
	if explicit != "" {
		c := baseChoice{version: explicit, how: "gave as baseVersion"}
		for _, v := range views {
			if v.Version == explicit {
				c.seen, c.known = v, true
			}
		}
		out = append(out, c)
	}
	for i, v := range views {
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

// versionDoc returns the text of version: the current file's when it is
// that one, else the snapshot held of it.
func (b Batch) versionDoc(version string) (*hashline.Document, bool) {
	if version == b.Current {
		return b.Doc, true
	}
	if b.Snapshot == nil {
		return nil, false
	}
	return b.Snapshot(version)
}

// unknownBase is the refusal of a batch that may have been made against
// the version of c, which is not held (UnknownBase); nil for a batch
// without line references.
func (b Batch) unknownBase(c baseChoice) error {
	if be := UnknownBase(b.Doc, b.Edits, b.Hasher); be != nil {
		return &Refusal{Batch: be, UnknownBase: c.version, How: c.how}
	}
	return nil
}

// readAgainst reads the batch against version (text bdoc): as it is when
// that is the current file, else rebased onto it (r). It returns where
// each reference lands in the current file (Landing), and the conflict
// when the rebase meets other changes.
func (b Batch) readAgainst(version string, bdoc *hashline.Document) (*Rebased, []int, error) {
	if version == b.Current {
		return nil, Landing(b.Edits, b.Hasher, nil, nil), nil
	}
	r, err := Rebase(bdoc, b.Doc, b.Edits, b.Hasher)
	var ce *ConflictError
	if errors.As(err, &ce) {
		ce.BaseVersion, ce.CurrentVersion = version, b.Current
		return nil, nil, ce
	}
	if err != nil {
		return nil, nil, err
	}
	return r, Landing(b.Edits, b.Hasher, r, nil), nil
}

// otherReadings checks, when the base counts a referenced line only as
// moved (Seen.Moved: the agent was shown it at another number, and a reply
// said where it went), the versions tried after the base (rest) that the
// references match too: a reading that lands a reference on another line
// than the base's (landing) refuses the batch (Ambiguous), and a version
// no longer held, which could be such a reading, refuses it as an unknown
// base does. A base that showed every referenced line at that number is
// what the references name: the latest version they match, as they were
// shown.
func (b Batch) otherReadings(base baseChoice, rest []baseChoice, landing []int) error {
	h := b.Hasher
	renumbered := false
	for _, n := range RefLines(b.Edits, h) {
		renumbered = renumbered || (base.known && !base.seen.Lines.Has(n) && base.seen.Moved.Has(n))
	}
	if !renumbered {
		// Every referenced line was shown at that number in the base, the
		// latest version the references match: that is what they name.
		return nil
	}
	for _, c := range rest {
		bdoc, ok := b.versionDoc(c.version)
		if !ok {
			return b.unknownBase(c)
		}
		if !Check(bdoc, b.Edits, h, c.shown()) {
			continue
		}
		var other []int
		if c.version == b.Current {
			other = Landing(b.Edits, h, nil, nil)
		} else {
			r, err := Rebase(bdoc, b.Doc, b.Edits, h)
			var ce *ConflictError
			switch {
			case errors.As(err, &ce):
				other = Landing(b.Edits, h, nil, ce)
			case err != nil:
				continue
			default:
				other = Landing(b.Edits, h, r, nil)
			}
		}
		if be := Ambiguous(b.Doc, b.Edits, h, landing, other, c.version); be != nil {
			return &Refusal{Batch: be, NotShown: true}
		}
	}
	return nil
}
