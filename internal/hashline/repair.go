package hashline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RepairKind names one kind of repair. The values are the API's
// Repair.kind vocabulary, declared here once.
type RepairKind string

// The repairs PlanEdits makes to an edit's text unless planned with
// Strict. Each fixes a slip models make when they write edits, and only
// when the intended edit is unambiguous; where it is not, the edit is
// refused (INVALID_EDIT) with both readings. None changes a line outside
// the edit's range: they change the edit's new lines only.
const (
	// RepairPrefixStripped: every line of the text carried a "LINE:HASH|"
	// prefix pasted from read output.
	RepairPrefixStripped RepairKind = "PREFIX_STRIPPED"
	// RepairDiffMarkersStripped: every non-blank line of the text was a
	// "+" line or a "-" line repeating a replaced line, as in a diff.
	RepairDiffMarkersStripped RepairKind = "DIFF_MARKERS_STRIPPED"
	// RepairBoundaryEchoDropped: a replacement's first or last line
	// repeated the unchanged line just before or just after its range.
	RepairBoundaryEchoDropped RepairKind = "BOUNDARY_ECHO_DROPPED"
	// RepairAnchorEchoDropped: an insert's text repeated its anchor line
	// (insertAfter's first line, insertBefore's last).
	RepairAnchorEchoDropped RepairKind = "ANCHOR_ECHO_DROPPED"
	// RepairIndentRestored: a replacement's lines had lost the indentation
	// of the lines they replace.
	RepairIndentRestored RepairKind = "INDENT_RESTORED"
	// RepairTabEscapesExpanded: literal "\t" (backslash, t) at the start
	// of lines, in a file indented with tabs, became tabs.
	RepairTabEscapesExpanded RepairKind = "TAB_ESCAPES_EXPANDED"
)

// RepairKinds lists every kind, in the order the repairs are tried.
var RepairKinds = []RepairKind{
	RepairPrefixStripped, RepairDiffMarkersStripped, RepairTabEscapesExpanded,
	RepairBoundaryEchoDropped, RepairAnchorEchoDropped, RepairIndentRestored,
}

// Repair is one change PlanEdits made to an edit's text.
type Repair struct {
	Kind RepairKind
	// EditIndex is the edit's index in the batch.
	EditIndex int
	// Line is the 1-based line of the document the repair is about: the
	// repeated line for the echoes, else the first replaced line or the
	// anchor; 0 for edits without one (append, prepend, replaceText).
	Line int
	// Detail says what was done, as a sentence without the edit's index.
	Detail string
}

// Warning is the repair as a warning sentence, as it also appears among
// the plan's warnings.
func (r Repair) Warning() string { return RepairWarning(r.EditIndex, r.Detail) }

// RepairWarning is the warning sentence of a repair of edit i, so that a
// client holding the API's Repair can tell which warnings repeat it.
func RepairWarning(i int, detail string) string {
	return "edit " + strconv.Itoa(i) + ": " + detail
}

// PlanOption changes how PlanEdits plans.
type PlanOption func(*planConfig)

type planConfig struct {
	strict bool
}

// Strict turns every repair off when on is true: texts are applied exactly
// as sent.
func Strict(on bool) PlanOption {
	return func(c *planConfig) { c.strict = on }
}

// span is where an edit's new lines go: the 0-based half-open range
// [at, end) of the lines they replace (at == end for an insertion).
type span struct {
	op      Op
	at, end int
	line    int // the line repairs are reported on (Repair.Line)
}

func (r *resolver) repair(i int, kind RepairKind, line int, format string, args ...any) {
	rp := Repair{Kind: kind, EditIndex: i, Line: line, Detail: fmt.Sprintf(format, args...)}
	r.plan.Repairs = append(r.plan.Repairs, rp)
	r.plan.Warnings = append(r.plan.Warnings, rp.Warning())
}

// prefixDetail is the detail of PREFIX_STRIPPED for the named field.
func prefixDetail(field string) string {
	return field + " carried hashline prefixes (LINE:HASH|); they were stripped — send plain content"
}

