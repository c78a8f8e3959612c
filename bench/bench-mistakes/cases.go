package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/syntax"
)

// A mcase is one mistake on one real change: the calls to make on a fresh
// copy of the file, after a read_file of it, and the file each outcome is
// judged by.
type mcase struct {
	class *class
	n     int
	src   string // where the change is: "go:net/http/server.go:120 (rename)"
	name  string // the file's name in each server's root
	orig  []byte // the file as it is written before the read
	pre   []byte // the file as it is before the mistaken calls (after setup)
	want  []byte // the intended result; pre where refusing is right
	// sent is the file with the mistaken text written as sent: for a class
	// whose mistake breaks the syntax, the broken file (nil for others).
	sent []byte
	// checks are tags the read must show ("LINE:HASH" by line): they
	// prove the corpus hashes lines as both servers do.
	checks map[int]string
	setup  []any // edits of correct edit_file calls made before the mistake
	calls  []any // edits of the mistaken edit_file calls
}

// expectation is what a class counts as right.
type expectation int

const (
	// expectApply: the file is the intended result. A refusal with the
	// file unchanged is counted apart, as refused.
	expectApply expectation = iota
	// expectRefuse: every call is refused and the file is unchanged.
	expectRefuse
)

// A class is one kind of mistake (or the control), derived from a change.
type class struct {
	key, name string
	expect    expectation
	// refusalOK: a refusal is an acceptable answer, not a loss (the
	// arguments are malformed, so applying them is a guess).
	refusalOK bool
	goOnly    bool // Go files only (tab-indented)
	tsOnly    bool // TypeScript files only (where block comments are)
	jsonOnly  bool // JSON files only
	insert    bool // derived from an insertion, not a replacement
	// broken: the mistaken text breaks the file's syntax where the intended
	// one does not (an unclosed bracket, a lost closing line). No server
	// can know the intended text; these classes count apart how often each
	// writes the broken file without a word, flags it, or refuses it.
	broken bool
	// changes, if set, lists the changes of a source this class derives
	// from, in place of candidates (the edits it needs are of other kinds).
	changes func(src *source, rng *rand.Rand) []change
	fits    func(b *builder) bool
	derive  func(b *builder)
	// refusals says why the edits of this class that hashline refuses,
	// where applying was right, are still refused: what the file leaves
	// ambiguous, with a reading that a guess would write wrong. The report
	// prints it above the class's refused cases.
	refusals string
}

// A builder derives one case from a change: edits to send, the file before
// and after.
type builder struct {
	src   *source
	c     change
	n     int // the case's number in its class
	rng   *rand.Rand
	pre   []string
	want  []string
	setup []any
	calls []any
	refs  map[int]string
	// sent is the file with the mistaken text as sent, set by broken
	// classes.
	sent []string
}

func hashOf(s string) string { return hashline.Hasher{}.Sum(s) }

// ref is the tag of line n (1-based) of the file as read, remembered as a
// check on the read.
func (b *builder) ref(n int) string {
	r := fmt.Sprintf("%d:%s", n, hashOf(b.src.lines[n-1]))
	b.refs[n] = r
	return r
}

// item is the change as one edit item in the published shapes, with text
// as its new lines: insert_after for an insertion, set_line for one line,
// replace_lines for a range.
func (b *builder) item(text []string) map[string]any {
	t := strings.Join(text, "\n")
	switch {
	case b.c.insert:
		return map[string]any{"insert_after": map[string]any{"anchor": b.ref(b.c.start), "text": t}}
	case b.c.start == b.c.end:
		return map[string]any{"set_line": map[string]any{"anchor": b.ref(b.c.start), "new_text": t}}
	default:
		return map[string]any{"replace_lines": map[string]any{"start_anchor": b.ref(b.c.start), "end_anchor": b.ref(b.c.end), "new_text": t}}
	}
}

// send makes the mistaken call with edits [item(text)].
func (b *builder) send(text []string) { b.calls = append(b.calls, []any{b.item(text)}) }

// op is the one operation object of an item.
func op(item map[string]any) (string, map[string]any) {
	for k, v := range item {
		return k, v.(map[string]any)
	}
	panic("empty edit item")
}

func mapLines(ls []string, f func(int, string) string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = f(i, l)
	}
	return out
}

