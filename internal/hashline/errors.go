package hashline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Reason classifies a Problem. Each value is the name of a
// hashline.v1.ErrorReason (proto/hashline/v1/errors.proto, the API's one
// list of reasons) without its ERROR_REASON_ prefix, so a reason reads the
// same here, in golden files and on the wire. This package knows nothing
// of the API: the server maps a Reason onto the enum in one place, and a
// server test fails if a constant here is not one of the enum's names.
type Reason string

// Reasons an edit batch is refused.
const (
	// ReasonStaleRef: the referenced line's hash no longer matches; the model
	// must re-read (Problem.Fresh has the current lines).
	ReasonStaleRef Reason = "STALE_REF"
	// ReasonInvalidRef: the reference is malformed, has line 0, or has a hash
	// of the wrong length.
	ReasonInvalidRef Reason = "INVALID_REF"
	// ReasonLineOutOfRange: the line is past the end of the file, or a range
	// ends before it starts.
	ReasonLineOutOfRange Reason = "LINE_OUT_OF_RANGE"
	// ReasonOverlappingEdits: two edits of the batch touch the same line or
	// insertion point.
	ReasonOverlappingEdits Reason = "OVERLAPPING_EDITS"
	// ReasonEmptyEdits: the batch has no edits.
	ReasonEmptyEdits Reason = "EMPTY_EDITS"
	// ReasonNoChange: the batch would leave the file byte-identical.
	ReasonNoChange Reason = "NO_CHANGE"
	// ReasonTextNotFound: replaceText's oldText does not occur.
	ReasonTextNotFound Reason = "TEXT_NOT_FOUND"
	// ReasonAmbiguousText: replaceText's oldText occurs more than once and
	// all is not set.
	ReasonAmbiguousText Reason = "AMBIGUOUS_TEXT"
	// ReasonInvalidEdit: the edit itself is malformed (unknown op, empty
	// oldText, an insert without text).
	ReasonInvalidEdit Reason = "INVALID_EDIT"
)

// Problem is one thing wrong with one edit of a batch.
type Problem struct {
	// EditIndex is the index of the edit in the batch, or -1 for a problem
	// of the batch as a whole (EMPTY_EDITS).
	EditIndex int
	// Field names the offending part of the edit: "start", "end",
	// "anchor", "text", "oldText", "op" or "edits".
	Field string
	// Reason classifies the problem.
	Reason Reason
	// Message is a complete sentence, starting with the edit and field,
	// that tells a model what is wrong and what to do.
	Message string
	// Ref is the reference as the client sent it, if the problem is about one.
	Ref string
	// Line is the referenced line number, if known.
	Line int
	// ExpectedHash is the hash the reference carried (stale refs).
	ExpectedHash string
	// ActualHash is the current hash of Line (stale refs).
	ActualHash string
	// CurrentLine is the current line at Line, tagged ("12:3f|content"), or
	// "" if the file is now shorter.
	CurrentLine string
	// Fresh holds the current lines Around, with StaleContext lines (or as
	// many as SetContext says) on each side, so a model can retry without
	// another read; for NO_CHANGE, the lines the edit targeted.
	Fresh []TaggedLine
	// Around is the run of current lines, 1-based and inclusive, that Fresh
	// shows with context: the referenced line, or a range's start and its
	// lines. Zero means Line alone.
	Around [2]int
	// TextAt lists, for NO_CHANGE, where the text the edit would write
	// already stands: its target, then other places nearest first.
	TextAt []LineSpan
	// ShowsTags: Message shows tags of the current file (the lines an
	// ambiguous or missing oldText could mean), which a model may use next.
	ShowsTags bool
	// Tags are the numbers of the current file's lines whose tags the
	// problem shows besides Fresh: CurrentLine's, and, when ShowsTags,
	// those Message names. With Fresh they are what the refusal showed a
	// model of the file, which its next references may come from; the
	// message is for the model to read, never to be parsed back.
	Tags []int
	// AsRead marks a stale reference whose line is as the agent last read
	// it (the caller knows; the core does not): the reference's hash is
	// wrong, the file did not change there, and the view says so instead
	// of "changed since last read".
	AsRead bool
}