// editText splits edit i's text into lines and repairs them for the span
// s. ok is false when the resolved span is unusable (a bad reference): the
// batch fails anyway, so nothing is repaired. It returns false when a
// repair would be a guess and the edit was refused.
func (r *resolver) editText(i int, text string, s span, ok bool) ([]string, bool) {
	lines := SplitText(text)
	if r.strict || !ok || len(lines) == 0 {
		return lines, true
	}
	if out, stripped := StripTagPrefixes(lines); stripped {
		lines = out
		r.repair(i, RepairPrefixStripped, s.line, "%s", prefixDetail("text"))
	}
	var refused bool
	if lines, refused = r.diffMarkers(i, lines, s); refused {
		return nil, false
	}
	lines = r.tabEscapes(i, lines, s)
	if lines, refused = r.echoes(i, lines, s); refused {
		return nil, false
	}
	if lines, refused = r.indent(i, lines, s); refused {
		return nil, false
	}
	return lines, true
}

// old returns the lines s replaces.
func (r *resolver) old(s span) []string {
	out := make([]string, 0, s.end-s.at)
	for n := s.at + 1; n <= s.end; n++ {
		out = append(out, r.d.Line(n))
	}
	return out
}

// near returns the lines s replaces and the line on each side of it: the
// lines that show what the file's text looks like where the edit goes.
func (r *resolver) near(s span) []string {
	var out []string
	for n := max(s.at, 1); n <= min(s.end+1, r.d.Len()); n++ {
		out = append(out, r.d.Line(n))
	}
	return out
}

func blank(l string) bool { return strings.TrimSpace(l) == "" }

// lead returns the leading spaces and tabs of l.
func lead(l string) string {
	return l[:len(l)-len(strings.TrimLeft(l, " \t"))]
}

// --- Diff markers ---------------------------------------------------------

// diffMarkers strips diff markers. A text is marked when every non-blank
// line is a "+" line or a "-" line whose rest is one of the replaced
// lines, and at least one is a "+" line: a model that writes a diff marks
// every line, so a text where some line is unmarked is taken as content.
// A "+" at the start of a line is content where the file has such lines:
// next to the edit (a diff, a "+" list) the text is applied as sent;
// within plusReach lines of it, or anywhere when they go on as the text's
// lines do, and in a diff's hunk, the edit is refused with both readings
// (see plusContent). A marked text whose "-" lines are not replaced lines
// is refused, and so is a lone "+" line without a "-" line unless
// indentation like the file's follows its "+" (see markedIndent) or its
// rest is the replaced line changed (see markedShape and markedSibling):
// one line is too little to tell a diff from content such as "+1 555 0100".
func (r *resolver) diffMarkers(i int, lines []string, s span) ([]string, bool) {
	if rest, ok := r.leadingMinus(i, lines, s); ok {
		return rest, false
	}
	var old []string // the replaced lines, once a "-" line needs them
	plus, minus, stray := 0, 0, 0
	for _, l := range lines {
		if old == nil && strings.HasPrefix(l, "-") {
			old = r.old(s)
		}
		switch {
		case blank(l):
		case l[0] == '+':
			plus++
		case l[0] == '-' && repeatsOld(l[1:], old):
			minus++
		case l[0] == '-':
			stray++
		default:
			return lines, false
		}
	}
	if plus == 0 {
		return lines, false
	}
	for _, l := range r.near(s) {
		if strings.HasPrefix(l, "+") {
			return lines, false
		}
	}
	stripped := make([]string, 0, len(lines))
	for _, l := range lines {
		switch {
		case blank(l):
			stripped = append(stripped, l)
		case l[0] == '+':
			stripped = append(stripped, l[1:])
		case stray > 0 && l[0] == '-':
			// Shown as the "-" line would read if it were content.
		}
	}
	if stray > 0 {
		what := fmt.Sprintf(`%d of its "-" lines are not lines`, stray)
		if stray == 1 {
			what = `its "-" line is not a line`
		}
		r.refuse(i, s, fmt.Sprintf(`every line of the text starts with "+" or "-" as in a diff, but %s of the range it replaces, so it is no diff of these lines; send the new lines only, without markers, or set strict to write the text as sent`, what),
			reading{"as sent", lines}, reading{`with "+" stripped and "-" lines left out`, stripped})
		return nil, true
	}
	if why := r.plusContent(lines, s); why != "" {
		r.refuse(i, s, `every line of the text starts with "+" as in a diff, but `+why+`, so its "+" may be content; resend the text without the markers, or with strict to write it as sent`,
			reading{"as sent", lines}, reading{"with the markers stripped", stripped})
		return nil, true
	}
	if plus == 1 && minus == 0 {
		var rest string // the one "+" line, after its "+"
		for _, l := range lines {
			if !blank(l) {
				rest = l[1:]
				break
			}
		}
		if !r.markedIndent(rest, s) && !r.markedShape(rest, s) && !r.markedSibling(rest, s) {
			r.refuse(i, s, `the text is one line starting with "+", which may be a diff's marker or content (a phone number, a "+" bullet); resend it without the "+", or with strict to write it as sent`,
				reading{"as sent", lines}, reading{"with the marker stripped", stripped})
			return nil, true
		}
	}
	detail := fmt.Sprintf(`text was marked like a diff; removed the "+" of %s`, plural(plus, "line"))
	if minus > 0 {
		detail += fmt.Sprintf(` and dropped %s that repeated replaced lines`, plural(minus, `"-" line`))
	}
	r.repair(i, RepairDiffMarkersStripped, s.line, "%s — send plain content", detail)
	return stripped, false
}

