package syntax

import (
	"bytes"
	"fmt"
	"go/scanner"
	"go/token"
	"time"
	"unicode/utf8"
)

// Diagnostic is one syntax error found in the content after an edit.
type Diagnostic struct {
	// Line is 1-based, in the content after the edit.
	Line int
	// Column is 1-based, in bytes; 0 when the checker gives no column.
	Column int
	// Message is the checker's own text.
	Message string
	// Checker names what found it: one of the Checker constants.
	Checker string
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%d:%d: %s (%s)", d.Line, d.Column, d.Message, d.Checker)
}

// The checkers, as named in [Diagnostic.Checker] and [Report.Checker].
const (
	CheckerGo      = "go/parser"
	CheckerESBuild = "esbuild"
	CheckerJSON    = "encoding/json"
	CheckerYAML    = "yaml"
	CheckerBalance = "balance"
)

// Status says whether the content was checked.
type Status int

const (
	// Checked: the diagnostics are all the checker found that the edit
	// introduced (none when the edit introduced none).
	Checked Status = iota
	// NotChecked: no checker ran to its end; Report.Reason says why.
	NotChecked
)

func (s Status) String() string {
	if s == Checked {
		return "checked"
	}
	return "not checked"
}

// Report is what [Check] found.
type Report struct {
	Status Status
	// Reason says why the content was not checked; empty when it was.
	Reason string
	// Checker is the checker chosen for the file (empty when none was).
	Checker string
	// Diagnostics the edit introduced, in the order of their position in
	// the content after the edit.
	Diagnostics []Diagnostic
}

// Defaults of [Options].
const (
	// DefaultMaxBytes bounds the files checked. A whole-file parse, which
	// a file whose edit left errors needs twice, grows with the file;
	// BENCHMARKS.md gives its cost at this size.
	DefaultMaxBytes = 1 << 20
	// DefaultTimeout bounds one parse.
	DefaultTimeout = 2 * time.Second
	// DefaultChunkBytes is the size from which Go, JavaScript and
	// TypeScript files are first checked a declaration at a time.
	DefaultChunkBytes = 16 << 10
)

// Options bound the work of a check. The zero value takes the defaults.
type Options struct {
	// MaxBytes: content after the edit larger than this is not checked.
	MaxBytes int
	// Timeout bounds each parse; a parse that runs longer is abandoned (it
	// runs to its end in the background, since no parser here can be
	// stopped) and the content reported as not checked.
	Timeout time.Duration
	// ChunkBytes: from this size on, Go, JavaScript and TypeScript files are
	// first parsed only around the change (see the package doc). Negative
	// turns that off.
	ChunkBytes int

	// Cache, when set, keeps the whole-file parses of the content after an
	// edit for the check of the next edit of the same file, whose content
	// before it is most often that content.
	Cache *Cache

	// parser, when set, replaces the language's parser (tests only).
	parser parseFunc
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ChunkBytes == 0 {
		o.ChunkBytes = DefaultChunkBytes
	}
	return o
}

// Check returns the syntax errors in after that were not in before: after
// is the content of the file at path once an edit is applied to before
// (before is nil or empty for a new file). The path chooses the checker
// ([Language]); its directory is not read.
func Check(path string, before, after []byte, opts Options) Report {
	opts = opts.withDefaults()
	lang := Language(path)
	rep := Report{Checker: lang.checker()}
	if lang == LangProse {
		return notChecked(rep, "prose: no syntax to check")
	}
	if len(after) > opts.MaxBytes {
		return notChecked(rep, fmt.Sprintf("the file is larger than %d bytes", opts.MaxBytes))
	}
	if !isText(after) {
		return notChecked(rep, "the file is not UTF-8 text")
	}
	if bytes.Equal(before, after) {
		return rep
	}
	var h hunk
	if len(before) > 0 {
		// Before and after differ only in the hunk, whose ends are line
		// starts: with after text, before is text if its hunk is.
		h = hunkOf(before, after)
		if !isText(before[h.start:h.bEnd]) {
			// Nothing to compare with: every error would look new.
			before, h = nil, hunk{}
		}
	}
	if lang == LangGo && opts.parser == nil && !goPackageFirst(after) && len(before) > 0 && !goPackageFirst(before) {
		// go/parser reports a missing package clause and gives up, after
		// scanning on to the next statement's keyword, which in a file of
		// declarations' bodies (a fragment, a template) may be its end: it
		// says nothing of the edit, at the cost of a scan of the file. An
		// edit that removed the clause, and a new file without one, are
		// still parsed, and reported.
		lang, rep.Checker = LangOther, CheckerBalance
	}
	var (
		diags []Diagnostic
		err   error
	)
	if lang == LangOther {
		diags, err = guard(opts.Timeout, func() []Diagnostic { return balance(path, before, after) })
	} else {
		diags, err = compare(path, lang, before, after, h, opts)
	}
	if err != nil {
		return notChecked(rep, err.Error())
	}
	rep.Diagnostics = diags
	return rep
}

func notChecked(r Report, reason string) Report {
	r.Status = NotChecked
	r.Reason = reason
	return r
}

// goPackageFirst reports whether src's first token, comments aside, is
// the keyword package.
func goPackageFirst(src []byte) bool {
	var s scanner.Scanner
	s.Init(token.NewFileSet().AddFile("", -1, len(src)), src, nil, 0)
	_, tok, _ := s.Scan()
	return tok == token.PACKAGE
}

// isText: valid UTF-8 with no NUL byte (UTF-16 and binary files fail it).
func isText(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}
