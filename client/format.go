package client

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"google.golang.org/grpc/codes"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// The Format functions render responses as the text a model reads: tagged
// lines "LINE:HASH|CONTENT" under a one-line header that names the file and
// its version. The hashline CLI prints exactly this, and the TypeScript
// package's formatters produce the same text.

// FormatTagged joins lines as "LINE:HASH|CONTENT", one per line.
func FormatTagged(lines []*hashlinev1.Line) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d:%s|%s", l.GetNumber(), l.GetHash(), l.GetContent())
	}
	return b.String()
}

// FormatRead renders a Read page: a header, then the tagged lines. A page
// that stops before the end says so and names the offset to continue from.
//
//	File: main.go (5 lines, version v2-e2a1…)
//	1:c9|package main
//	…
func FormatRead(r *hashlinev1.ReadResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "File: %s (%s, version %s)", r.GetPath(), plural(int(r.GetTotalLines()), "line"), r.GetVersion())
	if r.GetTruncated() && r.GetText() != "" {
		first, last := PageBounds(r)
		fmt.Fprintf(&b, " [showing lines %d-%d; %d more below, continue with offset %d]",
			first, last, r.GetTotalLines()-last, r.GetNextOffset())
	}
	b.WriteByte('\n')
	if t := r.GetText(); t != "" {
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.String()
}

// PageBounds returns the first and last line numbers of a non-empty read
// page: from its lines or, for a read with OmitLines, from its text, whose
// lines are consecutive and each start with "LINE:".
func PageBounds(r *hashlinev1.ReadResponse) (first, last int32) {
	if ls := r.GetLines(); len(ls) > 0 {
		return ls[0].GetNumber(), ls[len(ls)-1].GetNumber()
	}
	text := r.GetText()
	n, _, _ := strings.Cut(text, ":")
	f, _ := strconv.ParseInt(n, 10, 32)
	return int32(f), int32(f) + int32(strings.Count(text, "\n"))
}

