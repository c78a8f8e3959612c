// Package editjson reads the edit batches models write as JSON, in a
// vocabulary of operations: the MCP tool's (set_line, replace_lines, ...)
// or the API's (replace, insertAfter, ...).
//
// Malformed arguments are a large share of the failures models hit: a
// missing or extra property, edits that are not an array, a wrong operation
// name. Shapes whose intent is unambiguous are accepted, each with a
// warning that shows the right shape: one edit object where an array is
// expected, an array sent as a JSON string, an end that names the same
// line as a one-line operation's line. Everything else is refused with a
// message per bad item that names what is wrong and shows the expected
// shape of the operation the model evidently meant ("did you mean
// replace_lines? expected {...}").
//
// The package decodes nothing itself but a JSON string sent in place of an
// array: callers hand it the value their JSON decoder produced (maps,
// slices, strings, bools, numbers).
package editjson

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Kind is the JSON type of a field's value.
type Kind int

// The kinds of field values.
const (
	String Kind = iota
	Bool
)

// Field is one field of an operation's object.
type Field struct {
	// Name is the field's name in expected shapes.
	Name string
	// Aliases are other exact spellings accepted, such as the API's proto
	// names ("old_text" beside "oldText").
	Aliases []string
	// Kind is the type of its value.
	Kind Kind
	// Required fields must be given.
	Required bool
	// Example is the JSON value shown in expected shapes, such as
	// `"LINE:HASH"`.
	Example string
	// Near are names models use for this field, suggested as it: "text"
	// for set_line's new_text.
	Near []string
}

// Op is an operation: the key of an edit item, whose value is an object
// of Fields.
type Op struct {
	// Name is the operation's key.
	Name string
	// Aliases are other exact spellings accepted.
	Aliases []string
	// Fields are the fields of its object, in the order shapes show them.
	Fields []Field
	// Near are names of this operation in other vocabularies, suggested
	// as it when an item uses one.
	Near []string
	// Line names the field that holds a one-line operation's line (its
	// anchor). An end given beside it (EndNames) that names the same line
	// is accepted with a warning; one that names another line is refused,
	// pointing at Range.
	Line string
	// Range is the operation to use for a range of lines, for Line
	// operations.
	Range string
}

// EndNames are the fields a model gives as a range's bounds, accepted
// beside a one-line operation's line when they name the same line.
var EndNames = []string{"start", "start_anchor", "start_line", "startAnchor", "end", "end_anchor", "end_line", "endAnchor"}

// Vocabulary is a set of operations.
type Vocabulary struct {
	Ops []Op
}

// Item is one decoded edit.
type Item struct {
	// Op is the operation's Name.
	Op string
	// Values holds the fields given, by Field.Name: a string or a bool.
	Values map[string]any
}

// String returns the string field name, "" if absent.
func (it Item) String(name string) string {
	s, _ := it.Values[name].(string)
	return s
}

// Bool returns the bool field name, false if absent.
func (it Item) Bool(name string) bool {
	b, _ := it.Values[name].(bool)
	return b
}

// Error lists the problems of a refused batch, one a line, each starting
// with the item it is about ("edits[2]").
type Error struct {
	Problems []string
}

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }

// Decode reads edits, the decoded JSON value of a batch: an array of items
// (or, with a warning, one item, or a string holding either). It returns
// the items, and a warning per shape it accepted that it should not have
// had to; or an *Error naming every bad item. An empty array gives no
// items and no error: what an empty batch means is the caller's to say.
func (v *Vocabulary) Decode(edits any) ([]Item, []string, error) {
	var warnings []string
	if s, ok := edits.(string); ok {
		t := strings.TrimSpace(s)
		if !strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "{") {
			return nil, nil, &Error{Problems: []string{"edits is a string, not an array of edit objects; send " + v.example(true)}}
		}
		var inner any
		if err := json.Unmarshal([]byte(t), &inner); err != nil {
			return nil, nil, &Error{Problems: []string{fmt.Sprintf("edits is a string, not an array of edit objects, and not valid JSON either (%v); send the array itself: %s", err, v.example(true))}}
		}
		warnings = append(warnings, `edits was sent as a string holding JSON; it was decoded, but send the array itself: "edits": [{...}, ...], not "edits": "[{...}]"`)
		edits = inner
	}
	var list []any
	switch e := edits.(type) {
	case []any:
		list = e
	case map[string]any:
		warnings = append(warnings, `edits was one edit object, not an array; it was taken as a batch of that one edit: send "edits": [{...}]`)
		list = []any{e}
	default:
		return nil, nil, &Error{Problems: []string{fmt.Sprintf("edits is %s, not an array of edit objects; send %s", describe(edits), v.example(true))}}
	}
	var items []Item
	var problems []string
	for i, raw := range list {
		it, warn, problem := v.item(i, raw)
		warnings = append(warnings, warn...)
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		items = append(items, it)
	}
	if len(problems) > 0 {
		return nil, nil, &Error{Problems: problems}
	}
	return items, warnings, nil
}