func prefixed(p string, ls []string) []string {
	return mapLines(ls, func(_ int, l string) string { return p + l })
}

// indents counts the distinct indentations of the non-blank lines, and
// returns the longest prefix they share.
func indents(ls []string) (int, string) {
	seen := map[string]bool{}
	common := ""
	first := true
	for _, l := range ls {
		if blank(l) {
			continue
		}
		ind := indentOf(l)
		seen[ind] = true
		if first {
			common, first = ind, false
			continue
		}
		for !strings.HasPrefix(ind, common) {
			common = common[:len(common)-1]
		}
	}
	return len(seen), common
}

// classes are the rows of the report, in order.
var classes = []*class{
	{key: "control", name: "control: right tags, right text", derive: func(b *builder) { b.send(b.c.text) }},
	{key: "prefix", name: "`LINE:HASH|` pasted on the new lines", derive: func(b *builder) {
		old := b.c.old(b.src.lines)
		b.send(mapLines(b.c.text, func(i int, l string) string {
			// A model edits the tagged lines it read; lines beyond the old
			// range get tags in the same style.
			if i < len(old) {
				return fmt.Sprintf("%d:%s|%s", b.c.start+i, hashOf(old[i]), l)
			}
			return fmt.Sprintf("%d:%s|%s", b.c.start+i, hashOf(l), l)
		}))
	}},
	{key: "diff-plus", name: "diff markers: `+` on the new lines", derive: func(b *builder) { b.send(prefixed("+", b.c.text)) }},
	{key: "diff-minus-plus", name: "diff markers: `-old` lines, then `+new`", derive: func(b *builder) {
		b.send(append(prefixed("-", b.c.old(b.src.lines)), prefixed("+", b.c.text)...))
	}},
	{key: "diff-minus", name: "diff markers: `-old` lines, then the new lines bare", derive: func(b *builder) {
		b.send(append(prefixed("-", b.c.old(b.src.lines)), b.c.text...))
	}},
	{key: "echo-before", name: "boundary echo: the line before the range first", fits: func(b *builder) bool {
		return b.c.start > 1 && !blank(b.src.lines[b.c.start-2]) && squeeze(b.c.text[0]) != squeeze(b.src.lines[b.c.start-2])
	}, derive: func(b *builder) { b.send(append([]string{b.src.lines[b.c.start-2]}, b.c.text...)) }, refusals: echoRefusals},
	{key: "echo-after", name: "boundary echo: the line after the range last", fits: func(b *builder) bool {
		return b.c.end < len(b.src.lines) && !blank(b.src.lines[b.c.end]) && squeeze(b.c.text[len(b.c.text)-1]) != squeeze(b.src.lines[b.c.end])
	}, derive: func(b *builder) { b.send(append(b.c.text, b.src.lines[b.c.end])) }, refusals: echoRefusals},
	{key: "echo-insert", name: "boundary echo: insert_after repeating its anchor line", insert: true, fits: func(b *builder) bool {
		return squeeze(b.c.text[0]) != squeeze(b.src.lines[b.c.start-1])
	}, derive: func(b *builder) { b.send(append([]string{b.src.lines[b.c.start-1]}, b.c.text...)) }},
	{key: "indent-flat", name: "lost indentation: every new line flush left", fits: func(b *builder) bool {
		_, common := indents(b.c.text)
		return common != ""
	}, derive: func(b *builder) {
		b.send(mapLines(b.c.text, func(_ int, l string) string { return strings.TrimLeft(l, " \t") }))
	}},
	{key: "indent-dedent", name: "lost indentation: the block's indentation dropped, nesting kept", fits: func(b *builder) bool {
		n, common := indents(b.c.text)
		return n > 1 && common != ""
	}, derive: func(b *builder) {
		_, common := indents(b.c.text)
		b.send(mapLines(b.c.text, func(_ int, l string) string { return strings.TrimPrefix(l, common) }))
	}},
	{key: "tab-literal", name: "literal `\\t` for the leading tabs (Go)", goOnly: true, fits: func(b *builder) bool {
		for _, l := range b.c.text {
			if strings.HasPrefix(l, "\t") {
				return true
			}
		}
		return false
	}, derive: func(b *builder) {
		b.send(mapLines(b.c.text, func(_ int, l string) string {
			t := strings.TrimLeft(l, "\t")
			return strings.Repeat(`\t`, len(l)-len(t)) + t
		}))
	}},
	{key: "stale-numbers", name: "insert near the top, then edit with the tags read before it", fits: func(b *builder) bool {
		return b.c.start >= 15 && topAnchor(b) > 0
	}, derive: func(b *builder) {
		a := topAnchor(b)
		ins := change{insert: true, start: a, end: a - 1}
		for k := range 1 + b.rng.IntN(3) {
			ins.text = append(ins.text, fmt.Sprintf("// hashline: note %d", k+1))
		}
		b.setup = append(b.setup, []any{map[string]any{"insert_after": map[string]any{"anchor": b.ref(a), "text": strings.Join(ins.text, "\n")}}})
		b.pre = ins.apply(b.src.lines)
		moved := b.c
		moved.start += len(ins.text)
		moved.end += len(ins.text)
		b.want = moved.apply(b.pre)
		b.send(b.c.text)
	}, refusals: "A tag read before the insert is taken when it names one line of what the model was shown, its own insert counted or not. " +
		"It is refused when its number and hash name one line of the version read and another of the version the insert made " +
		"(the file repeats the line as many lines apart as were inserted above it): the model may have counted its insert or not, " +
		"and the edit goes to a different place either way."},
	{key: "wrong-hash", name: "wrong hash: a random one (refusing is right)", expect: expectRefuse, derive: func(b *builder) {
		it := b.item(b.c.text)
		_, o := op(it)
		field := "anchor"
		if _, ok := o["start_anchor"]; ok {
			field = []string{"start_anchor", "end_anchor"}[b.n%2]
		}
		ref := o[field].(string)
		line, good, _ := strings.Cut(ref, ":")
		bad := good
		for bad == good {
			bad = fmt.Sprintf("%02x", b.rng.IntN(256))
		}
		o[field] = line + ":" + bad
		b.calls = append(b.calls, []any{it})
	}},
	{key: "wrong-hash-neighbour", name: "wrong hash: the next line's (refusing is right)", expect: expectRefuse, fits: func(b *builder) bool {
		return b.c.start < len(b.src.lines) && hashOf(b.src.lines[b.c.start]) != hashOf(b.src.lines[b.c.start-1])
	}, derive: func(b *builder) {
		it := b.item(b.c.text)
		name, o := op(it)
		field := "anchor"
		if name == "replace_lines" {
			field = "start_anchor"
		}
		o[field] = fmt.Sprintf("%d:%s", b.c.start, hashOf(b.src.lines[b.c.start]))
		b.calls = append(b.calls, []any{it})
	}},
	{key: "noop-twice", name: "repeated no-op: the text already there, sent twice (refusing is right)", expect: expectRefuse, derive: func(b *builder) {
		b.send(b.c.old(b.src.lines))
		b.send(b.c.old(b.src.lines))
	}},
	{key: "malformed-object", name: "malformed: one edit object, not an array", refusalOK: true, derive: func(b *builder) {
		b.calls = append(b.calls, b.item(b.c.text))
	}},
	{key: "malformed-string", name: "malformed: edits as a JSON string", refusalOK: true, derive: func(b *builder) {
		s, err := json.Marshal([]any{b.item(b.c.text)})
		if err != nil {
			panic(err)
		}
		b.calls = append(b.calls, string(s))
	}},
	{key: "malformed-op", name: "malformed: a misspelt operation name", refusalOK: true, derive: func(b *builder) {
		it := b.item(b.c.text)
		name, o := op(it)
		spelt := map[string][2]string{"set_line": {"setLine", "set-line"}, "replace_lines": {"replaceLines", "replace_line"}}[name][b.n%2]
		b.calls = append(b.calls, []any{map[string]any{spelt: o}})
	}},
	{key: "malformed-missing", name: "malformed: new_text or the anchor missing", refusalOK: true, derive: func(b *builder) {
		it := b.item(b.c.text)
		name, o := op(it)
		switch {
		case b.n%2 == 0:
			delete(o, "new_text")
		case name == "set_line":
			delete(o, "anchor")
		default:
			delete(o, "start_anchor")
		}
		b.calls = append(b.calls, []any{it})
	}},
	{key: "malformed-no-end", name: "malformed: a range's end_anchor missing", refusalOK: true, fits: func(b *builder) bool {
		return b.c.end > b.c.start
	}, derive: func(b *builder) {
		it := b.item(b.c.text)
		_, o := op(it)
		delete(o, "end_anchor")
		b.calls = append(b.calls, []any{it})
	}},
	// The classes below came after the ones above; each class's cases
	// depend on its place in this list (its seed), so new ones go last.
	{key: "diff-plus-one", name: "diff markers: `+` on a one-line replacement at column 0", fits: func(b *builder) bool {
		return b.c.start == b.c.end && len(b.c.text) == 1 && indentOf(b.c.text[0]) == "" && indentOf(b.src.lines[b.c.start-1]) == ""
	}, derive: func(b *builder) { b.send(prefixed("+", b.c.text)) }, refusals: plusRefusals},
	{key: "echo-comment", name: "boundary echo: a doc comment's `*/` before the range, or `/**` after it", tsOnly: true, fits: func(b *builder) bool {
		return commentBefore(b) || commentAfter(b)
	}, derive: func(b *builder) {
		if commentBefore(b) {
			b.send(append([]string{b.src.lines[b.c.start-2]}, b.c.text...))
			return
		}
		b.send(append(slices.Clone(b.c.text), b.src.lines[b.c.end]))
	}},
	{key: "indent-blank", name: "lost indentation: a blank line replaced by a line flush left", changes: blankLines, derive: func(b *builder) {
		b.send(mapLines(b.c.text, func(_ int, l string) string { return strings.TrimLeft(l, " \t") }))
	}},
	{key: "break-bracket", name: "breaks the syntax: an unclosed bracket", broken: true, changes: logLines, derive: func(b *builder) {
		text := slices.Clone(b.c.text)
		last := text[len(text)-1]
		k := strings.LastIndex(last, ")")
		text[len(text)-1] = last[:k] + last[k+1:]
		b.send(text)
		b.sent = (change{start: b.c.start, end: b.c.end, text: text}).apply(b.src.lines)
	}},
	{key: "break-closing", name: "breaks the syntax: a lost closing line", broken: true, changes: closingLines, derive: func(b *builder) {
		text := b.c.text[:len(b.c.text)-1]
		b.send(text)
		b.sent = (change{start: b.c.start, end: b.c.end, text: text}).apply(b.src.lines)
	}},
	{key: "break-json-comma", name: "breaks the syntax (JSON): an entry added after the last, its comma forgotten", broken: true, jsonOnly: true, changes: jsonAppended, fits: func(b *builder) bool {
		return breaksJSON(b.c.apply(b.src.lines), jsonCommaLost(b).apply(b.src.lines))
	}, derive: func(b *builder) {
		c := jsonCommaLost(b)
		b.calls = append(b.calls, []any{map[string]any{"insert_after": map[string]any{"anchor": b.ref(c.start), "text": strings.Join(c.text, "\n")}}})
		b.sent = c.apply(b.src.lines)
	}},
	{key: "break-json-closing", name: "breaks the syntax (JSON): a lost closing line", broken: true, jsonOnly: true, changes: jsonClosed, fits: func(b *builder) bool {
		return breaksJSON(b.c.apply(b.src.lines), b.c.withText(b.c.text[:len(b.c.text)-1]).apply(b.src.lines))
	}, derive: func(b *builder) {
		text := b.c.text[:len(b.c.text)-1]
		b.send(text)
		b.sent = b.c.withText(text).apply(b.src.lines)
	}},
	{key: "break-json-bracket", name: "breaks the syntax (JSON): an unclosed bracket", broken: true, jsonOnly: true, changes: jsonInline, fits: func(b *builder) bool {
		return breaksJSON(b.c.apply(b.src.lines), b.c.withText(lostBracket(b.c.text)).apply(b.src.lines))
	}, derive: func(b *builder) {
		text := lostBracket(b.c.text)
		b.send(text)
		b.sent = b.c.withText(text).apply(b.src.lines)
	}},
}

