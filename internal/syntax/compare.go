package syntax

import (
	"bytes"
	"cmp"
	"slices"
)

// hunk is the part of a file an edit changed, in whole lines: the bytes
// before start and from the end on (end is bEnd in before, aEnd in after)
// are the same in both.
type hunk struct {
	start      int // byte offset of the first changed line, in both
	bEnd, aEnd int // byte offsets just past the last changed line
	firstLine  int // 1-based line of start
	bLast      int // 1-based last changed line in before (firstLine-1 when none)
	aLast      int // same in after
}

// blockSize: common prefixes and suffixes are compared a block at a time
// (bytes.Equal is vectorised) before the byte that differs is looked for.
const blockSize = 256

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+blockSize <= n && bytes.Equal(a[i:i+blockSize], b[i:i+blockSize]) {
		i += blockSize
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b []byte, limit int) int {
	i := 0
	for i+blockSize <= limit && bytes.Equal(a[len(a)-i-blockSize:len(a)-i], b[len(b)-i-blockSize:len(b)-i]) {
		i += blockSize
	}
	for i < limit && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

func hunkOf(before, after []byte) hunk {
	p := commonPrefix(before, after)
	q := commonSuffix(before, after, min(len(before), len(after))-p)
	var h hunk
	h.start = bytes.LastIndexByte(after[:p], '\n') + 1
	h.bEnd, h.aEnd = len(before)-q, len(after)-q
	// Extend both ends to the end of a line, by the same bytes: what
	// follows them is the same in both.
	lineEnd := func(b []byte, e int) bool { return e == h.start || b[e-1] == '\n' }
	if !lineEnd(before, h.bEnd) || !lineEnd(after, h.aEnd) {
		k := len(after)
		if i := bytes.IndexByte(after[h.aEnd:], '\n'); i >= 0 {
			k = h.aEnd + i + 1
		}
		k -= h.aEnd
		h.bEnd += k
		h.aEnd += k
	}
	h.firstLine = 1 + bytes.Count(after[:h.start], nl)
	h.bLast = lastLine(before, h.start, h.bEnd, h.firstLine)
	h.aLast = lastLine(after, h.start, h.aEnd, h.firstLine)
	return h
}

// lastLine is the line of src[end-1] when the range [start, end) is not
// empty, else first-1.
func lastLine(src []byte, start, end, first int) int {
	if end <= start {
		return first - 1
	}
	return first + bytes.Count(src[start:end-1], nl)
}

// compare parses after (a piece of it first, for large files) and, when it
// has errors, before, and returns the errors of after not in before. The
// errors of a whole parse of after go into opts.Cache, and those of before
// are taken from it when it has them. h is hunkOf(before, after) (the zero
// hunk when before is empty).
func compare(path string, lang Lang, before, after []byte, h hunk, opts Options) ([]Diagnostic, error) {
	parse := opts.parser
	if parse == nil {
		parse = parserFor(lang)
	}
	run := func(src []byte) ([]Diagnostic, error) {
		return guard(opts.Timeout, func() []Diagnostic { return parse(src) })
	}
	if opts.ChunkBytes > 0 && len(after) >= opts.ChunkBytes && len(before) > 0 {
		if piece, ok := chunk(lang, after, h); ok {
			d, err := run(piece)
			if err != nil {
				return nil, err
			}
			if len(d) == 0 {
				return nil, nil
			}
		}
	}
	da, err := run(after)
	if err != nil {
		return nil, err
	}
	if len(da) == 0 || len(before) == 0 {
		opts.Cache.put(path, after, da)
		if len(da) == 0 {
			return nil, nil
		}
		return finish(da, after), nil
	}
	// Before's entry is the one after replaces: it is looked up first.
	db, ok := opts.Cache.get(path, before)
	if !ok {
		if db, err = run(before); err != nil {
			return nil, err
		}
	}
	opts.Cache.put(path, after, da)
	return finish(introduced(db, da, h), after), nil
}

// introduced is the diagnostics of after with no like one in before: the
// same message on the same line, a line of before outside the hunk mapped
// to its place in after; within the hunk, on any of its lines (an error
// the edit kept on a line it rewrote is still the one that was there).
func introduced(before, after []Diagnostic, h hunk) []Diagnostic {
	type key struct {
		msg  string
		line int // 0: within the hunk
	}
	delta := h.aLast - h.bLast
	seen := make(map[key]int, len(before))
	for _, d := range before {
		l := d.Line
		switch {
		case l > h.bLast:
			l += delta
		case l >= h.firstLine:
			l = 0
		}
		seen[key{d.Message, l}]++
	}
	var out []Diagnostic
	for _, d := range after {
		l := d.Line
		if l >= h.firstLine && l <= h.aLast {
			l = 0
		}
		k := key{d.Message, l}
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		out = append(out, d)
	}
	return out
}

// finish keeps every diagnostic on a line of src and sorts them.
func finish(ds []Diagnostic, src []byte) []Diagnostic {
	if len(ds) == 0 {
		return nil
	}
	n := lineCount(src)
	for i := range ds {
		d := &ds[i]
		if d.Line > n {
			// Past the end of the file (the parser's EOF): its last line's end.
			d.Line, d.Column = n, len(lineAt(src, n))+1
		}
		d.Line = max(d.Line, 1)
		d.Column = min(max(d.Column, 0), len(lineAt(src, d.Line))+1)
	}
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return ds
}

// lineAt is line n (1-based) of src, without its newline.
func lineAt(src []byte, n int) []byte {
	for ; n > 1; n-- {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			return nil
		}
		src = src[i+1:]
	}
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		return src[:i]
	}
	return src
}