// example is an example batch in this vocabulary: its first operation.
func (v *Vocabulary) example(array bool) string {
	s := v.Ops[0].shape()
	if array {
		return "[" + s + "]"
	}
	return s
}

// item reads item i of a batch.
func (v *Vocabulary) item(i int, raw any) (Item, []string, string) {
	at := fmt.Sprintf("edits[%d]", i)
	m, ok := raw.(map[string]any)
	if !ok {
		return Item{}, nil, fmt.Sprintf("%s is %s; each edit is an object holding one operation, e.g. %s", at, describe(raw), v.example(false))
	}
	// Operations in the vocabulary's order, other keys sorted.
	var ops []*Op
	var opKeys, others []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if v.op(k) == nil {
			others = append(others, k)
		}
	}
	for i := range v.Ops {
		o := &v.Ops[i]
		for _, k := range slices.Concat([]string{o.Name}, o.Aliases) {
			if _, ok := m[k]; ok {
				ops = append(ops, o)
				opKeys = append(opKeys, k)
			}
		}
	}
	switch {
	case len(ops) > 1:
		return Item{}, nil, fmt.Sprintf("%s has %d operations (%s); put each in its own item", at, len(ops), strings.Join(opKeys, ", "))
	case len(ops) == 1 && len(others) > 0:
		return Item{}, nil, v.besideOp(at, ops[0], opKeys[0], others)
	case len(ops) == 0:
		return Item{}, nil, v.noOp(at, m, others)
	}
	return v.fields(at, ops[0], opKeys[0], m[opKeys[0]])
}

// op returns the operation named exactly key, or nil.
func (v *Vocabulary) op(key string) *Op {
	for i := range v.Ops {
		if o := &v.Ops[i]; o.Name == key || slices.Contains(o.Aliases, key) {
			return o
		}
	}
	return nil
}

// besideOp explains an item with an operation and other keys: a field put
// beside its operation instead of in it, or a second operation misspelt.
// Applying the good operation alone would change the file in a way nobody
// asked for.
func (v *Vocabulary) besideOp(at string, op *Op, key string, others []string) string {
	var fields []string
	for _, k := range others {
		if op.field(k) != nil {
			fields = append(fields, k)
		}
	}
	msg := fmt.Sprintf("%s has %s and unknown keys [%s]; an item holds exactly one of: %s, and nothing else.", at, key, strings.Join(others, ", "), v.names())
	if len(fields) > 0 {
		return msg + fmt.Sprintf(" An operation's fields go inside its object: expected %s", op.shape())
	}
	if guess := v.guessOps(others[0]); len(guess) > 0 {
		return msg + fmt.Sprintf(" Did you mean %s? Put each operation in its own item.", orNames(guess))
	}
	return msg
}

// noOp explains an item without an operation: a misspelt operation, or an
// operation's fields without the operation around them.
func (v *Vocabulary) noOp(at string, m map[string]any, keys []string) string {
	if len(keys) == 0 {
		return fmt.Sprintf("%s is empty; it must contain one of: %s, e.g. %s", at, v.names(), v.example(false))
	}
	// Fields without their operation: the operations that have them all.
	var fits []*Op
	for i := range v.Ops {
		o := &v.Ops[i]
		if !slices.ContainsFunc(keys, func(k string) bool { return o.field(k) == nil }) {
			fits = append(fits, o)
		}
	}
	if len(fits) > 0 {
		return fmt.Sprintf("%s has the fields [%s] but no operation around them; wrap them: %s", at, strings.Join(keys, ", "), shapes(fits))
	}
	if len(keys) == 1 {
		if guess := v.guessOps(keys[0]); len(guess) > 0 {
			return fmt.Sprintf("%s: unknown operation %q; did you mean %s? Expected %s", at, keys[0], orNames(guess), shapes(guess))
		}
	}
	return fmt.Sprintf("%s must contain one of: %s; got keys [%s]. Each item is one operation, e.g. %s", at, v.names(), strings.Join(keys, ", "), v.example(false))
}