// leadingMinus drops a text's leading "-" lines when they are the
// replaced lines, every one in order, each written as a diff writes a
// removed line: "-" and then the line, with its indentation or with none,
// but never "- " before a line that has no space there (a "- " list item
// is content). At least one line must follow them, and the lines that
// follow must not all start with "-" (a list, not a diff). A model that
// shows what it removes before the new lines means only the new lines.
//
// It reports whether it dropped them; the other marker rules then do not
// apply.
func (r *resolver) leadingMinus(i int, lines []string, s span) ([]string, bool) {
	if s.op != OpReplace || len(lines) == 0 || !strings.HasPrefix(lines[0], "-") {
		return nil, false
	}
	old := r.old(s)
	if len(old) == 0 || len(lines) <= len(old) {
		return nil, false
	}
	for k, o := range old {
		l := lines[k]
		if !strings.HasPrefix(l, "-") || !removedLine(l[1:], o) {
			return nil, false
		}
	}
	rest := lines[len(old):]
	list := true
	for _, l := range rest {
		if !blank(l) && !strings.HasPrefix(l, "-") {
			list = false
		}
	}
	if list {
		return nil, false
	}
	for _, l := range rest {
		if strings.HasPrefix(l, "+") {
			return nil, false // a marked diff: the rule below strips it whole
		}
	}
	r.repair(i, RepairDiffMarkersStripped, s.line, `text began with %s repeating the replaced lines as a diff's removed lines; dropped them — send the new lines only`, plural(len(old), `"-" line`))
	return rest, true
}

// removedLine reports whether rest, a line after its "-", is old as a diff
// shows a removed line: exactly, or without its indentation, but not with
// a space the line does not have (as a "- item" list item would).
func removedLine(rest, old string) bool {
	if rest == old {
		return true
	}
	t := strings.TrimSpace(old)
	return t != "" && rest == t && lead(old) != ""
}

