package engine

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/syntax"
)

// The syntax check of a change (issue 35): after an edit or write is
// planned, its file's content before and after is given to
// internal/syntax, which returns the syntax errors the change introduced.
// Advisory (the default), the change is written and its result carries
// them; strict (the engine's mode, a glob of the operator's, or the
// request), a change that introduces any is refused before anything is
// written. An advisory check of a change that is written runs beside its
// write, which waits for the disk: the reply waits for both. A dry run,
// and a strict check, run it first.

// SyntaxMode is what the engine does about the syntax errors a change
// would introduce.
type SyntaxMode int

const (
	// SyntaxAdvisory writes the change and reports the errors (the zero
	// value, the default).
	SyntaxAdvisory SyntaxMode = iota
	// SyntaxOff checks nothing, unless a request asks for strict checking.
	SyntaxOff
	// SyntaxStrict refuses every change that would introduce an error.
	SyntaxStrict
)

var syntaxModeNames = [...]string{"advisory", "off", "strict"}

func (m SyntaxMode) String() string {
	if m >= 0 && int(m) < len(syntaxModeNames) {
		return syntaxModeNames[m]
	}
	return fmt.Sprintf("SyntaxMode(%d)", int(m))
}

// ParseSyntaxMode is the mode named s: "off", "advisory" or "strict".
func ParseSyntaxMode(s string) (SyntaxMode, error) {
	for i, n := range syntaxModeNames {
		if s == n {
			return SyntaxMode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown syntax mode %q; use off, advisory or strict", s)
}

// CheckSyntaxGlobs returns an error for the first glob of globs that is
// not a valid glob (doublestar syntax, as Grep's globs).
func CheckSyntaxGlobs(globs []string) error {
	for _, g := range globs {
		if p := cleanGlob(g); p == "" || !doublestar.ValidatePattern(p) {
			return fmt.Errorf("bad glob %q", g)
		}
	}
	return nil
}

func cleanGlob(g string) string {
	return strings.TrimLeft(strings.TrimPrefix(g, "./"), "/")
}

// WithSyntax sets the syntax check's mode, and the globs of the files
// checked strictly whatever the mode: a glob without "/" matches a file's
// name in any directory, one with "/" its path from the root (as Grep's
// globs). An invalid glob matches nothing (Open refuses it).
func WithSyntax(mode SyntaxMode, strictGlobs ...string) Option {
	return func(o *options) {
		o.syntaxMode = mode
		o.syntaxStrict = nil
		for _, g := range strictGlobs {
			o.syntaxStrict = append(o.syntaxStrict, cleanGlob(g))
		}
	}
}

// WithSyntaxOptions sets the bounds of each check (size, time); the zero
// value is internal/syntax's defaults. Without a Cache of its own, so
// keeps the engine's, which holds the last whole-file parse of each of the
// files edited last.
func WithSyntaxOptions(so syntax.Options) Option {
	return func(o *options) {
		if so.Cache == nil {
			so.Cache = o.syntaxOptions.Cache
		}
		o.syntaxOptions = so
	}
}

// Diagnostic is one syntax error a change introduced into its file.
type Diagnostic struct {
	// Line is the line in the new content: its number, fresh hash and
	// content (cut to the engine's line limit).
	Line hashline.TaggedLine
	// Column is 1-based, in bytes; 0 when the checker gives none.
	Column int
	// Message is the checker's own text; Checker names it (the
	// syntax.Checker constants, or the operator's command).
	Message, Checker string
	// Source is what found it: "" for the syntax check, SourceCheck for
	// a check command of the operator's (checkers.go).
	Source string
}

// maxDiagnostics bounds the diagnostics of one change: a broken file can
// have many, the first few say what is wrong, and each costs the reply a
// line of the file.
const maxDiagnostics = 10

// maxDiagnosticMessage bounds a checker's message, in bytes.
const maxDiagnosticMessage = 300

// SyntaxError refuses a change, under strict checking, that would have
// introduced syntax errors. Its diagnostics are about the content that
// would have been written, which was not.
type SyntaxError struct {
	Path        string
	Kind        string // "edit" or "write"
	Diagnostics []Diagnostic
}

func (e *SyntaxError) Error() string {
	var b strings.Builder
	what, checking := diagnosticsNoun(e.Diagnostics), "syntax checking"
	if slices.ContainsFunc(e.Diagnostics, func(d Diagnostic) bool { return d.Source == SourceCheck }) {
		checking = "checking"
	}
	fmt.Fprintf(&b, "%s: this %s would introduce %s into the file, and %s is strict for it, so nothing was written. Fix the %s and send it again; the lines as they would have been:",
		e.Path, e.Kind, what, checking, e.Kind)
	for _, d := range e.Diagnostics {
		if d.Line.Number == 0 {
			fmt.Fprintf(&b, "\n%s (%s)", d.Message, d.Checker)
			continue
		}
		fmt.Fprintf(&b, "\nline %d: %s — %s (%s)", d.Line.Number, d.Line.Content, d.Message, d.Checker)
	}
	return b.String()
}

// diagnosticsNoun counts ds: "2 syntax errors", "1 finding of the
// operator's checks", or both joined by "and".
func diagnosticsNoun(ds []Diagnostic) string {
	n := 0
	for _, d := range ds {
		if d.Source == SourceCheck {
			n++
		}
	}
	var parts []string
	if len(ds) > n {
		parts = append(parts, plural(len(ds)-n, "syntax error"))
	}
	if n > 0 {
		parts = append(parts, plural(n, "finding")+" of the operator's checks")
	}
	return strings.Join(parts, " and ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// syntaxState is a content change's syntax check: whether it is checked,
// how, and what was found.
type syntaxState struct {
	check  bool // the file is checked
	strict bool // a change that introduces errors is refused
	done   bool
	report syntax.Report
	diags  []Diagnostic
}

func (s *syntaxState) syntaxOf() *syntaxState { return s }

// syntaxPlan is a content plan whose syntax is checked.
type syntaxPlan interface {
	contentPlan
	syntaxOf() *syntaxState
	// before is the content the change replaces (nil for none, or one that
	// is not text); newDoc the content it writes, parsed.
	before() []byte
	newDoc() *hashline.Document
}

// syntaxMode decides how change c is checked; strict is the request's own
// asking (a field of the change or of its set). The operator's globs are
// matched against the file the change writes (target), so that a link
// named otherwise neither dodges nor picks them.
func (s *Engine) syntaxMode(c *change, strict bool) {
	p, ok := c.plan.(syntaxPlan)
	if !ok {
		return
	}
	st := p.syntaxOf()
	target := s.target(c)
	st.strict = strict || s.opts.syntaxMode == SyntaxStrict || s.strictGlob(target)
	st.check = st.strict || s.opts.syntaxMode != SyntaxOff
}

// target is the file change c writes, relative to the root: its path
// with the links on the way followed, as the write will follow them
// (workspace.Resolve), or the path as given when it cannot be resolved
// (the write then fails). The operator's rules are matched against it,
// and its name is the one checkers and commands are given. It is worked
// out once, under the set's locks.
func (s *Engine) target(c *change) string {
	if c.target == "" {
		c.target = c.rel
		if t, _, err := s.ws.Resolve(c.rel); err == nil && t != "." {
			c.target = t
		}
	}
	return c.target
}

// strictGlob reports whether the operator's globs make rel strict.
func (s *Engine) strictGlob(rel string) bool {
	if len(s.opts.syntaxStrict) == 0 {
		return false
	}
	slash := strings.ReplaceAll(rel, "\\", "/")
	name := path.Base(slash)
	for _, g := range s.opts.syntaxStrict {
		subject := name
		if strings.Contains(g, "/") {
			subject = slash
		}
		if ok, _ := doublestar.Match(g, subject); ok {
			return true
		}
	}
	return false
}

// checkSyntax checks change c, once.
func (s *Engine) checkSyntax(c *change) {
	p, ok := c.plan.(syntaxPlan)
	if !ok {
		return
	}
	st := p.syntaxOf()
	if !st.check || st.done {
		return
	}
	st.done = true
	after, _ := p.content()
	st.report = syntax.Check(c.target, p.before(), after, s.opts.syntaxOptions)
	ds := st.report.Diagnostics
	if len(ds) == 0 {
		return
	}
	ds = ds[:min(len(ds), maxDiagnostics)]
	doc := p.newDoc()
	st.diags = make([]Diagnostic, 0, len(ds))
	for _, d := range ds {
		line := hashline.TaggedLine{Number: d.Line}
		if d.Line >= 1 && d.Line <= doc.Len() {
			line.Hash = doc.Hash(s.opts.hasher, d.Line)
			line.Content = strings.Clone(hashline.CutLine(doc.Line(d.Line), s.opts.maxLineBytes))
		}
		st.diags = append(st.diags, Diagnostic{Line: line, Column: d.Column, Message: hashline.CutLine(d.Message, maxDiagnosticMessage), Checker: d.Checker})
	}
}

// refusal is the strict check's refusal of c, nil when it passes.
func (s *Engine) syntaxRefusal(c *change) error {
	p, ok := c.plan.(syntaxPlan)
	if !ok {
		return nil
	}
	st := p.syntaxOf()
	diags := st.diags
	if cs := commandsOf(c); cs != nil && len(cs.diags) > 0 {
		diags = append(slices.Clip(diags), cs.diags...)
	}
	if !st.strict || len(diags) == 0 {
		return nil
	}
	return &SyntaxError{Path: c.rel, Kind: c.plan.kind(), Diagnostics: diags}
}

// checkSyntaxBeside starts the checks of the changes not checked yet and
// returns a func that waits for them: they run while the set is written.
func (s *Engine) checkSyntaxBeside(changes []*change) (wait func()) {
	var todo []*change
	for _, c := range changes {
		if p, ok := c.plan.(syntaxPlan); ok && p.syntaxOf().check && !p.syntaxOf().done {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return func() {}
	}
	var wg sync.WaitGroup
	// One goroutine for the set: the write it runs beside is mostly a
	// wait for the disk, and a set of many files must not take every CPU.
	wg.Go(func() {
		for _, c := range todo {
			s.checkSyntax(c)
		}
	})
	return wg.Wait
}

// notCheckedReason is why a checked file was not checked, when that
// matters to the caller: prose has no syntax, and is not worth a word.
func notCheckedReason(st *syntaxState) string {
	if !st.done || st.report.Status != syntax.NotChecked || st.report.Checker == "" {
		return ""
	}
	return st.report.Reason
}

func hasDiagnostics(r ChangeResult) bool {
	switch r := r.(type) {
	case *EditResult:
		return len(r.Diagnostics) > 0
	case *WriteResult:
		return len(r.Diagnostics) > 0
	}
	return false
}

// withSyntax puts the syntax check of c into its result r.
func (s *Engine) withSyntax(c *change, r ChangeResult) ChangeResult {
	p, ok := c.plan.(syntaxPlan)
	if !ok {
		return r
	}
	st := p.syntaxOf()
	switch r := r.(type) {
	case *EditResult:
		r.Diagnostics, r.SyntaxNotChecked = st.diags, notCheckedReason(st)
	case *WriteResult:
		r.Diagnostics, r.SyntaxNotChecked = st.diags, notCheckedReason(st)
	}
	return r
}

// syntaxOf is the syntax check of c, nil for a change that writes no
// content.
func syntaxOf(c *change) *syntaxState {
	if p, ok := c.plan.(syntaxPlan); ok {
		return p.syntaxOf()
	}
	return nil
}

// askedStrictSyntax reports whether change r asks for strict checking.
func askedStrictSyntax(r Change) bool {
	switch r := r.(type) {
	case *EditRequest:
		return r.StrictSyntax
	case *WriteRequest:
		return r.StrictSyntax
	}
	return false
}

// fitDiagnostics drops diagnostics from the end of the results of res
// until it fits the response size limit: they are found after the size
// was checked, and the change may be written already. A result that lost
// some says so. The reply of a call of its own (single) is its one
// result, of which only an edit's is measured, as planEdit measures it.
func (s *Engine) fitDiagnostics(set *ApplyResult, single bool) {
	size := s.opts.responseSize
	if size == nil || !slices.ContainsFunc(set.Results, hasDiagnostics) {
		return
	}
	results := set.Results
	var res any = set
	if single {
		e, ok := results[0].(*EditResult)
		if !ok {
			return
		}
		res = e
	}
	for i := len(results) - 1; i >= 0 && size(res) > s.opts.maxResponseBytes; i-- {
		note := func(ds []Diagnostic) string {
			return fmt.Sprintf("%s found were left out of this reply to keep it under the response size limit; Read the file to find them", diagnosticsNoun(ds))
		}
		switch r := results[i].(type) {
		case *EditResult:
			if len(r.Diagnostics) > 0 {
				r.Diagnostics, r.Warnings = nil, append(r.Warnings, note(r.Diagnostics))
			}
		case *WriteResult:
			if len(r.Diagnostics) > 0 {
				r.Diagnostics, r.SyntaxNotChecked = nil, note(r.Diagnostics)
			}
		}
	}
}
