package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/hashline/hashline/internal/checkers"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// The operator's check and format commands (issue 35): per glob, a format
// command the new content of an edit or write goes through before it is
// checked and written, and a check command run on it whose findings come
// back as the syntax check's do (syntax.go). The commands and how they run
// (a private directory outside the workspace, a time limit, an output
// limit, no privileges) are internal/checkers'; what they do to a change
// is decided here.
//
// A formatted change is the formatter's bytes in every respect: what is
// written, its version, the reply's tags, the author's view, the Watch
// event and the history. A formatter that fails leaves the content as it
// was, with a warning. A check command is advisory, like the syntax
// check: its findings are listed and the change written; under strict
// checking (the syntax check's: the engine's mode, the operator's globs or
// the request) a change it finds problems in is refused with the syntax
// errors' refusal. A command that could not give its word (time, output,
// a crash) is named in a warning and never taken as a clean check.

// SourceCheck is Diagnostic.Source for a finding of a check command of the
// operator's.
const SourceCheck = "check"

// WithCommands sets the operator's check and format commands (each parsed
// and resolved by internal/checkers) and the bounds of their runs. A file
// goes through every format command whose glob matches it, in order, and
// every matching check command.
func WithCommands(checks, formats []checkers.Rule, o checkers.Options) Option {
	return func(opts *options) {
		opts.checks, opts.formats, opts.commandOptions = checks, formats, o
		opts.commandCache = nil
		if len(checks) > 0 {
			opts.commandCache = checkers.NewCache()
		}
	}
}