// FormatEdit renders an applied (or dry-run) edit: a header with the new
// version and how the other lines' numbers changed (FormatShifts), the
// rebase report, warnings, then the tagged diff: the changes with the
// fresh LINE:HASH of every line shown, the refs to use next. With diff the
// unified diff follows. A response without a tagged diff (from a server
// older than the field) shows its windows of fresh lines instead.
//
//	Updated main.go (4 lines, version v2-…). Lines after 2 moved down 1.
//	 2:16|	println("hi")
//	+3:d4|	println("hello")
//	 4:18|}
func FormatEdit(r *hashlinev1.EditResponse, diff bool) string {
	var b strings.Builder
	verb := "Updated"
	if r.GetDryRun() {
		verb = "Dry run, nothing written:"
	}
	fmt.Fprintf(&b, "%s %s (%s, version %s).", verb, r.GetPath(), plural(int(r.GetTotalLines()), "line"), r.GetVersion())
	if r.GetTaggedDiff() != "" {
		b.WriteString(" " + FormatShifts(r))
	}
	b.WriteByte('\n')
	if from := r.GetRebasedFrom(); from != "" {
		fmt.Fprintf(&b, "Rebased from version %s", from)
		if len(r.GetMoved()) > 0 {
			moves := make([]string, len(r.GetMoved()))
			for i, m := range r.GetMoved() {
				moves[i] = fmt.Sprintf("%s -> line %d", m.GetRef(), m.GetTo())
			}
			fmt.Fprintf(&b, "; moved: %s", strings.Join(moves, ", "))
		}
		b.WriteByte('\n')
	}
	for _, w := range r.GetWarnings() {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	switch {
	case len(r.GetLines()) > 0:
		b.WriteString(FormatTagged(r.GetLines()))
		b.WriteByte('\n')
	case r.GetTaggedDiff() != "":
		b.WriteString(r.GetTaggedDiff())
		b.WriteByte('\n')
	default:
		for i, w := range r.GetWindows() {
			if i > 0 {
				b.WriteString("...\n")
			}
			if t := w.GetText(); t != "" {
				b.WriteString(t)
				b.WriteByte('\n')
			}
		}
	}
	if diff && r.GetDiff() != "" {
		b.WriteString(r.GetDiff())
		if !strings.HasSuffix(r.GetDiff(), "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// FormatShifts says in a sentence how an edit moved the lines it did not
// touch (EditResponse.shifts), in the numbers of the file before the edit:
//
//	Line numbers unchanged.
//	Lines after 12 moved down 2.
//	Lines 13-39 moved down 2; lines after 40 kept their numbers.
//
// After a rebase the caller's refs come from an older version than the one
// the shifts start from (the rebase report says so), and the sentence ends
// "by this edit."
func FormatShifts(r *hashlinev1.EditResponse) string {
	s := formatShifts(r.GetShifts(), r.GetTotalLines())
	if r.GetRebasedFrom() != "" {
		s = strings.TrimSuffix(s, ".") + " by this edit."
	}
	return s
}

// formatShifts is FormatShifts for a file of total lines after the edit.
func formatShifts(shifts []*hashlinev1.LineShift, total int32) string {
	if len(shifts) == 0 {
		return "Line numbers unchanged."
	}
	phrases := make([]string, len(shifts))
	for i, s := range shifts {
		from, to, by := s.GetFrom(), s.GetTo(), s.GetBy()
		// The last run of the file is said as "after": the lines it holds
		// are every line there is after the changes.
		subject, one := fmt.Sprintf("lines %d-%d", from, to), false
		switch {
		case to+by == total && from <= 1:
			subject = "all lines"
		case to+by == total:
			subject = fmt.Sprintf("lines after %d", from-1)
		case from == to:
			subject, one = fmt.Sprintf("line %d", from), true
		}
		switch {
		case by > 0:
			phrases[i] = fmt.Sprintf("%s moved down %d", subject, by)
		case by < 0:
			phrases[i] = fmt.Sprintf("%s moved up %d", subject, -by)
		case one:
			phrases[i] = subject + " kept its number"
		default:
			phrases[i] = subject + " kept their numbers"
		}
	}
	out := strings.Join(phrases, "; ")
	return strings.ToUpper(out[:1]) + out[1:] + "."
}

// FormatWrite renders a Write response in one line.
func FormatWrite(r *hashlinev1.WriteResponse) string {
	verb := "Wrote"
	if r.GetCreated() {
		verb = "Created"
	}
	return fmt.Sprintf("%s %s (%s, version %s)\n", verb, r.GetPath(), plural(int(r.GetTotalLines()), "line"), r.GetVersion())
}

// FormatGrepFile renders one file of a Grep stream like the published
// hashline grep format: ">>" before a matching line, two spaces before a
// context line, "--" between runs that are not adjacent, under a header
// with the file's path and version. The tags are valid edit references
// (a leading ">>" is accepted).
//
//	File: main.go (version v2-4cd3…)
//	>>4:d4|	println("hello")
//	  5:18|}
func FormatGrepFile(f *hashlinev1.GrepFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "File: %s (version %s)\n", f.GetPath(), f.GetVersion())
	var prev int32
	for i, l := range f.GetLines() {
		if i > 0 && l.GetNumber() != prev+1 {
			b.WriteString("--\n")
		}
		prev = l.GetNumber()
		if l.GetMatch() {
			b.WriteString(">>")
		} else {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%d:%s|%s\n", l.GetNumber(), l.GetHash(), l.GetContent())
	}
	return b.String()
}

// FormatGrepSummary renders the end of a Grep stream in one line, saying
// when the search stopped at the match limit.
func FormatGrepSummary(s *hashlinev1.GrepSummary) string {
	if s.GetMatches() == 0 {
		return fmt.Sprintf("No matches found (%s searched).\n", plural(int(s.GetFilesScanned()), "file"))
	}
	line := fmt.Sprintf("%s in %s (%s searched)", plural(int(s.GetMatches()), "match"), plural(int(s.GetFilesMatched()), "file"), plural(int(s.GetFilesScanned()), "file"))
	if s.GetTruncated() {
		line += "; stopped at the match limit: there may be more, narrow the pattern or path, or raise the limit"
	}
	return line + ".\n"
}

// FormatEntry renders one List entry in one line: its path, with "/"
// after a directory and "@" after a symbolic link, then with size its
// size in bytes (files and links), and with version its version (files
// that have one).
//
//	src/
//	src/main.go 120 v2-4cd3…
//	src/link@
func FormatEntry(e *hashlinev1.Entry, size, version bool) string {
	var b strings.Builder
	b.WriteString(e.GetPath())
	switch e.GetType() {
	case hashlinev1.EntryType_ENTRY_TYPE_DIR:
		b.WriteByte('/')
	case hashlinev1.EntryType_ENTRY_TYPE_SYMLINK:
		b.WriteByte('@')
	}
	if size && e.GetType() != hashlinev1.EntryType_ENTRY_TYPE_DIR {
		fmt.Fprintf(&b, " %d", e.GetSize())
	}
	if version && e.GetVersion() != "" {
		b.WriteString(" " + e.GetVersion())
	}
	b.WriteByte('\n')
	return b.String()
}

// FormatListEnd renders the end of a List page: nothing when it was the
// last, otherwise one line saying how to ask for the next.
func FormatListEnd(r *hashlinev1.ListResponse) string {
	if !r.GetTruncated() {
		return ""
	}
	n := fmt.Sprintf("%d entries", len(r.GetEntries()))
	if len(r.GetEntries()) == 1 {
		n = "1 entry"
	}
	return fmt.Sprintf("[%s shown; more follow: continue with page token %s]\n", n, r.GetNextPageToken())
}

// FormatError renders an error for a model: the server's message (for a
// stale reference, the view of the current lines with ">>>" on the changed
// ones), then for a stale reference the version the fresh tags come from.
func FormatError(err error) string {
	var stale StaleRefError
	if errors.As(err, &stale) {
		msg := strings.TrimSuffix(stale.Err.Message, "\n")
		if stale.CurrentVersion != "" {
			msg += "\ncurrent version " + stale.CurrentVersion
		}
		return msg + "\n"
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Reason != "" {
			return fmt.Sprintf("%s: %s\n", e.Reason, e.Message)
		}
		return fmt.Sprintf("%s: %s\n", codeName(e.Code), e.Message)
	}
	return err.Error() + "\n"
}

// codeName spells a gRPC code as the protocol does: "DEADLINE_EXCEEDED".
func codeName(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && 'A' <= r && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "ch") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
