// Package render makes the text models read from the service's answers:
// tagged lines, reads, edits and their repairs, writes, deletes, moves,
// change sets, grep results, listings, status, and the refusals a call
// can meet (stale views among them). The hashline CLI, the Go client's
// Format functions and hashline mcp's tools all render through it, so
// that one answer reads the same wherever a model meets it; the
// TypeScript client's format functions are checked against the same
// golden files (testdata/*.txtar). Messages about a face's own arguments
// (a flag, a JSON shape) stay with the code that parses them, and what to
// do about its set-up (its flags, the MCP client's configuration, a
// server that is not running) with the face, after the refusal rendered
// here.
package render

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// Face is the reader a rendering is for. The faces render the same facts
// in the same words; they differ only where this package says why.
type Face int

const (
	// CLI is the hashline CLI: lines a shell can pipe, each text ending in
	// a newline, every header naming the file's version (the API's
	// expected_version takes it), the next step named by the CLI's flags.
	CLI Face = iota
	// Client is the Go client's Format functions: CLI's text, except
	// that the next step is named by the API's fields, as a program of
	// its own calls the API rather than the CLI.
	Client
	// MCP is hashline mcp's tools. Their texts keep the shapes of the
	// published hashline MCP server's (prompts written for it work
	// unchanged), put tagged lines in Markdown code fences, and name no
	// version: no tool takes one, and every byte of a tool result is read
	// into the model's context. A tool result is one string, with no
	// final newline.
	MCP
)

// Options choose a rendering. The zero value renders for the CLI.
type Options struct {
	Face Face
	// Diff adds an edit's unified diff after its tagged diff (hashline
	// edit --diff). MCP shows the unified diff only from a server without
	// tagged diffs: the tagged diff shows the same change with refs.
	Diff bool
	// Plain renders a read's lines as LINE|CONTENT, without hashes
	// (read_file's plain).
	Plain bool
	// Context is MCP grep's: context lines were asked for, and runs of
	// lines are separated by "--", as the published server does. The CLI
	// separates runs that are not adjacent always.
	Context bool
	// Size and Versions add each listed entry's size and version
	// (hashline ls -l and --versions).
	Size, Versions bool
}

// Tagged joins lines as "LINE:HASH|CONTENT", one per line.
func Tagged(lines []*hashlinev1.Line) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d:%s|%s", l.GetNumber(), l.GetHash(), l.GetContent())
	}
	return b.String()
}