// StaleContext is how many lines a stale reference's view shows on each
// side of the line by default: three, as many as an edit's diff shows
// around a change, so that a model has the same view of a block either way
// and can retry on the lines near the one it meant without reading again.
const StaleContext = 3

// BatchError reports every problem of a refused batch. Nothing of a batch
// is applied when it has any problem.
type BatchError struct {
	Problems []Problem
}

// Error renders the problems for a model. Stale references become a view of
// the current lines with the changed ones marked ">>> "; every other problem
// is one line of its own.
func (e *BatchError) Error() string {
	var b strings.Builder
	var stale []Problem
	for _, p := range e.Problems {
		if p.Reason == ReasonStaleRef {
			stale = append(stale, p)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Message)
		if p.Reason == ReasonNoChange && len(p.Fresh) > 0 {
			// The lines a no-op targeted, to edit from.
			var lines strings.Builder
			WriteMarkedLines(&lines, taggedByNumber(p.Fresh), nil)
			b.WriteByte('\n')
			b.WriteString(strings.TrimSuffix(lines.String(), "\n"))
		}
	}
	if len(stale) > 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		writeStaleView(&b, stale)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// SetContext shows n lines (n < 0: none) on each side of every stale
// reference's lines in Fresh, taken from d, the document they were checked
// against.
func (e *BatchError) SetContext(d *Document, h Hasher, n int) {
	for i := range e.Problems {
		p := &e.Problems[i]
		if p.Reason != ReasonStaleRef {
			continue
		}
		if p.Around == [2]int{} {
			p.Around = [2]int{p.Line, p.Line}
		}
		p.Fresh = FreshAround(d, h, p.Around, n)
	}
}

// FreshAround returns the lines around[0]..around[1] of d (1-based,
// inclusive, clamped) with n more on each side (n < 0: none). A run with
// around[0] = around[1]+1 is the gap between two lines, where lines were
// deleted: it shows n lines on each side, and at least one to say where.
func FreshAround(d *Document, h Hasher, around [2]int, n int) []TaggedLine {
	n = max(n, 0)
	if around[0] > around[1] {
		n = max(n, 1)
	}
	return d.Tagged(h, around[0]-n, around[1]+n)
}

// writeStaleView writes the header and the merged fresh windows of stale
// problems: one window per stale line, joined where they touch, "..."
// between gaps.
func writeStaleView(b *strings.Builder, stale []Problem) {
	lines, refs := staleLines(stale)
	wrong := map[int]Problem{}
	for _, p := range stale {
		if p.AsRead {
			wrong[p.Line] = p
		}
	}
	if len(wrong) == 0 {
		WriteStaleView(b, len(refs), lines, refs)
		return
	}
	// A line counts as changed when any reference to it found it changed.
	changed := 0
	for n := range refs {
		for _, p := range stale {
			if p.Line == n && !p.AsRead {
				changed++
				delete(wrong, n)
				break
			}
		}
	}
	numbers := make([]int, 0, len(wrong))
	for n := range wrong {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	said := make([]string, len(numbers))
	for i, n := range numbers {
		p := wrong[n]
		said[i] = fmt.Sprintf("line %d is %s, not %s", n, Ref{Line: n, Hash: p.ActualHash}, Ref{Line: n, Hash: p.ExpectedHash})
	}
	list := strings.Join(said, "; ")
	if changed == 0 {
		if len(numbers) == 1 {
			fmt.Fprintf(b, "%s: the reference does not match the line as you read it (a wrong hash; the file did not change there); use the refs below (>>> marks the referenced line)\n", list)
		} else {
			fmt.Fprintf(b, "%s: the references do not match the lines as you read them (wrong hashes; the file did not change there); use the refs below (>>> marks the referenced lines)\n", list)
		}
	} else {
		fmt.Fprintf(b, "%d line(s) changed since last read, and %s (a wrong hash: the file did not change there); use the updated refs below (>>> marks changed and referenced lines)\n", changed, list)
	}
	WriteMarkedLines(b, lines, refs)
}

// staleLines gathers the fresh lines of stale problems by number, and the
// numbers of their referenced lines.
func staleLines(stale []Problem) (lines map[int]TaggedLine, refs map[int]bool) {
	refs = map[int]bool{}
	lines = map[int]TaggedLine{}
	for _, p := range stale {
		refs[p.Line] = true
		for _, t := range p.Fresh {
			lines[t.Number] = t
		}
	}
	return lines, refs
}

// StaleLines is the body of the batch's stale view without its header: the
// fresh lines of every stale reference, merged, the referenced lines
// marked ">>> ". A caller that explains the refusal in its own words
// follows that with these lines.
func (e *BatchError) StaleLines() string {
	var b strings.Builder
	lines, refs := staleLines(e.Stale())
	WriteMarkedLines(&b, lines, refs)
	return strings.TrimSuffix(b.String(), "\n")
}

// taggedByNumber indexes lines by their numbers.
func taggedByNumber(lines []TaggedLine) map[int]TaggedLine {
	m := make(map[int]TaggedLine, len(lines))
	for _, t := range lines {
		m[t.Number] = t
	}
	return m
}

// WriteStaleView writes the text view of stale references that a model
// acts on: the header counting n changed lines, then lines in ascending
// order, the marked ones prefixed ">>> " and the others four spaces, with
// "..." between lines that are not adjacent.
func WriteStaleView(b *strings.Builder, n int, lines map[int]TaggedLine, marked map[int]bool) {
	b.WriteString(strconv.Itoa(n))
	b.WriteString(" line(s) changed since last read; use the updated refs below (>>> marks changed lines)\n")
	WriteMarkedLines(b, lines, marked)
}

// WriteMarkedLines writes lines in ascending order, one a line, the marked
// ones prefixed ">>> " and the others four spaces, with "..." between
// lines that are not adjacent: the body of a stale view, and of a revert's
// conflict.
func WriteMarkedLines(b *strings.Builder, lines map[int]TaggedLine, marked map[int]bool) {
	numbers := make([]int, 0, len(lines))
	for n := range lines {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	for i, n := range numbers {
		if i > 0 && n != numbers[i-1]+1 {
			b.WriteString("...\n")
		}
		if marked[n] {
			b.WriteString(">>> ")
		} else {
			b.WriteString("    ")
		}
		b.WriteString(lines[n].String())
		b.WriteByte('\n')
	}
}

// Reason returns the reason that best describes the batch: a malformed
// request (invalid ref or edit, out of range, overlapping, empty, ambiguous)
// is reported before TEXT_NOT_FOUND, which is reported before STALE_REF,
// because re-reading cannot fix a malformed request. NO_CHANGE only occurs
// alone.
func (e *BatchError) Reason() Reason {
	best, rank := Reason(""), 0
	for _, p := range e.Problems {
		if r := reasonRank(p.Reason); r > rank {
			best, rank = p.Reason, r
		}
	}
	return best
}

func reasonRank(r Reason) int {
	switch r {
	case ReasonNoChange:
		return 1
	case ReasonStaleRef:
		return 2
	case ReasonTextNotFound:
		return 3
	case "":
		return 0
	}
	return 4
}

// ShowsTags reports whether the error shows the model tags of the current
// file: stale references' fresh lines, or lines named in a message
// (Problem.ShowsTags). A model's next references may then come from this
// version, not from the one it last read.
func (e *BatchError) ShowsTags() bool {
	return slices.ContainsFunc(e.Problems, func(p Problem) bool { return p.Reason == ReasonStaleRef || p.ShowsTags })
}

// Stale returns the stale-reference problems, in edit order.
func (e *BatchError) Stale() []Problem {
	var out []Problem
	for _, p := range e.Problems {
		if p.Reason == ReasonStaleRef {
			out = append(out, p)
		}
	}
	return out
}