// ParseCommands parses and resolves the operator's GLOB=COMMAND rules
// (checkers.Parse, Rule.Resolve).
func ParseCommands(specs []string) ([]checkers.Rule, error) {
	rules := make([]checkers.Rule, 0, len(specs))
	for _, spec := range specs {
		r, err := checkers.Parse(spec)
		if err == nil {
			err = r.Resolve()
		}
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// checkCommandPlaces refuses, for the operator's rules, what would let an
// agent, which writes the workspace, choose what runs or where: the
// directory of the commands' private directories (dir; "" is the
// system's) inside the workspace root (nothing of theirs may land there)
// or one the user they run as cannot enter (checkers.CheckDir); a rule's
// program inside the workspace; a PATH directory inside it, where the
// programs a command runs by name would be found.
func checkCommandPlaces(dir, root string, rules []checkers.Rule) error {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	inside := func(p string) bool {
		if q, err := filepath.EvalSymlinks(p); err == nil {
			p = q
		}
		rel, err := filepath.Rel(r, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	for _, rule := range rules {
		if inside(rule.Path) {
			return fmt.Errorf("%q: its program %s is inside the workspace %s, which agents write; install it elsewhere", rule.Spec, rule.Path, root)
		}
	}
	path, err := checkers.SearchPath()
	if err != nil {
		return err
	}
	for _, p := range path {
		if inside(p) {
			return fmt.Errorf("the server's PATH holds %s, which is inside the workspace %s: agents could put there the programs check and format commands run by name; remove it from PATH", p, root)
		}
	}
	if dir == "" {
		dir = os.TempDir()
	}
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("the temporary directory %s: %w", dir, err)
	}
	if inside(d) {
		return fmt.Errorf("the temporary directory %s, where check and format commands run, is inside the workspace %s; set TMPDIR to a directory outside it", dir, root)
	}
	return checkers.CheckDir(d)
}

// commandState is what the operator's commands did to a content change.
type commandState struct {
	matched         bool
	checks, formats []checkers.Rule
	checked         bool
	diags           []Diagnostic
	// warnings are for the change's result: a command that failed, a
	// formatted write.
	warnings []string
	// editWarned counts the warnings already in an edit's reply, which
	// every result of the edit shares.
	editWarned int
	// formatted says a write's content was formatted; shown are then the
	// lines of it its author knows (reformatWrite).
	formatted bool
	shown     versions.Lines
}

func (c *commandState) commandsOf() *commandState { return c }

// commandPlan is a content plan the operator's commands may run on.
type commandPlan interface {
	syntaxPlan
	commandsOf() *commandState
}

func commandsOf(c *change) *commandState {
	if p, ok := c.plan.(commandPlan); ok {
		return p.commandsOf()
	}
	return nil
}

// matchCommands finds the commands for the file change c writes (its
// target: links followed, so that a link named otherwise neither dodges
// nor picks a rule), once.
func (s *Engine) matchCommands(c *change, cs *commandState) {
	if cs.matched {
		return
	}
	cs.matched = true
	rel := s.target(c)
	for _, r := range s.opts.checks {
		if r.Match(rel) {
			cs.checks = append(cs.checks, r)
		}
	}
	for _, r := range s.opts.formats {
		if r.Match(rel) {
			cs.formats = append(cs.formats, r)
		}
	}
}

// utf8BOM is the byte order mark a UTF-8 text may start with: commands
// are given the text without it, and it is put back.
const utf8BOM = "\uFEFF"

// formatChanges puts the new content of every edit and write of the set
// through the format commands for its file, under the set's locks, before
// anything is checked or written. A change the formatting makes a no-op
// fails (fail).
func (s *Engine) formatChanges(ctx context.Context, changes []*change, fail func(*change, error)) {
	if len(s.opts.checks) == 0 && len(s.opts.formats) == 0 {
		return
	}
	for _, c := range changes {
		p, ok := c.plan.(commandPlan)
		if !ok {
			continue
		}
		cs := p.commandsOf()
		s.matchCommands(c, cs)
		if len(cs.formats) == 0 {
			continue
		}
		text, _ := p.content()
		body, bom := bytes.CutPrefix(text, []byte(utf8BOM))
		if len(body) == 0 {
			continue
		}
		cur, failed := body, ""
		var names []string
		for _, r := range cs.formats {
			out, why := r.Format(ctx, c.target, cur, int(s.ws.MaxFileBytes()), s.opts.commandOptions)
			if why != "" {
				failed = fmt.Sprintf("not formatted: the format command %s %s; the content is as it was sent", r.Name(), why)
				break
			}
			cur = out
			names = append(names, r.Name())
		}
		if failed != "" {
			cs.warnings = append(cs.warnings, failed)
			continue
		}
		if bom {
			// The file's BOM is put back: one the formatter printed of
			// its own (the body it was given had none) would be a second.
			if !bytes.HasPrefix(body, []byte(utf8BOM)) {
				cur = bytes.TrimPrefix(cur, []byte(utf8BOM))
			}
		}
		if bytes.Equal(cur, body) {
			continue
		}
		if bom {
			cur = append([]byte(utf8BOM), cur...)
		}
		by := strings.Join(names, ", then ")
		switch p := p.(type) {
		case *editPlan:
			if err := s.reformatEdit(p, cur, by); err != nil {
				fail(c, err)
			}
		case *writePlan:
			s.reformatWrite(p, cur, by)
		}
	}
}

// reformatEdit makes the planned edit p write formatted (by the commands
// named by) instead: its result is worked out again, from the file before
// the edit to the formatted bytes, so that its diff and tags, its version
// and what its author is shown are the formatted file's. A formatted file
// that could not be written or replied (too large) leaves the edit as
// planned, with a warning. One that is the file as it was refuses the
// edit as a no-op.
func (s *Engine) reformatEdit(p *editPlan, formatted []byte, by string) error {
	keep := func(why string) {
		p.commandsOf().warnings = append(p.commandsOf().warnings, fmt.Sprintf("not formatted: %s; the content is as the edit made it", why))
	}
	if p.doc.Equal(formatted) {
		return &hashline.BatchError{Problems: []hashline.Problem{{EditIndex: -1, Field: "edits", Reason: hashline.ReasonNoChange,
			Message: fmt.Sprintf("%s: once formatted with %s, the file would be as it is: the edit changes only what the formatter puts back, so nothing was written. Change the content, not its layout", p.f.Path, by)}}}
	}
	nd := hashline.ParseDocument(formatted)
	hunks := versions.Diff(p.doc, nd)
	plan := &hashline.Plan{Changes: make([]hashline.Change, len(hunks))}
	for i, h := range hunks {
		lines := make([]string, h.B1-h.B0)
		for j := range lines {
			lines[j] = nd.Line(h.B0 + j + 1)
		}
		plan.Changes[i] = hashline.Change{Start: h.A0, End: h.A1, Lines: lines}
	}
	res, err := plan.Apply(p.doc, hashline.ApplyOptions{
		Hasher:       s.opts.hasher,
		Context:      p.context,
		OldLabel:     "a/" + p.f.Path,
		NewLabel:     "b/" + p.f.Path,
		MaxLineBytes: s.opts.maxLineBytes,
	})
	if err != nil {
		// The lines are the file's: only their endings differ.
		keep(fmt.Sprintf("%s changed only line endings the edit did not touch", by))
		return nil
	}
	if !res.Doc.Equal(formatted) {
		// Apply keeps the file's line endings; the formatter's are
		// written. The lines, their numbers and hashes are the same.
		res.Doc = nd
	}
	res.Warnings = append(slices.Clip(p.res.Warnings), fmt.Sprintf("the file was formatted with %s after the edit: the diff shows the formatted lines, and their tags are the ones to use", by))
	res.Repairs = p.res.Repairs
	raw := res.Doc.View()
	if p.f.Encoding != workspace.UTF8 {
		if raw, err = workspace.Encode(raw, p.f.Encoding); err != nil {
			keep(fmt.Sprintf("the formatted file cannot be written in %s: %v", p.f.Encoding, err))
			return nil
		}
	}
	if limit := s.ws.MaxFileBytes(); int64(len(raw)) > limit {
		keep(fmt.Sprintf("formatted, the file would be %d bytes, over the %d-byte limit", len(raw), limit))
		return nil
	}
	reply, err := s.editReply(p.req, p.f, res, p.rb, raw)
	if err != nil {
		keep("the reply for the formatted file would be over the response size limit")
		return nil
	}
	p.res, p.out, p.raw, p.reply = res, res.Doc.View(), raw, reply
	return nil
}

// reformatWrite makes the planned write p write formatted (by the
// commands named by) instead. Its author is shown no line of the reply,
// so it knows the lines the formatter left as and where they were sent,
// and a warning names the others.
func (s *Engine) reformatWrite(p *writePlan, formatted []byte, by string) {
	sent := hashline.ParseText(p.req.Content)
	nd := hashline.ParseDocument(formatted)
	var shown versions.Lines
	next, shift := 0, 0 // the next unchanged line (0-based) of nd, and how far it moved
	for _, h := range versions.Diff(sent, nd) {
		if shift == 0 {
			shown = shown.Union(versions.Range(next+1, h.B0))
		}
		next, shift = h.B1, h.B1-h.A1
	}
	if shift == 0 {
		shown = shown.Union(versions.Range(next+1, nd.Len()))
	}
	var unknown []string
	prev := 0
	for _, sp := range append(slices.Clone(shown), versions.Span{Start: nd.Len() + 1}) {
		if sp.Start > prev+1 {
			unknown = append(unknown, lineSpan(prev+1, sp.Start-1))
		}
		prev = sp.End
	}
	cs := p.commandsOf()
	cs.formatted, cs.shown = true, shown
	note := fmt.Sprintf("the content was formatted with %s before it was written", by)
	if len(unknown) > 0 {
		note += fmt.Sprintf(": line(s) %s of the file are not what you sent at those numbers; Read them before you edit them", strings.Join(unknown, ", "))
	}
	cs.warnings = append(cs.warnings, note)
	p.text = formatted
}

func lineSpan(a, b int) string {
	if a == b {
		return fmt.Sprint(a)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// runChecks runs the check commands of change c on its new content, once,
// and keeps their findings (introduced by the change, with their lines'
// fresh tags) and the commands that could not give their word.
func (s *Engine) runChecks(ctx context.Context, c *change) {
	p, ok := c.plan.(commandPlan)
	if !ok {
		return
	}
	cs := p.commandsOf()
	if len(cs.checks) == 0 || cs.checked {
		return
	}
	cs.checked = true
	after, _ := p.content()
	after = bytes.TrimPrefix(after, []byte(utf8BOM))
	before := p.before()
	if before != nil {
		before = bytes.TrimPrefix(before, []byte(utf8BOM))
	}
	doc := p.newDoc()
	for _, r := range cs.checks {
		rep := r.Check(ctx, s.opts.commandCache, c.target, before, after, s.opts.commandOptions)
		if rep.NotChecked != "" {
			cs.warnings = append(cs.warnings, fmt.Sprintf("not checked by the check command %s: it %s", r.Name(), rep.NotChecked))
			continue
		}
		for i, f := range rep.Findings {
			if i == maxDiagnostics {
				break
			}
			msg := f.Message
			line := hashline.TaggedLine{}
			if f.Line >= 1 && f.Line <= doc.Len() {
				line = hashline.TaggedLine{Number: f.Line, Hash: doc.Hash(s.opts.hasher, f.Line),
					Content: strings.Clone(hashline.CutLine(doc.Line(f.Line), s.opts.maxLineBytes))}
			} else if f.Line > 0 {
				msg = fmt.Sprintf("line %d: %s", f.Line, msg)
			}
			cs.diags = append(cs.diags, Diagnostic{Line: line, Column: f.Column, Message: hashline.CutLine(msg, maxDiagnosticMessage),
				Checker: r.Name(), Source: SourceCheck})
		}
	}
}

// runChecksBeside starts the checks of the changes not checked yet and
// returns a func that waits for them: they run while the set is written.
func (s *Engine) runChecksBeside(ctx context.Context, changes []*change) (wait func()) {
	var todo []*change
	for _, c := range changes {
		if cs := commandsOf(c); cs != nil && len(cs.checks) > 0 && !cs.checked {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, c := range todo {
			s.runChecks(ctx, c)
		}
	})
	return wg.Wait
}

// withChecks puts what the commands found of c into its result r, after
// withSyntax (whose diagnostics come first).
func (s *Engine) withChecks(c *change, r ChangeResult) ChangeResult {
	cs := commandsOf(c)
	if cs == nil {
		return r
	}
	switch r := r.(type) {
	case *EditResult:
		if len(cs.diags) > 0 {
			r.Diagnostics = append(slices.Clip(r.Diagnostics), cs.diags...)
		}
		// Every result of an edit is its one reply.
		r.Warnings = append(r.Warnings, cs.warnings[cs.editWarned:]...)
		cs.editWarned = len(cs.warnings)
	case *WriteResult:
		if len(cs.diags) > 0 {
			r.Diagnostics = append(slices.Clip(r.Diagnostics), cs.diags...)
		}
		r.Warnings = append(r.Warnings, cs.warnings...)
	}
	return r
}