// plain is a read's lines as "LINE|CONTENT", one per line: from its
// structured lines or, for a read with OmitLines, from its text, each of
// whose lines is "LINE:HASH|CONTENT".
func plain(r *hashlinev1.ReadResponse) string {
	var b strings.Builder
	if len(r.GetLines()) == 0 {
		for l := range strings.Lines(r.GetText()) {
			n, rest, _ := strings.Cut(l, ":")
			_, content, _ := strings.Cut(rest, "|")
			b.WriteString(n)
			b.WriteByte('|')
			b.WriteString(content)
		}
		return b.String()
	}
	for i, l := range r.GetLines() {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strconv.Itoa(int(l.GetNumber())))
		b.WriteByte('|')
		b.WriteString(l.GetContent())
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

// Read renders a Read page: a header naming the file, then its tagged
// lines. A page that stops before the end says so and names the offset
// to continue from.
//
//	File: main.go (5 lines, version v2-e2a1…)
//	1:c9|package main
//
// For MCP the header is the published server's, a blank line follows it
// and the lines are fenced; an empty file says to append, as there is no
// line to refer to (the published server shows one empty line, "1:05|",
// to anchor on):
//
//	File: main.go (120 lines) [showing lines 1-50] (70 more lines below; continue with offset=51)
func Read(r *hashlinev1.ReadResponse, o Options) string {
	text := r.GetText()
	if o.Plain {
		text = plain(r)
	}
	var b strings.Builder
	if o.Face == MCP {
		total := int(r.GetTotalLines())
		if total == 0 {
			return fmt.Sprintf("File: %s (0 lines; use append)", r.GetPath())
		}
		fmt.Fprintf(&b, "File: %s (%s)", r.GetPath(), plural(total, "line"))
		f, l := PageBounds(r)
		first, last := int(f), int(l)
		if first > 1 || last < total {
			fmt.Fprintf(&b, " [showing lines %d-%d]", first, last)
		}
		if last < total {
			fmt.Fprintf(&b, " (%d more lines below; continue with offset=%d)", total-last, r.GetNextOffset())
		}
		b.WriteString("\n\n")
		b.WriteString(Fence("", text))
		return b.String()
	}
	fmt.Fprintf(&b, "File: %s (%s, version %s)", r.GetPath(), plural(int(r.GetTotalLines()), "line"), r.GetVersion())
	if r.GetTruncated() && r.GetText() != "" {
		first, last := PageBounds(r)
		fmt.Fprintf(&b, " [showing lines %d-%d; %d more below, continue with offset %d]",
			first, last, r.GetTotalLines()-last, r.GetNextOffset())
	}
	b.WriteByte('\n')
	if text != "" {
		b.WriteString(text)
		b.WriteByte('\n')
	}
	return b.String()
}

// Edit renders an applied (or dry-run) edit: a header with how the other
// lines' numbers changed (Shifts), the rebase report, warnings, then the
// tagged diff: the changes with the fresh LINE:HASH of every line shown,
// the refs to use next. With Diff the unified diff follows. A response
// without a tagged diff (from a server older than the field) shows its
// windows of fresh lines instead, and claims nothing of other lines.
//
//	Updated main.go (4 lines, version v2-…). Lines after 2 moved down 1.
//	 2:16|	println("hi")
//	+3:d4|	println("hello")
//	 4:18|}
//
// For MCP the rebase report says what happened in words rather than
// versions, which no tool shows, the tagged diff is fenced, and the
// repairs of the edit's texts follow in a section of their own (Repairs):
// the caller drops the warnings that repeat them, which the API sends for
// text clients.
func Edit(r *hashlinev1.EditResponse, o Options) string {
	if o.Face == MCP {
		s := editMCP(r)
		if l := Syntax("edit", r.GetDryRun(), r.GetDiagnostics(), r.GetSyntaxNotChecked()); l != "" {
			s += "\n" + l
		}
		return s + Repairs(r.GetRepairs())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s, version %s).", editVerb(r), r.GetPath(), plural(int(r.GetTotalLines()), "line"), r.GetVersion())
	if r.GetTaggedDiff() != "" {
		b.WriteString(" " + Shifts(r))
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
		b.WriteString(Tagged(r.GetLines()))
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
	if l := Syntax("edit", r.GetDryRun(), r.GetDiagnostics(), r.GetSyntaxNotChecked()); l != "" {
		b.WriteString(l + "\n")
	}
	if o.Diff && r.GetDiff() != "" {
		b.WriteString(r.GetDiff())
		if !strings.HasSuffix(r.GetDiff(), "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// editVerb begins an edit's header.
func editVerb(r *hashlinev1.EditResponse) string {
	if r.GetDryRun() {
		return "Dry run, nothing written:"
	}
	return "Updated"
}

// editMCP is Edit for MCP, before its repairs:
//
//	Updated main.go (4 lines). Lines after 2 moved down 1.
//	```diff
//	 2:16|	println("hi")
//	+3:d4|	println("hello")
//	 4:18|}
//	```
func editMCP(r *hashlinev1.EditResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s).", editVerb(r), r.GetPath(), plural(int(r.GetTotalLines()), "line"))
	tagged := r.GetTaggedDiff()
	if tagged != "" {
		b.WriteString(" " + Shifts(r))
	}
	if r.GetRebasedFrom() != "" {
		b.WriteString("\nThe file had changed since you read it; your refs were rebased onto the current version")
		if mv := r.GetMoved(); len(mv) > 0 {
			b.WriteString(":")
			for _, m := range mv {
				fmt.Fprintf(&b, "\n\t%s is now line %d", m.GetRef(), m.GetTo())
			}
		} else {
			b.WriteString(".")
		}
	}
	if ws := r.GetWarnings(); len(ws) > 0 {
		b.WriteString("\nWarnings:")
		for _, w := range ws {
			b.WriteString("\n- ")
			b.WriteString(w)
		}
	}
	if tagged != "" {
		b.WriteString("\n")
		b.WriteString(Fence("diff", tagged))
		return b.String()
	}
	if d := strings.TrimSuffix(r.GetDiff(), "\n"); d != "" {
		b.WriteString("\n")
		b.WriteString(Fence("diff", d))
	}
	if wins := r.GetWindows(); len(wins) > 0 {
		b.WriteString("\nFresh refs around the changes:\n")
		texts := make([]string, 0, len(wins))
		for _, w := range wins {
			if w.GetText() != "" {
				texts = append(texts, w.GetText())
			}
		}
		b.WriteString(Fence("", strings.Join(texts, "\n...\n")))
	}
	return b.String()
}

// Repairs lists the repairs of an edit's texts, one short line each (the
// detail without its advice, which the heading gives once), after a blank
// line; nothing without repairs. MCP's Edit ends with it.
func Repairs(rs []*hashlinev1.Repair) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nRepaired (send plain lines next time; strict: true writes a text exactly as sent):")
	for _, r := range rs {
		detail, _, _ := strings.Cut(r.GetDetail(), " — ")
		fmt.Fprintf(&b, "\n- edit %d: %s", r.GetEditIndex(), detail)
	}
	return b.String()
}

// Syntax says in one line what the syntax check of an edit or write
// (what) found, after the change: the errors it introduced, each with its
// line tagged (the fresh ref in the new file), or why the file was not
// checked; "" when it introduced none. dry says the change was not
// written. The findings of the operator's check commands (source
// "check") follow on a line of their own, said as findings, not errors.
//
//	Syntax: this edit introduced 1 error (go/parser): 4:1b|	println("hi" — missing ',' before newline in argument list
//	Checks: this edit introduced 1 finding (ruff check): 1:7a|import os — F401 `os` imported but unused
func Syntax(what string, dry bool, ds []*hashlinev1.Diagnostic, notChecked string) string {
	var syn, chk []*hashlinev1.Diagnostic
	for _, d := range ds {
		if d.GetSource() == "check" {
			chk = append(chk, d)
		} else {
			syn = append(syn, d)
		}
	}
	verb := "introduced"
	if dry {
		verb = "would introduce"
	}
	var lines []string
	switch {
	case len(syn) > 0:
		lines = append(lines, fmt.Sprintf("Syntax: this %s %s %s (%s): %s", what, verb, plural(len(syn), "error"), syn[0].GetChecker(), diagnosticParts(syn)))
	case notChecked != "":
		lines = append(lines, "Syntax: not checked ("+notChecked+")")
	}
	if len(chk) > 0 {
		var names []string
		for _, d := range chk {
			if !slices.Contains(names, d.GetChecker()) {
				names = append(names, d.GetChecker())
			}
		}
		lines = append(lines, fmt.Sprintf("Checks: this %s %s %s (%s): %s", what, verb, plural(len(chk), "finding"), strings.Join(names, ", "), diagnosticParts(chk)))
	}
	return strings.Join(lines, "\n")
}

// diagnosticParts are the diagnostics, each as its tagged line and
// message ("REF|CONTENT — MESSAGE"; the message alone for one without a
// line), joined by "; ".
func diagnosticParts(ds []*hashlinev1.Diagnostic) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		if d.GetRef() == "" {
			parts[i] = d.GetMessage()
			continue
		}
		parts[i] = fmt.Sprintf("%s|%s — %s", d.GetRef(), d.GetContent(), d.GetMessage())
	}
	return strings.Join(parts, "; ")
}

// Shifts says in a sentence how an edit moved the lines it did not touch
// (EditResponse.shifts), in the numbers of the file before the edit:
//
//	Line numbers unchanged.
//	Lines after 12 moved down 2.
//	Lines 13-39 moved down 2; lines after 40 kept their numbers.
//
// After a rebase the caller's refs come from an older version than the one
// the shifts start from (the rebase report says so), and the sentence ends
// "by this edit."
func Shifts(r *hashlinev1.EditResponse) string {
	s := shifts(r.GetShifts(), r.GetTotalLines())
	if r.GetRebasedFrom() != "" {
		s = strings.TrimSuffix(s, ".") + " by this edit."
	}
	return s
}

// shifts is Shifts for a file of total lines after the edit.
func shifts(shifts []*hashlinev1.LineShift, total int32) string {
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

// Write renders a Write response in one line, and a second for its
// syntax check when that found something.
//
//	Wrote main.go (5 lines, version v2-…)
func Write(r *hashlinev1.WriteResponse, o Options) string {
	return writeLine(r, o.Face, false) + end(o.Face)
}

// writeLine is a write's line, and the line of its syntax check if it
// has one.
func writeLine(r *hashlinev1.WriteResponse, f Face, dryRun bool) string {
	s := writeHeader(r, f, dryRun)
	for _, w := range r.GetWarnings() {
		s += "\nwarning: " + w
	}
	if l := Syntax("write", dryRun, r.GetDiagnostics(), r.GetSyntaxNotChecked()); l != "" {
		s += "\n" + l
	}
	return s
}

func writeHeader(r *hashlinev1.WriteResponse, f Face, dryRun bool) string {
	verb := "Wrote"
	switch {
	case dryRun && r.GetCreated():
		verb = "Would create"
	case dryRun:
		verb = "Would overwrite"
	case r.GetCreated():
		verb = "Created"
	case f == MCP:
		// The published server's word.
		verb = "Overwrote"
	}
	if f == MCP {
		return fmt.Sprintf("%s %s (%s)", verb, r.GetPath(), plural(int(r.GetTotalLines()), "line"))
	}
	return fmt.Sprintf("%s %s (%s, version %s)", verb, r.GetPath(), plural(int(r.GetTotalLines()), "line"), r.GetVersion())
}

// Delete renders a Delete response in one line.
//
//	Deleted old.txt (was version v2-…)
func Delete(r *hashlinev1.DeleteResponse, o Options) string {
	return deleteLine(r, o.Face, false) + end(o.Face)
}

func deleteLine(r *hashlinev1.DeleteResponse, f Face, dryRun bool) string {
	verb := "Deleted"
	if dryRun {
		verb = "Would delete"
	}
	switch {
	case r.GetDirectory():
		return fmt.Sprintf("%s directory %s", verb, r.GetPath())
	case f == MCP:
		return fmt.Sprintf("%s %s", verb, r.GetPath())
	}
	return fmt.Sprintf("%s %s (was version %s)", verb, r.GetPath(), r.GetVersion())
}

// Move renders a Move response in one line. The version is the file's,
// unchanged by the move: refs read at the old path hold at the new.
//
//	Moved a.txt to b/a.txt (version v2-…)
func Move(r *hashlinev1.MoveResponse, o Options) string {
	return moveLine(r, o.Face, false) + end(o.Face)
}

func moveLine(r *hashlinev1.MoveResponse, f Face, dryRun bool) string {
	verb := "Moved"
	if dryRun {
		verb = "Would move"
	}
	if f == MCP {
		s := fmt.Sprintf("%s %s to %s", verb, r.GetFrom(), r.GetTo())
		if r.GetReplacedVersion() != "" {
			s += ", replacing the file there"
		}
		return s
	}
	s := fmt.Sprintf("%s %s to %s (version %s)", verb, r.GetFrom(), r.GetTo(), r.GetVersion())
	if rv := r.GetReplacedVersion(); rv != "" {
		s += fmt.Sprintf(", replacing the file there (version %s)", rv)
	}
	return s
}

// Apply renders an applied (or dry-run) change set: every change in the
// request's order, an edit's as Edit renders it (its tagged diff holds the
// fresh refs), the others in one line, then one closing line.
//
//	Updated main.go (5 lines, version v2-…). Line numbers unchanged.
//	 3:d4|	println("hello")
//	Created util.go (3 lines, version v2-…)
//	Moved old.go to new.go (version v2-…)
//	Applied 3 changes together.
//
// For MCP (edit_file's files form) the changes are separated by blank
// lines, each edit with its repairs, and there is no closing line: a
// tool result that is not an error says the set was applied.
func Apply(r *hashlinev1.ApplyResponse, o Options) string {
	var b strings.Builder
	dry := r.GetDryRun()
	writeResults(&b, r.GetResults(), dry, o)
	if o.Face == MCP {
		return b.String()
	}
	n := plural(len(r.GetResults()), "change")
	if dry {
		fmt.Fprintf(&b, "Dry run, nothing written: the %s can be applied together.\n", n)
	} else {
		fmt.Fprintf(&b, "Applied %s together.\n", n)
	}
	return b.String()
}

// writeResults writes the changes of a set (dry: planned, not written) as
// Apply renders them, without its closing line.
func writeResults(b *strings.Builder, results []*hashlinev1.ChangeResult, dry bool, o Options) {
	for i, c := range results {
		if o.Face == MCP && i > 0 {
			b.WriteString("\n\n")
		}
		switch c := c.GetResult().(type) {
		case *hashlinev1.ChangeResult_Edit:
			e := c.Edit
			if dry && !e.GetDryRun() {
				e = proto.CloneOf(e)
				e.DryRun = true
			}
			b.WriteString(Edit(e, o))
			continue
		case *hashlinev1.ChangeResult_Write:
			b.WriteString(writeLine(c.Write, o.Face, dry))
		case *hashlinev1.ChangeResult_Delete:
			b.WriteString(deleteLine(c.Delete, o.Face, dry))
		case *hashlinev1.ChangeResult_Move:
			b.WriteString(moveLine(c.Move, o.Face, dry))
		}
		b.WriteString(end(o.Face))
	}
}

// Revert renders a revert: what it changed (or, with dry_run, would
// change), each file as Apply renders it, its warnings, then a line naming
// the change reverted and the revert's own id, which a revert of its own
// undoes.
//
//	Updated main.go (5 lines, version v2-…). Lines after 3 moved up 1.
//	Rebased from version v2-…
//	 2:16|	println("hi")
//	-	println("hello")
//	 3:18|}
//	Reverted c3-9f3a11be as c5-9f3a11be (hashline revert c5-9f3a11be undoes this).
//
// For MCP (the undo tool) an edit's rebase is not reported: its refs were
// the change's, not the caller's, so "your refs were rebased" would not be
// true; and the next step is named by the tool's argument.
func Revert(r *hashlinev1.RevertResponse, o Options) string {
	results := r.GetResults()
	if o.Face == MCP {
		results = make([]*hashlinev1.ChangeResult, len(r.GetResults()))
		for i, c := range r.GetResults() {
			results[i] = c
			if e := c.GetEdit(); e.GetRebasedFrom() != "" {
				e = proto.CloneOf(e)
				e.RebasedFrom, e.Moved = "", nil
				results[i] = &hashlinev1.ChangeResult{Result: &hashlinev1.ChangeResult_Edit{Edit: e}}
			}
		}
	}
	var b strings.Builder
	writeResults(&b, results, r.GetDryRun(), o)
	if o.Face == MCP && len(results) > 0 {
		b.WriteString("\n\n")
	}
	for _, w := range r.GetWarnings() {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	switch {
	case r.GetDryRun():
		fmt.Fprintf(&b, "Dry run, nothing written: reverting %s would make the changes above.", r.GetReverted())
	case o.Face == MCP:
		fmt.Fprintf(&b, "Undid %s. This undo is change %s: undo with that change_id to redo.", r.GetReverted(), r.GetChangeId())
	case o.Face == Client:
		fmt.Fprintf(&b, "Reverted %s as %s (a Revert of %s undoes this).", r.GetReverted(), r.GetChangeId(), r.GetChangeId())
	default:
		fmt.Fprintf(&b, "Reverted %s as %s (hashline revert %s undoes this).", r.GetReverted(), r.GetChangeId(), r.GetChangeId())
	}
	b.WriteString(end(o.Face))
	return b.String()
}

// Grep renders a whole search: each file as GrepFile does, then the
// summary as GrepSummary does. The CLI prints them as they stream.
//
// For MCP it is the published server's shape: every line on its own with
// its path, PATH:>>LINE:HASH|CONTENT for a match and PATH:  LINE:HASH|CONTENT
// for context, "--" between runs with Context, all fenced; the summary
// only when the search stopped at the limit.
func Grep(files []*hashlinev1.GrepFile, sum *hashlinev1.GrepSummary, o Options) string {
	if o.Face != MCP {
		var b strings.Builder
		for _, f := range files {
			b.WriteString(GrepFile(f))
		}
		b.WriteString(GrepSummary(sum))
		return b.String()
	}
	if len(files) == 0 {
		return "No matches found."
	}
	var b strings.Builder
	n := 0
	for _, f := range files {
		prev := 0
		for _, l := range f.GetLines() {
			num := int(l.GetNumber())
			if o.Context && n > 0 && (prev == 0 || num != prev+1) {
				b.WriteString("--\n")
			}
			prev = num
			n++
			b.WriteString(f.GetPath())
			if l.GetMatch() {
				b.WriteString(":>>")
			} else {
				b.WriteString(":  ")
			}
			fmt.Fprintf(&b, "%d:%s|%s\n", num, l.GetHash(), l.GetContent())
		}
	}
	out := Fence("", strings.TrimSuffix(b.String(), "\n"))
	if sum.GetTruncated() {
		out += fmt.Sprintf("\n\nStopped at %d matching lines (the limit); narrow the pattern or path, or raise limit, to see more.", sum.GetMatches())
	}
	return out
}

// GrepFile renders one file of a Grep stream like the published hashline
// grep format: ">>" before a matching line, two spaces before a context
// line, "--" between runs that are not adjacent, under a header with the
// file's path and version. The tags are valid edit references (a leading
// ">>" is accepted).
//
//	File: main.go (version v2-4cd3…)
//	>>4:d4|	println("hello")
//	  5:18|}
func GrepFile(f *hashlinev1.GrepFile) string {
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

// GrepSummary renders the end of a Grep stream in one line, saying when
// the search stopped at the match limit.
func GrepSummary(s *hashlinev1.GrepSummary) string {
	if s.GetMatches() == 0 {
		return fmt.Sprintf("No matches found (%s searched).\n", plural(int(s.GetFilesScanned()), "file"))
	}
	line := fmt.Sprintf("%s in %s (%s searched)", plural(int(s.GetMatches()), "match"), plural(int(s.GetFilesMatched()), "file"), plural(int(s.GetFilesScanned()), "file"))
	if s.GetTruncated() {
		line += "; stopped at the match limit: there may be more, narrow the pattern or path, or raise the limit"
	}
	return line + ".\n"
}

// List renders a List page: its entries as Entry does, then ListEnd. For
// MCP an empty page says so, as a tool result is never empty.
func List(r *hashlinev1.ListResponse, o Options) string {
	if o.Face == MCP && len(r.GetEntries()) == 0 {
		return "No entries."
	}
	var b strings.Builder
	for _, e := range r.GetEntries() {
		b.WriteString(Entry(e, o.Size, o.Versions))
	}
	b.WriteString(ListEnd(r, o.Face))
	if o.Face == MCP {
		return strings.TrimSuffix(b.String(), "\n")
	}
	return b.String()
}

// Entry renders one List entry in one line: its path, with "/" after a
// directory and "@" after a symbolic link, then with size its size in
// bytes (files and links), and with version its version (files that have
// one).
//
//	src/
//	src/main.go 120 v2-4cd3…
//	src/link@
func Entry(e *hashlinev1.Entry, size, version bool) string {
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

// ListEnd renders the end of a List page: nothing when it was the last,
// otherwise one line saying how to ask for the next, in the face's terms:
// the CLI's flags, the API's page token, list_directory's argument.
func ListEnd(r *hashlinev1.ListResponse, f Face) string {
	if !r.GetTruncated() {
		return ""
	}
	switch f {
	case CLI:
		return fmt.Sprintf("[more entries follow: continue with --page %s, or use --all]\n", r.GetNextPageToken())
	case MCP:
		return fmt.Sprintf("[more: call again with page_token %q]", r.GetNextPageToken())
	}
	n := fmt.Sprintf("%d entries", len(r.GetEntries()))
	if len(r.GetEntries()) == 1 {
		n = "1 entry"
	}
	return fmt.Sprintf("[%s shown; more follow: continue with page token %s]\n", n, r.GetNextPageToken())
}

// Status renders hashline status: where the server is (where), the
// workspace it serves when it has a name, the root, its version and
// settings.
func Status(where string, r *hashlinev1.StatusResponse) string {
	ws := ""
	if r.GetWorkspace() != "" {
		ws = "workspace:    " + r.GetWorkspace() + "\n"
	}
	return fmt.Sprintf("server:       %s\n%sroot:         %s\nversion:      %s\nhash length:  %d\nrequire read: %t\n",
		where, ws, r.GetRoot(), r.GetVersion(), r.GetHashLen(), r.GetRequireRead())
}

// Fence wraps text in a Markdown code block, with a longer fence if the
// text itself holds one, so file content can never end the block early.
func Fence(info, text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + info + "\n" + text + "\n" + f
}

// end is what ends a one-line text: a newline for a terminal, nothing
// for a tool result.
func end(f Face) string {
	if f == MCP {
		return ""
	}
	return "\n"
}

// plural is "1 line", "2 lines", "2 matches".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "ch") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