// jsonCommaLost is b's change as a model that forgets the comma sends it:
// the new entry inserted after the last one, which is left as it was.
func jsonCommaLost(b *builder) change {
	return change{kind: b.c.kind, insert: true, start: b.c.start, end: b.c.start - 1, text: b.c.text[1:]}
}

// lostBracket is text with the last closing bracket of its last line
// removed.
func lostBracket(text []string) []string {
	out := slices.Clone(text)
	last := out[len(out)-1]
	k := strings.LastIndexAny(last, ")]}")
	out[len(out)-1] = last[:k] + last[k+1:]
	return out
}

// commentBefore: the line before the change closes a block comment alone.
func commentBefore(b *builder) bool {
	return b.c.start > 1 && strings.TrimSpace(b.src.lines[b.c.start-2]) == "*/" && squeeze(b.c.text[0]) != "*/"
}

// commentAfter: the line after the change opens a doc comment alone.
func commentAfter(b *builder) bool {
	return b.c.end < len(b.src.lines) && slices.Contains([]string{"/**", "/*"}, strings.TrimSpace(b.src.lines[b.c.end])) &&
		!strings.HasPrefix(strings.TrimSpace(b.c.text[len(b.c.text)-1]), "/*")
}

// blankLines: a blank line inside a block, between two code lines indented
// alike, replaced by a log line at their indentation.
func blankLines(src *source, rng *rand.Rand) []change {
	var out []change
	if src.decl {
		return nil
	}
	for i := 1; i+1 < len(src.lines); i++ {
		ind := indentOf(src.lines[i-1])
		if src.lines[i] != "" || ind == "" || !src.isCode(i-1) || !src.isCode(i+1) || indentOf(src.lines[i+1]) != ind {
			continue
		}
		out = append(out, change{kind: "log line for a blank line", start: i + 1, end: i + 1, text: []string{logLine(src, ind, i+1)}})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// logLines: the log line added after a statement (logAfter), alone.
func logLines(src *source, rng *rand.Rand) []change {
	var out []change
	if src.decl {
		return nil
	}
	for i := range src.lines {
		if !src.isCode(i) {
			continue
		}
		if c, ok := logAfter(src, i, rng); ok {
			out = append(out, c)
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// closers are the lines that only close a block (not an argument list,
// an array or a Go declaration group, where no statement can go).
var closers = []string{"}", "})", "});", "};", "},"}

// closingLines: a log line added after the last statement of a block,
// as a replacement of the statement and the block's closing line, which
// the text repeats.
func closingLines(src *source, rng *rand.Rand) []change {
	var out []change
	if src.decl {
		return nil
	}
	ls := src.lines
	for i := 0; i+1 < len(ls); i++ {
		l, next := ls[i], ls[i+1]
		ind := indentOf(l)
		// A TypeScript statement ends with ";" here: a line ending in ")"
		// before a "}" may be an object literal's last property.
		if ind == "" || !src.isCode(i) || !slices.Contains(closers, strings.TrimSpace(next)) || len(indentOf(next)) >= len(ind) ||
			!(src.lang == "go" && strings.HasSuffix(l, ")") || strings.HasSuffix(l, ");")) {
			continue
		}
		out = append(out, change{kind: "log line before a block's end", start: i + 1, end: i + 2, text: []string{l, logLine(src, ind, i+1), next}})
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// echoRefusals is why the echo classes' refusals are right (see
// hashline's echoes).
const echoRefusals = "A first line that repeats the line before the range (a last line, the line after it) is dropped when the brackets say it is an echo, " +
	"or, for a line with a word, when the text is longer than its range. Two shapes are refused, each with two readings a model could mean. " +
	"Every line of the text repeats a line beside a one-line range: `'1': true,` then `'3': true,` sent for the `'2': true,` between those two lines, changed to `'3'`; " +
	"dropping the first line writes `'1' '3' '3'`, dropping the last `'1' '1' '3'`, and only brackets could tell which. " +
	"Or the repeated line is also the range's own line at that end: the text may echo the line beside the range, or keep the range's line and add lines next to it."

// plusRefusals is why diff-plus-one's refusals are right (see hashline's
// diffMarkers).
const plusRefusals = "A lone `+` line is stripped as a diff's marker only on the file's evidence: indentation like the file's after the `+` (`+\\treturn 2`); " +
	"or, at column 0, the replaced line's first name, keyword or closing bracket with the rest changed (`+const n = 33` for `const n = 32`); " +
	"or the replaced line changed within its shape (`+251 SMTPUTF8` for `250 SMTPUTF8`) among lines that start as it does; " +
	"and in each case no line within 20 lines of the edit starting with `+`, nor one anywhere going on as the text does after its `+`, and no diff hunk around the edit. Anything else may be meant as sent. " +
	"A `+` before a digit, a space or an opening bracket begins content as often as a marker where nothing beside the line says otherwise: " +
	"`+1 555 0100` for a lone `1 555 0199` under a heading may be a phone number made international, `+172` a signed number, and `+` is a base64 digit. " +
	"Where lines near the edit start with `+` (a base64 block, a changelog's `+Added ...` entries), they are its content, " +
	"whatever the word after the `+`. Stripping every lone `+`, as the peer does, writes each of those wrong; " +
	"the refusal shows both readings, and the text resent without the `+` applies."

// topAnchor is where stale-numbers inserts: the last non-blank line among
// the file's first ten, at least three lines above the change; 0 if none.
func topAnchor(b *builder) int {
	for n := min(10, b.c.start-3); n >= 1; n-- {
		if !blank(b.src.lines[n-1]) {
			return n
		}
	}
	return 0
}

// generate builds perClass cases of every class from the files of paths,
// alternating Go and TypeScript, each from a different file within its
// class. The same paths, perClass and seed give the same cases.
func generate(paths map[string][]entry, perClass int, seed uint64) ([]*mcase, error) {
	loaded := map[string]*source{}
	load := func(e entry) *source {
		if s, ok := loaded[e.path]; ok {
			return s
		}
		s := loadSource(e)
		loaded[e.path] = s
		return s
	}
	var out []*mcase
	for ci, cl := range classes {
		rng := rand.New(rand.NewPCG(seed, uint64(ci)))
		used := map[string]bool{}
		for n := range perClass {
			lang := []string{"go", "ts"}[n%2]
			if cl.goOnly {
				lang = "go"
			}
			if cl.tsOnly {
				lang = "ts"
			}
			if cl.jsonOnly {
				lang = "json"
			}
			pool := paths[lang]
			if len(pool) == 0 {
				return nil, fmt.Errorf("no %s files to take changes from", lang)
			}
			var mc *mcase
			for attempt := 0; mc == nil; attempt++ {
				if attempt == 5000 {
					return nil, fmt.Errorf("class %s: no %s file has a change that fits (tried %d)", cl.key, lang, attempt)
				}
				e := pool[rng.IntN(len(pool))]
				src := load(e)
				if src == nil || used[e.path] {
					continue
				}
				var cs []change
				if cl.changes != nil {
					cs = cl.changes(src, rng)
				} else {
					cs = candidates(src, rng, cl.insert)
				}
				for _, c := range cs {
					b := &builder{src: src, c: c, n: n, rng: rng, refs: map[int]string{}}
					if cl.fits != nil && !cl.fits(b) || !intendedParses(e, src, c) {
						continue
					}
					mc = build(cl, n, e, b)
					used[e.path] = true
					break
				}
			}
			out = append(out, mc)
		}
	}
	return out, nil
}

// intendedParses reports whether c, applied to src, introduces no syntax
// error: the intended change is one a model could mean, and the same
// edit sent with strict_syntax must be written. The shapes the changes
// look for do not see every enclosing block, such as a Go var group or
// interface, whose lines end in ")" as statements do.
func intendedParses(e entry, src *source, c change) bool {
	rep := syntax.Check(e.rel, []byte(src.text), join(c.apply(src.lines)), syntax.Options{})
	return len(rep.Diagnostics) == 0
}

// build derives the case of class cl from b's change.
func build(cl *class, n int, e entry, b *builder) *mcase {
	b.pre = b.src.lines
	b.want = b.c.apply(b.src.lines)
	cl.derive(b)
	mc := &mcase{
		class:  cl,
		n:      n,
		src:    fmt.Sprintf("%s:%d (%s)", b.src.rel, b.c.start, b.c.kind),
		name:   fmt.Sprintf("%s-%02d-%s", cl.key, n, path.Base(e.rel)),
		orig:   join(b.src.lines),
		pre:    join(b.pre),
		want:   join(b.want),
		checks: b.refs,
		setup:  b.setup,
		calls:  b.calls,
	}
	if cl.expect == expectRefuse {
		mc.want = mc.pre
	}
	if b.sent != nil {
		mc.sent = join(b.sent)
	}
	return mc
}