// markedIndent reports whether rest, the one "+" line of a text after its
// "+", goes on with indentation like that of the line the text replaces or
// is anchored to ("+\treturn 2" for "\treturn 1"): the evidence that a
// lone "+" is a diff's marker, since indentation never follows a "+" that
// is content at the start of a line.
func (r *resolver) markedIndent(rest string, s span) bool {
	ref := 0
	switch s.op {
	case OpReplace, OpInsertAfter:
		ref = s.at + 1
		if s.op == OpInsertAfter {
			ref = s.at
		}
	case OpInsertBefore:
		ref = s.end + 1
	}
	if ref < 1 || ref > r.d.Len() {
		return false
	}
	want, got := lead(r.d.Line(ref)), lead(rest)
	return want != "" && got != "" && strings.Trim(got, want[:1]) == ""
}

// markedShape reports whether rest, the one "+" line of a text after its
// "+", replacing lines, is the first replaced line changed, marked as a
// diff marks a new line: after the "+" comes that line's indentation
// exactly, then the same first token (a name or keyword: "+const x = 2"
// for "const x = 1", or a closing bracket: "+}[2]" for "}[1]"), and the
// rest is not the replaced line itself (then adding the "+" is the
// change). A word or a closing bracket right after a "+" at the
// indentation of code is no content of any language, while a "+" before a
// number, a space or an opening bracket may be (a phone number, a list
// item, "+(44) 20"), and so is one that makes the only difference.
func (r *resolver) markedShape(rest string, s span) bool {
	if s.op != OpReplace || s.end <= s.at {
		return false
	}
	old := r.d.Line(s.at + 1)
	if lead(rest) != lead(old) || strings.TrimSpace(rest) == strings.TrimSpace(old) {
		return false
	}
	w := firstToken(rest[len(lead(rest)):])
	return w != "" && w == firstToken(old[len(lead(old)):])
}

// firstToken is the name or keyword s starts with, or its first character
// if that is a closing bracket; "" if it starts with anything else, a
// digit included.
func firstToken(s string) string {
	if s != "" && strings.IndexByte(")]}", s[0]) >= 0 {
		return s[:1]
	}
	n := 0
	for n < len(s) && (s[n] == '_' || s[n] == '$' || 'a' <= s[n]|0x20 && s[n]|0x20 <= 'z' || n > 0 && '0' <= s[n] && s[n] <= '9') {
		n++
	}
	return s[:n]
}

// markedSibling reports whether rest, the one "+" line of a text after its
// "+", replacing one line, is that line changed within its shape and
// marked as a diff marks a new line: after the "+" comes the line's
// indentation, then text whose runs of digits, letters and spaces and
// whose other characters are the line's own ("+251 SMTPUTF8" for "250
// SMTPUTF8"), and a line beside it starts as it does, at its indentation
// and with the same kind of character, and not with "+". A "+" there would
// make the one line unlike the lines it stands among; a lone line ("+1 555
// 0100" for "1 555 0199" under a heading) has no such neighbours and stays
// a guess, and so does a line of one word or number ("+173" for "172"
// among numbers), whose shape says nothing.
func (r *resolver) markedSibling(rest string, s span) bool {
	if s.op != OpReplace || s.end != s.at+1 {
		return false
	}
	old := r.d.Line(s.end)
	if blank(old) || lead(rest) != lead(old) || strings.TrimSpace(rest) == strings.TrimSpace(old) || shape(rest) != shape(old) || len(shape(strings.TrimSpace(old))) < 3 {
		return false
	}
	first := charClass(old[len(lead(old))])
	for _, n := range []int{s.at, s.end + 1} {
		if n < 1 || n > r.d.Len() {
			continue
		}
		l := r.d.Line(n)
		if !blank(l) && lead(l) == lead(old) && charClass(l[len(lead(l))]) == first {
			return true
		}
	}
	return false
}

// shape is s with each run of digits written "0", each run of letters "a"
// and each run of spaces and tabs " ", other characters kept.
func shape(s string) string {
	var b strings.Builder
	last := byte(0)
	for i := 0; i < len(s); i++ {
		c := charClass(s[i])
		if c != last || c != '0' && c != 'a' && c != ' ' {
			b.WriteByte(c)
		}
		last = c
	}
	return b.String()
}

