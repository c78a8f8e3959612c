package main

import (
	"encoding/json"
	"fmt"
	"github.com/hashline/hashline/bench/section"
	"slices"
	"strings"
	"unicode/utf8"
)

// The markers of this program's section of BENCHMARKS.md.
const (
	mdBegin = "<!-- bench:mistakes -->"
	mdEnd   = "<!-- /bench:mistakes -->"
)

var serverNames = []string{ours, peerName}

// classRow is one class's counts on both servers.
type classRow struct {
	class *class
	cases int
	t     map[string]*tally
	syn   map[string]*syntaxTally // a broken class's outcomes
	// strict: outcomes on oursStrict, of a broken class (strictSyn) or of
	// the control class (strictT).
	strictSyn syntaxTally
	strictT   tally
	setup     map[string]int // cases whose correct setup call was refused
	ceded     int            // ours refused where the peer wrote the intended file
	// refusals: the cases ours refused where applying was right, in a
	// class where a refusal is a loss.
	refusals []refusal
}

// refusal is one case we refused where applying was right.
type refusal struct {
	src  string  // where the change is
	peer outcome // the peer's outcome
	call string  // the last mistaken call's edits, as JSON
	why  string  // the first line of our refusal
}

type report struct {
	env       []string
	rows      []*classRow
	byKey     map[string]*classRow
	toolsList map[string]int
	// reply sizes by server: every read_file; edit_file applied in the
	// control class; every mistaken edit_file call; the refused ones.
	reads, controlEdits, edits, refusedEdits map[string][]int
	details                                  strings.Builder
}

func newReport() *report {
	r := &report{byKey: map[string]*classRow{}, toolsList: map[string]int{},
		reads: map[string][]int{}, controlEdits: map[string][]int{}, edits: map[string][]int{}, refusedEdits: map[string][]int{}}
	for _, cl := range classes {
		row := &classRow{class: cl, t: map[string]*tally{}, syn: map[string]*syntaxTally{}, setup: map[string]int{}}
		for _, s := range serverNames {
			row.t[s] = &tally{}
			row.syn[s] = &syntaxTally{}
		}
		r.rows = append(r.rows, row)
		r.byKey[cl.key] = row
	}
	return r
}

