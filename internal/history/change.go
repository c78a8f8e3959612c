package history

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// External is the agent of a change the server found made outside it: a
// file whose bytes differ from the version the server last wrote or read.
const External = "(external)"

// Kind is what kind of request made a change.
type Kind uint8

// The kinds of change. A change set (Apply) is one entry with all its
// files, whatever each file's operation.
const (
	KindEdit Kind = iota + 1
	KindWrite
	KindDelete
	KindMove
	KindSet
	KindRevert
	KindExternal
	kindEnd
)

var kindNames = [...]string{KindEdit: "edit", KindWrite: "write", KindDelete: "delete",
	KindMove: "move", KindSet: "set", KindRevert: "revert", KindExternal: "external"}

func (k Kind) String() string {
	if k == 0 || k >= kindEnd {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// ID names a change. The zero ID names none.
type ID struct {
	seq uint64
	log uint32
}

// IsZero reports whether id names no change.
func (id ID) IsZero() bool { return id.seq == 0 }

// Seq returns the change's sequence number in its log (from 1).
func (id ID) Seq() uint64 { return id.seq }

// String returns the id as ParseID reads it: "c", the sequence number,
// "-" and the log's number in eight hex digits; "" for the zero ID.
func (id ID) String() string {
	if id.IsZero() {
		return ""
	}
	return fmt.Sprintf("c%d-%08x", id.seq, id.log)
}

// ParseID reads an id written by String. It checks the form only: whether
// the log holds the change is for [Log.Get] to say.
func ParseID(s string) (ID, error) {
	num, logHex, ok := strings.Cut(strings.TrimPrefix(s, "c"), "-")
	if !ok || !strings.HasPrefix(s, "c") || num == "" || num[0] == '0' || len(logHex) != 8 || len(num) > 20 {
		return ID{}, fmt.Errorf("%w: %q is not a change id (c<number>-<8 hex digits>)", ErrMalformed, s)
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil || strings.ToLower(logHex) != logHex {
		return ID{}, fmt.Errorf("%w: %q is not a change id (c<number>-<8 hex digits>)", ErrMalformed, s)
	}
	lg, err := strconv.ParseUint(logHex, 16, 32)
	if err != nil || lg == 0 {
		return ID{}, fmt.Errorf("%w: %q is not a change id (c<number>-<8 hex digits>)", ErrMalformed, s)
	}
	return ID{seq: seq, log: uint32(lg)}, nil
}

// The errors of Get, each wrapped with the id.
var (
	// ErrMalformed: the string is not a change id.
	ErrMalformed = errors.New("malformed change id")
	// ErrUnknown: no change of this log ever had the id (a later number
	// than any given, or the id of another log, such as one since deleted).
	ErrUnknown = errors.New("unknown change id")
	// ErrExpired: the log had the change and has dropped it, past its
	// bound in bytes or in age.
	ErrExpired = errors.New("change no longer in the history")
)

// Hunk is one change to a file's lines: the old version's lines A0..A1
// (0-based, half-open), Removed, became the new version's lines B0..B1,
// Added. The lines are without their endings, as Read shows them. Removed
// and Added are nil when the change's lines were not asked for or not kept
// ([Change.LinesOmitted]); the numbers always are.
type Hunk struct {
	versions.Hunk
	Removed, Added []string
}

// Inverse returns the hunk that undoes h.
func (h Hunk) Inverse() Hunk {
	return Hunk{Hunk: versions.Hunk{A0: h.B0, A1: h.B1, B0: h.A0, B1: h.A1}, Removed: h.Added, Added: h.Removed}
}

// HunksOf returns the hunks that turn old into new (versions.Diff), with
// their lines. A nil document is an absent file: every line of the other
// is added or removed.
func HunksOf(old, new *hashline.Document) []Hunk {
	if old == nil {
		old = hashline.ParseText("")
	}
	if new == nil {
		new = hashline.ParseText("")
	}
	return HunksAt(old, new, versions.Diff(old, new))
}

// HunksAt returns the hunks d, line ranges that turn old into new (an
// edit's own, versions.EditHunks, with no diff to run), with their lines.
func HunksAt(old, new *hashline.Document, d []versions.Hunk) []Hunk {
	if len(d) == 0 {
		return nil
	}
	out := make([]Hunk, len(d))
	for i, x := range d {
		out[i] = Hunk{Hunk: x, Removed: linesOf(old, x.A0, x.A1), Added: linesOf(new, x.B0, x.B1)}
	}
	return out
}

func linesOf(d *hashline.Document, from, to int) []string {
	if from == to {
		return nil
	}
	out := make([]string, to-from)
	for i := range out {
		out[i] = d.Line(from + i + 1)
	}
	return out
}

// File is what a change did to one file.
type File struct {
	// Path is the file's path after the change (for a deletion, the path
	// deleted): slash-separated, relative to the workspace root, as the
	// engine keys files.
	Path string
	// From is the path before a move, "" when the file did not move.
	From string
	// Before and After are the file's versions before and after the
	// change; "" where there was no file (created, deleted).
	Before, After string
	// Hunks are the line changes, in order. A move without an edit has
	// none.
	Hunks []Hunk
	// Removed and Added count the lines the hunks removed and added;
	// Append computes them (from the merged hunk when HunksMerged).
	Removed, Added int
}

// Inverse returns the file change that undoes f: the move back, the
// versions swapped, every hunk inverted.
func (f File) Inverse() File {
	inv := File{Path: f.Path, Before: f.After, After: f.Before, Removed: f.Added, Added: f.Removed}
	if f.From != "" {
		inv.Path, inv.From = f.From, f.Path
	}
	if f.Hunks != nil {
		inv.Hunks = make([]Hunk, len(f.Hunks))
		for i, h := range f.Hunks {
			inv.Hunks[i] = h.Inverse()
		}
	}
	return inv
}

// Change is one entry of the log.
type Change struct {
	// ID and Time are given by Append.
	ID   ID
	Time time.Time
	Kind Kind
	// Agent made the change ([External] for one made outside the server).
	Agent string
	// RequestID is the request's request_id, "" when it had none.
	RequestID string
	// Reverts names the change a KindRevert change reverts.
	Reverts ID
	Files   []File
	// LinesOmitted says the record was too large for a segment with its
	// lines: the hunks keep their numbers, not their lines. HunksMerged
	// says it was too large even so, and each file's hunks were merged
	// into one spanning them all (the unchanged lines between counting as
	// rewritten by the change).
	LinesOmitted, HunksMerged bool
}

// Bounds on what one change may carry.
const (
	maxAgentBytes   = 256
	maxRequestBytes = 256
	maxVersionBytes = 128
	maxPathBytes    = 4096
)

// check validates a change given to Append, lines and all; log is the
// log's number and next the sequence number the change will have.
func (c *Change) check(log uint32, next uint64) error { return c.checkWith(log, next, true) }

// checkWith is check, asking for the hunks' lines when withLines, and sets
// the files' line counts.
func (c *Change) checkWith(log uint32, next uint64, withLines bool) error {
	if c.Kind == 0 || c.Kind >= kindEnd {
		return fmt.Errorf("history: unknown kind %d", c.Kind)
	}
	if c.Agent == "" || len(c.Agent) > maxAgentBytes {
		return fmt.Errorf("history: agent of %d bytes (want 1 to %d)", len(c.Agent), maxAgentBytes)
	}
	if len(c.RequestID) > maxRequestBytes {
		return fmt.Errorf("history: request id of %d bytes (at most %d)", len(c.RequestID), maxRequestBytes)
	}
	switch {
	case c.Kind == KindRevert && c.Reverts.IsZero():
		return errors.New("history: a revert names the change it reverts")
	case c.Kind != KindRevert && !c.Reverts.IsZero():
		return fmt.Errorf("history: a %s names no change to revert", c.Kind)
	case !c.Reverts.IsZero() && (c.Reverts.log != log || c.Reverts.seq >= next):
		return fmt.Errorf("history: %w: the reverted change %s", ErrUnknown, c.Reverts)
	}
	if len(c.Files) == 0 {
		return errors.New("history: a change of no file")
	}
	seen := make(map[string]bool, len(c.Files))
	for i := range c.Files {
		f := &c.Files[i]
		if !validPath(f.Path) || f.From != "" && (!validPath(f.From) || f.From == f.Path) {
			return fmt.Errorf("history: file %d: path %q from %q: want clean relative paths inside the workspace, different", i, f.Path, f.From)
		}
		if seen[f.Path] {
			return fmt.Errorf("history: %s appears twice in one change", f.Path)
		}
		seen[f.Path] = true
		if len(f.Before) > maxVersionBytes || len(f.After) > maxVersionBytes {
			return fmt.Errorf("history: %s: a version longer than %d bytes", f.Path, maxVersionBytes)
		}
		if err := checkHunks(f.Hunks, withLines); err != nil {
			return fmt.Errorf("history: %s: %w", f.Path, err)
		}
		f.Removed, f.Added = counts(f.Hunks)
	}
	return nil
}

// checkHunks checks that hunks are in order, apart, change something and
// agree with each other: each B0 is its A0 moved by the lines the hunks
// before it added and removed. withLines asks for every hunk's lines.
func checkHunks(hs []Hunk, withLines bool) error {
	prevA, prevB := 0, 0
	for i, h := range hs {
		switch {
		case h.A0 < prevA || h.A1 < h.A0 || h.B1 < h.B0:
			return fmt.Errorf("hunk %d (%d..%d -> %d..%d) is out of order", i, h.A0, h.A1, h.B0, h.B1)
		case h.A0 == h.A1 && h.B0 == h.B1:
			return fmt.Errorf("hunk %d changes nothing", i)
		case h.B0-h.A0 != prevB-prevA:
			return fmt.Errorf("hunk %d starts at new line %d, not %d", i, h.B0, h.A0+prevB-prevA)
		case withLines && (len(h.Removed) != h.A1-h.A0 || len(h.Added) != h.B1-h.B0):
			return fmt.Errorf("hunk %d has %d removed and %d added lines for %d and %d", i, len(h.Removed), len(h.Added), h.A1-h.A0, h.B1-h.B0)
		}
		prevA, prevB = h.A1, h.B1
	}
	return nil
}

func counts(hs []Hunk) (removed, added int) {
	for _, h := range hs {
		removed += h.A1 - h.A0
		added += h.B1 - h.B0
	}
	return removed, added
}

// validPath reports whether p is a clean, relative, slash-separated path
// below the root (not the root itself), as internal/state's intent log
// checks its paths.
func validPath(p string) bool {
	return p != "" && p != "." && len(p) <= maxPathBytes && !strings.ContainsRune(p, 0) &&
		path.Clean(p) == p && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../")
}