// charClass is '0' for a digit, 'a' for a letter or any byte of a
// multi-byte character, ' ' for a space or tab, and c itself otherwise.
func charClass(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return '0'
	case 'a' <= c|0x20 && c|0x20 <= 'z' || c >= 0x80:
		return 'a'
	case c == ' ' || c == '\t':
		return ' '
	}
	return c
}

// repeatsOld reports whether rest, a "-" line without its marker, is one
// of the replaced lines (whitespace around it aside).
func repeatsOld(rest string, old []string) bool {
	t := strings.TrimSpace(rest)
	for _, o := range old {
		if strings.TrimSpace(o) == t {
			return true
		}
	}
	return false
}

// plusContent says why a "+" at the start of the text's lines may be
// content, or returns "": a line within plusReach lines of s starts with
// "+"; or s is in a diff's hunk; or a line anywhere in the file starts
// with "+" and then the same kind of character (charClass, or nothing) as
// one of the text's lines. Lines that start with "+" farther away are
// another part of the file and say nothing of the lines s replaces when
// they go on otherwise (a base64 line "+NeMN..." and "+251 SMTPUTF8"), but
// when they go on as the text does they show how the file writes such
// lines ("+44 20 7946 0958" and "+1 555 0199", "+ one" and "+ alpha"),
// wherever they are. A diff's hunk may be far longer than plusReach
// without a "+" line (one that removes a block).
func (r *resolver) plusContent(lines []string, s span) string {
	if r.plusLinesNear(s) {
		return `this file has lines that start with "+" near it`
	}
	if r.inHunk(s) {
		return `the edit is in a diff's hunk, where "+" begins an added line`
	}
	var kinds []byte
	for _, l := range lines {
		if strings.HasPrefix(l, "+") {
			kinds = append(kinds, plusKind(l[1:]))
		}
	}
	for n := 1; n <= r.d.Len(); n++ {
		if l := r.d.Line(n); strings.HasPrefix(l, "+") && slices.Contains(kinds, plusKind(l[1:])) {
			return `this file has lines that start with "+" and go on as the text's do`
		}
	}
	return ""
}

// plusKind is the kind of character rest, a line after its "+", starts
// with (charClass), or 0 if it is empty.
func plusKind(rest string) byte {
	if rest == "" {
		return 0
	}
	return charClass(rest[0])
}

// inHunk reports whether s is in a diff's hunk: above it, past lines that
// are empty or start as a hunk's lines do (" ", "-", "+" or "\"), is a
// hunk's header ("@@ -1,24 +1,2 @@").
func (r *resolver) inHunk(s span) bool {
	for n := s.at; n >= 1; n-- {
		l := r.d.Line(n)
		if strings.HasPrefix(l, "@@ -") {
			return true
		}
		if l != "" && strings.IndexByte(" -+\\", l[0]) < 0 {
			return false
		}
	}
	return false
}

// plusReach is how many lines on each side of an edit a line that starts
// with "+" makes a "+" of the text possible content: a list, a diff hunk
// or a base64 block the edit is in or beside, but not one in another part
// of a long file.
const plusReach = 20

// plusLinesNear reports whether a line within plusReach lines of s starts
// with "+".
func (r *resolver) plusLinesNear(s span) bool {
	for n := max(s.at-plusReach+1, 1); n <= min(s.end+plusReach, r.d.Len()); n++ {
		if strings.HasPrefix(r.d.Line(n), "+") {
			return true
		}
	}
	return false
}

// --- Tab escapes ----------------------------------------------------------