// add counts one case's results, one per server.
func (r *report) add(mc *mcase, rs map[string]*result) {
	row := r.byKey[mc.class.key]
	row.cases++
	if st := rs[oursStrict]; st != nil {
		row.strictT.add(st.outcome)
		if mc.class.broken {
			row.strictSyn[st.syntax]++
		}
	}
	for _, s := range serverNames {
		res := rs[s]
		row.t[s].add(res.outcome)
		if mc.class.broken {
			row.syn[s][res.syntax]++
		}
		if res.setupFailed {
			row.setup[s]++
		}
		r.reads[s] = append(r.reads[s], res.read.bytes)
		for _, rep := range res.replies {
			r.edits[s] = append(r.edits[s], rep.bytes)
			if rep.refused {
				r.refusedEdits[s] = append(r.refusedEdits[s], rep.bytes)
			} else if mc.class.key == "control" {
				r.controlEdits[s] = append(r.controlEdits[s], rep.bytes)
			}
		}
	}
	o, p := rs[ours], rs[peerName]
	if mc.class.broken {
		st := rs[oursStrict]
		if o.syntax != flagged || st != nil && st.syntax != refusedSyn {
			fmt.Fprintf(&r.details, "== %s %s, from %s: %s %s, %s %s", mc.class.key, mc.name, mc.src, ours, o.syntax, peerName, p.syntax)
			if st != nil {
				fmt.Fprintf(&r.details, ", %s %s", oursStrict, st.syntax)
			}
			r.details.WriteString("\n")
			for i, e := range mc.calls {
				fmt.Fprintf(&r.details, "-- call %d edits: %s\n", i+1, jsonText(e))
			}
			for _, s := range []string{ours, oursStrict} {
				if rs[s] == nil {
					continue
				}
				for i, rep := range rs[s].replies {
					fmt.Fprintf(&r.details, "-- %s, call %d (refused %v):\n%s\n", s, i+1, rep.refused, clip(rep.text, 1500))
				}
			}
			r.details.WriteString("\n")
		}
		return
	}
	if st := rs[oursStrict]; st != nil && st.outcome != right {
		fmt.Fprintf(&r.details, "== %s %s, from %s: %s %s\n", mc.class.key, mc.name, mc.src, oursStrict, st.outcome)
		for i, rep := range st.replies {
			fmt.Fprintf(&r.details, "-- %s, call %d (refused %v):\n%s\n", oursStrict, i+1, rep.refused, clip(rep.text, 1500))
		}
		r.details.WriteString("\n")
	}
	if o.outcome == refused && p.outcome == right {
		row.ceded++
	}
	if o.outcome == refused && !mc.class.refusalOK {
		why, _, _ := strings.Cut(lastText(o), "\n")
		var call string
		if len(mc.calls) > 0 {
			call = jsonText(mc.calls[len(mc.calls)-1])
		}
		row.refusals = append(row.refusals, refusal{src: mc.src, peer: p.outcome, call: call, why: why})
	}
	if o.outcome != right || p.outcome != o.outcome {
		fmt.Fprintf(&r.details, "== %s %s, from %s: %s %s, %s %s\n", mc.class.key, mc.name, mc.src, ours, o.outcome, peerName, p.outcome)
		for i, e := range mc.calls {
			fmt.Fprintf(&r.details, "-- call %d edits: %s\n", i+1, jsonText(e))
		}
		for _, s := range serverNames {
			for i, rep := range rs[s].replies {
				fmt.Fprintf(&r.details, "-- %s, call %d (refused %v):\n%s\n", s, i+1, rep.refused, clip(rep.text, 1500))
			}
		}
		r.details.WriteString("\n")
	}
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func lastText(r *result) string {
	if len(r.replies) == 0 {
		return ""
	}
	return r.replies[len(r.replies)-1].text
}

// clip cuts s to at most n bytes, at a rune's start.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func median(v []int) int {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// target is one of the benchmark's targets, checked.
type target struct {
	what, measured string
	met            bool
}

func (r *report) targets() []target {
	var out []target
	var corrupted []string
	ourRight, peerRight := 0, 0
	var behind []string
	for _, row := range r.mistakeRows() {
		o, p := row.t[ours], row.t[peerName]
		ourRight += o[right]
		peerRight += p[right]
		if o[corrupt] > 0 {
			corrupted = append(corrupted, fmt.Sprintf("%s: %d", row.class.key, o[corrupt]))
		}
		if o[right]+row.ceded < p[right] {
			behind = append(behind, fmt.Sprintf("%s: %d < %d", row.class.key, o[right], p[right]))
		}
	}
	broken, flaggedN, strictN := 0, 0, 0
	for _, row := range r.syntaxRows() {
		broken += row.cases
		flaggedN += row.syn[ours][flagged]
		strictN += row.strictSyn[refusedSyn]
		o, p := row.syn[ours], row.syn[peerName]
		if n := o.corrupt(); n > 0 {
			corrupted = append(corrupted, fmt.Sprintf("%s: %d", row.class.key, n))
		}
		if o.right() < p.right() {
			behind = append(behind, fmt.Sprintf("%s: %d < %d", row.class.key, o.right(), p.right()))
		}
	}
	out = append(out,
		target{"corrupt 0 for `hashline mcp` in every class", orNone(corrupted), len(corrupted) == 0},
		target{"`hashline mcp` right, all classes, >= the peer's", fmt.Sprintf("%d vs %d", ourRight, peerRight), ourRight >= peerRight},
		target{"`hashline mcp` right >= the peer's in every class (a case where we refuse and the peer guesses right counts for us; see \"refused, peer right\")", orNone(behind), len(behind) == 0},
	)
	atMost := func(what string, m map[string][]int) {
		o, p := median(m[ours]), median(m[peerName])
		out = append(out, target{what, fmt.Sprintf("%d vs %d bytes", o, p), o <= p})
	}
	out = append(out, target{"tools/list reply <= the peer's", fmt.Sprintf("%d vs %d bytes", r.toolsList[ours], r.toolsList[peerName]), r.toolsList[ours] <= r.toolsList[peerName]})
	atMost("read_file reply, median, <= the peer's", r.reads)
	atMost("edit_file reply, applied control edits, median, <= the peer's", r.controlEdits)
	if broken > 0 {
		out = append(out,
			target{"every edit that breaks the syntax flagged by `hashline mcp`", fmt.Sprintf("%d of %d", flaggedN, broken), flaggedN == broken},
			target{"every edit that breaks the syntax refused by `hashline mcp` with `strict_syntax`, the file unchanged", fmt.Sprintf("%d of %d", strictN, broken), strictN == broken})
	}
	if row := r.byKey["control"]; row != nil && row.strictT != (tally{}) {
		n := row.strictT[right]
		out = append(out, target{"every control edit written as intended by `hashline mcp` with `strict_syntax`", fmt.Sprintf("%d of %d", n, row.cases), n == row.cases})
	}
	return out
}

// mistakeRows are the rows of the classes judged right, refused or
// corrupt; syntaxRows those of the classes whose text breaks the syntax.
func (r *report) mistakeRows() []*classRow {
	return slices.DeleteFunc(slices.Clone(r.rows), func(row *classRow) bool { return row.class.broken })
}

func (r *report) syntaxRows() []*classRow {
	return slices.DeleteFunc(slices.Clone(r.rows), func(row *classRow) bool { return !row.class.broken })
}

func (o syntaxOutcome) String() string {
	return [...]string{"written broken without a word", "written broken and flagged", "refused", "other"}[o]
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "; ")
}