// fields reads the object of operation op (given under key).
func (v *Vocabulary) fields(at string, op *Op, key string, raw any) (Item, []string, string) {
	at += "." + key
	obj, ok := raw.(map[string]any)
	if !ok {
		return Item{}, nil, fmt.Sprintf("%s is %s, not an object; expected %s", at, describe(raw), op.shape())
	}
	keys := slices.Sorted(maps.Keys(obj))
	// Bounds given a one-line operation: beside its line, or two of them
	// without it. One alone in place of the line is a misspelt field.
	lines := map[string]string{}
	if op.Line != "" {
		for _, k := range keys {
			if s, ok := obj[k].(string); ok && op.field(k) == nil && slices.Contains(EndNames, k) {
				lines[k] = s
			}
		}
		if !slices.ContainsFunc(keys, func(k string) bool { return op.field(k) == op.field(op.Line) }) && len(lines) < 2 {
			lines = nil
		}
	}
	var unknown []string
	for _, k := range keys {
		if _, bound := lines[k]; !bound && op.field(k) == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		// Fields of another operation: the model mixed up operations.
		if other := v.fieldsOf(keys); other != nil && other != op {
			return Item{}, nil, fmt.Sprintf("%s: %s takes no %s, which %s takes. Did you mean %s? Expected %s",
				at, op.Name, strings.Join(unknown, ", "), other.Name, other.Name, other.shape())
		}
	}
	it := Item{Op: op.Name, Values: map[string]any{}}
	var problems, warnings []string
	given := map[string]bool{} // fields given, with a value of the right type or not
	for _, k := range keys {
		f, val := op.field(k), obj[k]
		if f == nil || (val == nil && !f.Required) {
			continue // unknown, or an optional field sent as null: absent
		}
		given[f.Name] = true
		switch f.Kind {
		case String:
			s, ok := val.(string)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s must be a string like %s, not %s", k, f.Example, describe(val)))
				continue
			}
			it.Values[f.Name] = s
		case Bool:
			b, ok := val.(bool)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s must be true or false, not %s", k, describe(val)))
				continue
			}
			it.Values[f.Name] = b
		}
	}
	if len(lines) > 0 {
		w, p := op.oneLine(at, it, lines, v.op(op.Range))
		warnings = append(warnings, w...)
		problems = append(problems, p...)
	}
	for _, k := range unknown {
		if f := op.guessField(k); f != nil {
			problems = append(problems, fmt.Sprintf("unknown key %q (did you mean %s?)", k, f.Name))
		} else {
			problems = append(problems, fmt.Sprintf("unknown key %q", k))
		}
	}
	var missing []string
	for _, f := range op.Fields {
		if f.Required && !given[f.Name] && !(f.Name == op.Line && len(lines) > 0) {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "missing "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		return Item{}, nil, fmt.Sprintf("%s: %s. Expected %s", at, strings.Join(problems, "; "), op.shape())
	}
	return it, warnings, ""
}

// oneLine takes the bounds a model gave a one-line operation (lines, by
// key): naming the same line as the operation's line, they are that line;
// naming others, they ask for the range operation.
func (op *Op) oneLine(at string, it Item, lines map[string]string, rangeOp *Op) (warnings, problems []string) {
	keys := slices.Sorted(maps.Keys(lines))
	line, have := it.Values[op.Line].(string)
	if !have {
		line = lines[keys[0]]
	}
	for _, k := range keys {
		if sameLine(lines[k], line) {
			continue
		}
		p := fmt.Sprintf("%s is %q but %s is %q, and %s changes one line", k, lines[k], op.Line, line, op.Name)
		if !have {
			p = fmt.Sprintf("%s name lines %s, and %s changes one line", strings.Join(keys, " and "), quoteAll(lines, keys), op.Name)
		}
		if rangeOp != nil {
			p += fmt.Sprintf("; for a range use %s: %s", rangeOp.Name, rangeOp.shape())
		}
		return nil, []string{p}
	}
	it.Values[op.Line] = line
	var what string
	switch {
	case !have:
		what = fmt.Sprintf("%s name one line, taken as %s", strings.Join(keys, " and "), op.Line)
	case len(keys) == 1:
		what = fmt.Sprintf("%s names the same line as %s, so it was ignored", keys[0], op.Line)
	default:
		what = fmt.Sprintf("%s name the same line as %s, so they were ignored", strings.Join(keys, " and "), op.Line)
	}
	return []string{fmt.Sprintf("%s: %s; %s takes %s", at, what, op.Name, op.shape())}, nil
}