// tabEscapes turns literal "\t" at line starts into tabs, in a file
// indented with tabs (more of its indented lines start with a tab than with
// a space), when the text has no real indentation at all (a model that
// escapes its tabs escapes all of them) and no line around the edit starts
// with a literal "\t" (where the file has such lines, they are content).
func (r *resolver) tabEscapes(i int, lines []string, s span) []string {
	escaped := 0
	for _, l := range lines {
		if l != "" && (l[0] == ' ' || l[0] == '\t') {
			return lines
		}
		if strings.HasPrefix(l, `\t`) {
			escaped++
		}
	}
	if escaped == 0 || !r.tabIndented() {
		return lines
	}
	for _, l := range r.near(s) {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), `\t`) {
			return lines
		}
	}
	out := make([]string, len(lines))
	for k, l := range lines {
		n := 0
		for strings.HasPrefix(l[2*n:], `\t`) {
			n++
		}
		out[k] = strings.Repeat("\t", n) + l[2*n:]
	}
	r.repair(i, RepairTabEscapesExpanded, s.line, `turned the literal \t at the start of %s into tabs, as this file is indented with tabs — send real tab characters`, plural(escaped, "line"))
	return out
}

// tabIndented reports whether more of the document's indented lines start
// with a tab than with a space.
func (r *resolver) tabIndented() bool {
	if r.tabbed == 0 {
		tabs, spaces := 0, 0
		for n := 1; n <= r.d.Len(); n++ {
			l := r.d.Line(n)
			if blank(l) {
				continue
			}
			switch l[0] {
			case '\t':
				tabs++
			case ' ':
				spaces++
			}
		}
		r.tabbed = 2
		if tabs > spaces {
			r.tabbed = 1
		}
	}
	return r.tabbed == 1
}

// --- Refusals -------------------------------------------------------------

// reading is one way to take an edit's text, shown in a refusal.
type reading struct {
	name  string
	lines []string
}

// maxReadingLines is the most new lines a reading shows; longer texts show
// their start and end, where the readings differ for echoes.
const maxReadingLines = 8

// refuse records that edit i's text is ambiguous: the message says why and
// shows each reading in place, between the tagged lines around the span,
// the new lines marked "+", so a model can pick one and resend.
func (r *resolver) refuse(i int, s span, why string, readings ...reading) {
	var b strings.Builder
	fmt.Fprintf(&b, "edit %d (text): %s. ", i, why)
	if s.op == OpReplace {
		fmt.Fprintf(&b, "The readings of %s:", lineRange(s.at+1, s.end))
	} else {
		fmt.Fprintf(&b, "The readings, inserted %s:", r.pointName(s.at))
	}
	for _, rd := range readings {
		fmt.Fprintf(&b, "\n  %s:", rd.name)
		if s.at >= 1 {
			r.writeContext(&b, s.at)
		}
		shown := rd.lines
		if len(shown) > maxReadingLines {
			shown = append(append(shown[:maxReadingLines/2:maxReadingLines/2], ""), rd.lines[len(rd.lines)-maxReadingLines/2+1:]...)
		}
		for k, l := range shown {
			if len(rd.lines) > maxReadingLines && k == maxReadingLines/2 {
				fmt.Fprintf(&b, "\n    … %d more", len(rd.lines)-maxReadingLines+1)
				continue
			}
			b.WriteString("\n    +")
			b.WriteString(CutLine(l, 120))
		}
		if s.end+1 <= r.d.Len() {
			r.writeContext(&b, s.end+1)
		}
	}
	// The tags each reading shows around the span.
	var tags []int
	if s.at >= 1 {
		tags = append(tags, s.at)
	}
	if s.end+1 <= r.d.Len() {
		tags = append(tags, s.end+1)
	}
	r.problem(Problem{EditIndex: i, Field: "text", Reason: ReasonInvalidEdit, ShowsTags: true, Tags: tags, Message: b.String()})
}

func (r *resolver) writeContext(b *strings.Builder, n int) {
	t := TaggedLine{Number: n, Hash: r.d.Hash(r.h, n), Content: CutLine(r.d.Line(n), 120)}
	b.WriteString("\n     ")
	b.WriteString(t.String())
}

// quoteLine quotes a line for a message, shortened.
func quoteLine(l string) string {
	t := strings.TrimSpace(l)
	if len(t) > 40 {
		t = t[:cutPoint(t, 40)] + "…"
	}
	return strconv.Quote(t)
}