// tables renders the outcome, size and target tables.
func (r *report) tables() string {
	var b strings.Builder
	b.WriteString("### Outcomes by class\n\n" +
		"Each case is a fresh copy of a real file, a `read_file` of it, then the class's `edit_file` call(s), the same JSON to both servers. " +
		"**right**: the file is the intended result byte for byte (where refusing is right: every call refused and the file unchanged); " +
		"**refused**: refused with the file unchanged, where applying was right (for malformed arguments an acceptable answer, counted apart); " +
		"**corrupt**: anything else, including a reply of success for a change not made. " +
		"*refused, peer right*: cases we refused and the peer applied as intended.\n\n")
	b.WriteString("| class | cases | ours right | ours refused | ours corrupt | peer right | peer refused | peer corrupt | refused, peer right |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	var tot [2]tally
	cases, ceded := 0, 0
	for _, row := range r.mistakeRows() {
		o, p := row.t[ours], row.t[peerName]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %d | %d | %d | %d |\n", cell(row.class.name), row.cases, o[right], o[refused], bold(o[corrupt]), p[right], p[refused], p[corrupt], row.ceded)
		for k := range 3 {
			tot[0][k] += o[k]
			tot[1][k] += p[k]
		}
		cases += row.cases
		ceded += row.ceded
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %s | %d | %d | %d | %d |\n\n", cases, tot[0][right], tot[0][refused], bold(tot[0][corrupt]), tot[1][right], tot[1][refused], tot[1][corrupt], ceded)
	for _, row := range r.rows {
		for _, s := range serverNames {
			if row.setup[s] > 0 {
				fmt.Fprintf(&b, "- %s: %s refused the correct setup edit in %d cases.\n", row.class.key, s, row.setup[s])
			}
		}
	}
	if rows := r.syntaxRows(); len(rows) > 0 {
		b.WriteString("\n### Edits that break the syntax\n\n" +
			"The text a model sends is itself wrong: it breaks the file's syntax where the intended change does not, so no server can write the intended file. " +
			"**without a word**: the broken text written and the reply says nothing of it; " +
			"**flagged**: the broken text written and the reply names the syntax errors: a non-empty `diagnostics` list in its structured content (at its top level or in one of its `changes`), " +
			"or the line hashline's text replies give them in (`Syntax: this edit introduced N errors ...`); " +
			"**refused**: refused with the file unchanged; **other**: any other file. " +
			"**strict_syntax**: the same calls to another `hashline mcp`, each `edit_file` with `strict_syntax: true`: refused with the file unchanged, or written. " +
			"Counted right: flagged or refused (the model is told); corrupt: without a word, or other.\n\n" +
			"| class | cases | ours without a word | ours flagged | ours refused | ours other | strict_syntax refused | strict_syntax written | peer without a word | peer flagged | peer refused | peer other |\n" +
			"|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		var tot [3]syntaxTally
		cases := 0
		for _, row := range rows {
			o, st, p := row.syn[ours], &row.strictSyn, row.syn[peerName]
			fmt.Fprintf(&b, "| %s | %d | %s | %d | %d | %s | %d | %s | %d | %d | %d | %d |\n", cell(row.class.name), row.cases,
				bold(o[silent]), o[flagged], o[refusedSyn], bold(o[otherSyn]), st[refusedSyn], bold(row.cases-st[refusedSyn]), p[silent], p[flagged], p[refusedSyn], p[otherSyn])
			for k := range len(o) {
				tot[0][k] += o[k]
				tot[1][k] += st[k]
				tot[2][k] += p[k]
			}
			cases += row.cases
		}
		fmt.Fprintf(&b, "| **all** | %d | %s | %d | %d | %s | %d | %s | %d | %d | %d | %d |\n\n", cases,
			bold(tot[0][silent]), tot[0][flagged], tot[0][refusedSyn], bold(tot[0][otherSyn]), tot[1][refusedSyn], bold(cases-tot[1][refusedSyn]), tot[2][silent], tot[2][flagged], tot[2][refusedSyn], tot[2][otherSyn])
		if row := r.byKey["control"]; row != nil && row.strictT != (tally{}) {
			fmt.Fprintf(&b, "The control class's correct edits sent with `strict_syntax`: %d of %d written as intended, %d refused, %d other.\n\n", row.strictT[right], row.cases, row.strictT[refused], row.strictT[corrupt])
		}
	}
	b.WriteString("### Reply sizes\n\n" +
		"Bytes of each JSON-RPC response's `result` (of its `error` where there is one) as the server sent it, the envelope aside; medians over the run's calls.\n\n" +
		"| reply | calls (ours / peer) | hashline mcp | peer |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| tools/list | 1 / 1 | %d | %d |\n", r.toolsList[ours], r.toolsList[peerName])
	for _, m := range []struct {
		what string
		v    map[string][]int
	}{
		{"read_file, whole file", r.reads},
		{"edit_file, applied, control class", r.controlEdits},
		{"edit_file, refused, every class", r.refusedEdits},
		{"edit_file, every mistaken call", r.edits},
	} {
		fmt.Fprintf(&b, "| %s | %d / %d | %d | %d |\n", m.what, len(m.v[ours]), len(m.v[peerName]), median(m.v[ours]), median(m.v[peerName]))
	}
	b.WriteString("\n### Targets\n\n| target | measured (ours vs peer) | met |\n|---|---|---|\n")
	for _, t := range r.targets() {
		met := "yes"
		if !t.met {
			met = "**no**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.what, t.measured, met)
	}
	if refusals := r.refusals(); refusals != "" {
		b.WriteString("\n### Our refusals where applying was right\n\n" +
			"Every case we refused where the intended edit was to be applied (the malformed classes aside): where the change is, the peer's outcome, " +
			"the call, and the first line of our refusal; above a class's cases, why refusing is right there.\n\n" + strings.TrimSuffix(refusals, "\n"))
	}
	return b.String()
}

// cell escapes the pipes of s for a table cell (code spans included).
func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func bold(n int) string {
	if n > 0 {
		return fmt.Sprintf("**%d**", n)
	}
	return "0"
}

// refusals lists, per class, the cases we refused where applying was
// right, under the class's note on them.
func (r *report) refusals() string {
	var b strings.Builder
	for _, row := range r.rows {
		if len(row.refusals) == 0 {
			continue
		}
		fmt.Fprintf(&b, "**%s** (%d of %d; the peer right in %d).", row.class.key, len(row.refusals), row.cases, row.ceded)
		if row.class.refusals != "" {
			b.WriteString(" " + row.class.refusals)
		}
		b.WriteString("\n\n")
		for _, f := range row.refusals {
			fmt.Fprintf(&b, "- %s, peer %s: %s: %s\n", f.src, f.peer, codeSpan(clip(f.call, 300)), clip(f.why, 240))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// codeSpan is s as a Markdown code span, fenced by more backticks than any
// run of them in s.
func codeSpan(s string) string {
	run, longest := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// text is what the run prints.
func (r *report) text() string {
	return strings.Join(r.env, "\n") + "\n\n" + r.tables()
}

// markdown is this program's section of BENCHMARKS.md, markers included.
func (r *report) markdown() string {
	var b strings.Builder
	b.WriteString(mdBegin + "\n<!-- Generated by `make bench-mistakes` (bench/bench-mistakes); edits here are overwritten. -->\n\n")
	b.WriteString("## Mistakes: `hashline mcp` and the peer\n\n" +
		"The mistakes models make in `edit_file` calls, each derived from a real one-hunk change (a local renamed in a few lines, a condition flipped, a number changed, a log line added, an entry added to a JSON object or array) " +
		"to a real file that is not this repository's, sent over MCP stdio by the same Go client to `hashline mcp` and to the published peer. One run; the corpus is generated from a fixed seed.\n\n")
	for _, e := range r.env {
		b.WriteString("- " + e + "\n")
	}
	b.WriteString("\n")
	b.WriteString(r.tables())
	b.WriteString("\n" + mdEnd + "\n")
	return b.String()
}

// writeSection replaces this program's section of file (or appends it, or
// creates the file), leaving the rest as it is.
func writeSection(file, sec string) error { return section.Write(file, mdBegin, mdEnd, sec) }