func quoteAll(m map[string]string, keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = fmt.Sprintf("%q", m[k])
	}
	return strings.Join(q, " and ")
}

// sameLine reports whether two refs name the same line the way the server
// reads them: spaces, case and a pasted line's content aside.
func sameLine(a, b string) bool {
	norm := func(s string) string {
		s, _, _ = strings.Cut(s, "|")
		return strings.ToLower(strings.TrimSpace(s))
	}
	return norm(a) == norm(b)
}

// field returns the field of op named exactly key, or nil.
func (op *Op) field(key string) *Field {
	for i := range op.Fields {
		if f := &op.Fields[i]; f.Name == key || slices.Contains(f.Aliases, key) {
			return f
		}
	}
	return nil
}

// guessField returns the field of op that key most likely means, or nil.
func (op *Op) guessField(key string) *Field {
	var best *Field
	bestScore := 0
	for i := range op.Fields {
		f := &op.Fields[i]
		names := slices.Concat([]string{f.Name}, f.Aliases)
		if slices.ContainsFunc(f.Near, func(n string) bool { return normalize(n) == normalize(key) }) {
			return f
		}
		for _, n := range names {
			if s := likeness(key, n); s > bestScore {
				best, bestScore = f, s
			}
		}
	}
	return best
}

// fieldsOf returns the one operation whose fields include all of keys, or
// nil if none or several do.
func (v *Vocabulary) fieldsOf(keys []string) *Op {
	var found *Op
	for i := range v.Ops {
		o := &v.Ops[i]
		if slices.ContainsFunc(keys, func(k string) bool { return o.field(k) == nil }) {
			continue
		}
		if found != nil {
			return nil
		}
		found = o
	}
	return found
}

// guessOps returns the operations key most likely means: a name of one in
// another vocabulary, or the nearest spellings.
func (v *Vocabulary) guessOps(key string) []*Op {
	for i := range v.Ops {
		o := &v.Ops[i]
		if slices.ContainsFunc(o.Near, func(n string) bool { return normalize(n) == normalize(key) }) {
			return []*Op{o}
		}
	}
	var best []*Op
	bestScore := 0
	for i := range v.Ops {
		o := &v.Ops[i]
		score := 0
		for _, n := range slices.Concat([]string{o.Name}, o.Aliases) {
			score = max(score, likeness(key, n))
		}
		switch {
		case score == 0 || score < bestScore:
		case score > bestScore:
			best, bestScore = []*Op{o}, score
		default:
			best = append(best, o)
		}
	}
	return best
}

// likeness scores how likely a model that wrote key meant name: 0 for not
// at all, higher for closer. Case, "_" and "-" do not count; a name that
// contains the other (replace_line, replace_lines) or is within two edits
// of it is alike.
func likeness(key, name string) int {
	k, n := normalize(key), normalize(name)
	switch {
	case k == n:
		return 100
	case len(k) >= 3 && len(n) >= 3 && (strings.Contains(n, k) || strings.Contains(k, n)):
		return 50 - abs(len(n)-len(k))
	}
	if d := Distance(k, n); d <= 2 && d < len(n)/2 {
		return 40 - d
	}
	return 0
}

func normalize(s string) string {
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Distance is the Levenshtein distance between a and b, by bytes: how far
// a mistyped name (a key here, a flag in the CLI) is from one it meant.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// names lists the vocabulary's operations.
func (v *Vocabulary) names() string {
	ns := make([]string, len(v.Ops))
	for i, o := range v.Ops {
		ns[i] = o.Name
	}
	return strings.Join(ns, ", ")
}

// shape is the operation's expected shape, as JSON a model can copy, with
// its optional fields named after it.
func (op *Op) shape() string {
	var b, opt strings.Builder
	fmt.Fprintf(&b, "{%q: {", op.Name)
	for i, f := range op.Fields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %s", f.Name, f.Example)
		if !f.Required {
			if opt.Len() > 0 {
				opt.WriteString(", ")
			}
			opt.WriteString(f.Name)
		}
	}
	b.WriteString("}}")
	if opt.Len() > 0 {
		fmt.Fprintf(&b, " (optional: %s)", opt.String())
	}
	return b.String()
}

// shapes joins the shapes of ops with " or ".
func shapes(ops []*Op) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = o.shape()
	}
	return strings.Join(s, " or ")
}

// orNames is "a", "a or b", "a, b or c".
func orNames(ops []*Op) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = o.Name
	}
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// describe names the JSON type of a decoded value for messages.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number, int, int64:
		return fmt.Sprintf("a number (%v)", v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
