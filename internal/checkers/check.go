package checkers

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Finding is one problem a check command reported in a file.
type Finding struct {
	// Line is 1-based in the content checked; 0 when the command's output
	// named no line of the file (the output is then the message).
	Line int
	// Column is 1-based; 0 when the command gave none.
	Column  int
	Message string
}

// Report is what a check of an edit found.
type Report struct {
	// NotChecked says why the command's word is not taken, as a phrase
	// of which the command is the subject ("ran past its 10s time limit
	// and was stopped"): it could not start, ran out of time, printed too
	// much, was killed, or exited non-zero saying nothing. "" when it
	// was taken.
	NotChecked string
	// Findings are those in the content after the edit that were not in
	// the content before (an edit that moved a finding with its line did
	// not make it), in the order printed.
	Findings []Finding
}

// Check runs the check command of r on the content of the file rel before
// and after an edit (before is nil for a new file) and returns the
// findings the edit introduced. cache, when not nil, keeps what runs
// found, so that the content after one edit, the content before the
// next, is not checked twice. What a run finds is the file's: kept by its
// path as well as by command and content, since a command is told the
// file's name, and its output, the findings' messages included, names it.
func (r Rule) Check(ctx context.Context, cache *Cache, rel string, before, after []byte, o Options) Report {
	var (
		wg     sync.WaitGroup
		bf     result
		bfDone bool
	)
	if before != nil {
		if bf, bfDone = cache.get(r.Spec, rel, before); !bfDone {
			wg.Go(func() { bf = r.checkOnce(ctx, cache, rel, before, o) })
		}
	}
	af, ok := cache.get(r.Spec, rel, after)
	if !ok {
		af = r.checkOnce(ctx, cache, rel, after, o)
	}
	wg.Wait()
	if af.notChecked != "" {
		return Report{NotChecked: af.notChecked}
	}
	if before == nil || bf.notChecked != "" {
		// Nothing to compare with: every finding is the edit's.
		return Report{Findings: af.findings}
	}
	found := introduced(before, after, bf.findings, af.findings)
	if len(found) == 0 {
		// A failure that names no place, the same before the change,
		// says nothing of the change: the command failed on the file.
		for _, f := range af.findings {
			if f.Line == 0 && strings.HasPrefix(f.Message, "exited with status ") {
				return Report{NotChecked: f.Message + " (as it did on the file before this change)"}
			}
		}
	}
	return Report{Findings: found}
}

// result is one content's run of a check command, as the cache keeps it.
type result struct {
	notChecked string
	findings   []Finding
}

func (r Rule) checkOnce(ctx context.Context, cache *Cache, rel string, content []byte, o Options) result {
	out := r.run(ctx, path.Base(rel), content, o, true, 0)
	res := r.judge(out, rel)
	if out.failed == "" {
		// A run that was cut short may end otherwise next time.
		cache.put(r.Spec, rel, content, res)
	}
	return res
}

// judge reads a run's output. Exit 0 is a clean file, but for the lines
// naming a place in it (eslint reports warnings with exit 0); any other
// exit is the command's findings: the lines naming a place in the file,
// or, when none does, the whole output as one finding. A run that did
// not end on its own, or exited non-zero printing nothing, is not
// checked.
func (r Rule) judge(out outcome, rel string) result {
	if out.failed != "" {
		return result{notChecked: out.failed}
	}
	text := strings.ToValidUTF8(string(out.output), "\uFFFD")
	text = strings.ReplaceAll(text, out.tmpFile, rel)
	text = strings.ReplaceAll(text, out.tmpDir, "$TMPDIR")
	findings := parseFindings(text, rel)
	switch {
	case out.exit == 0 || len(findings) > 0:
		return result{findings: findings}
	case strings.TrimSpace(text) == "":
		return result{notChecked: fmt.Sprintf("exited with status %d and printed nothing", out.exit)}
	}
	return result{findings: []Finding{{Message: fmt.Sprintf("exited with status %d: %s", out.exit, oneLine(text))}}}
}

// findingRE is a line "FILE:LINE: MESSAGE" or "FILE:LINE:COLUMN: MESSAGE",
// the form compilers and most linters print (gcc, go vet, gofmt -e, ruff's
// concise output, mypy, shellcheck -f gcc, eslint -f unix).
// Compiled on first use: most servers run no checker.
var findingRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(.+?):(\d+):(?:(\d+):)?\s*(.*\S)\s*$`)
})

// isStdinName says whether name is what commands call a file they read
// from stdin.
func isStdinName(name string) bool {
	switch name {
	case "-", "<stdin>", "<standard input>", "stdin", "standard input":
		return true
	}
	return false
}

// parseFindings returns the lines of text that name a place in the file
// rel: by its path (the copy's path reads as rel already), its name, or
// as stdin.
func parseFindings(text, rel string) []Finding {
	var out []Finding
	base := path.Base(rel)
	for line := range strings.Lines(text) {
		m := findingRE().FindStringSubmatch(strings.TrimRight(line, "\r\n"))
		if m == nil {
			continue
		}
		file := strings.TrimPrefix(strings.TrimSpace(m[1]), "./")
		if file != rel && file != base && !isStdinName(file) {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil || n < 1 {
			continue
		}
		col, _ := strconv.Atoi(m[3])
		out = append(out, Finding{Line: n, Column: col, Message: m[4]})
	}
	return out
}

// oneLine is text's non-empty lines, trimmed, joined by " / ".
func oneLine(text string) string {
	var parts []string
	for l := range strings.Lines(text) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " / ")
}

// introduced is the findings of after with no like one in before: the
// same message on the same line, a line before the changed lines, or
// after them moved by as many lines as the edit added; on any of the
// changed lines (a finding the edit kept on a line it rewrote is still
// the one that was there); or without a line in both.
func introduced(before, after []byte, bf, af []Finding) []Finding {
	pre, bEnd, aEnd := changedLines(before, after)
	type key struct {
		msg  string
		line int // -1: within the changed lines
	}
	seen := make(map[key]int, len(bf))
	for _, f := range bf {
		l := f.Line
		switch {
		case l > bEnd:
			l += aEnd - bEnd
		case l > pre:
			l = -1
		}
		seen[key{f.Message, l}]++
	}
	var out []Finding
	for _, f := range af {
		l := f.Line
		if l > pre && l <= aEnd {
			l = -1
		}
		k := key{f.Message, l}
		if seen[k] > 0 {
			seen[k]--
			continue
		}
		out = append(out, f)
	}
	return out
}

// changedLines returns the lines before and after have in common at their
// start (pre) and, past them, the last changed line of each (bEnd,
// aEnd; lines after those are the same in both).
func changedLines(before, after []byte) (pre, bEnd, aEnd int) {
	b, a := splitLines(before), splitLines(after)
	for pre < len(b) && pre < len(a) && bytes.Equal(b[pre], a[pre]) {
		pre++
	}
	bEnd, aEnd = len(b), len(a)
	for bEnd > pre && aEnd > pre && bytes.Equal(b[bEnd-1], a[aEnd-1]) {
		bEnd--
		aEnd--
	}
	return pre, bEnd, aEnd
}

func splitLines(s []byte) [][]byte {
	if len(s) == 0 {
		return nil
	}
	return bytes.SplitAfter(bytes.TrimSuffix(s, []byte("\n")), []byte("\n"))
}

// Cache keeps the findings of the latest runs of check commands, by
// command, file and content. Bounded: cacheEntries runs, each of at most
// cacheEntryBytes of findings (a larger one is not kept).
type Cache struct {
	mu      sync.Mutex
	entries map[cacheKey]*list.Element
	order   list.List // of *cacheEntry, most recent first
}

const (
	cacheEntries    = 256
	cacheEntryBytes = 64 << 10
)

type cacheKey struct {
	spec, rel string
	sum       [sha256.Size]byte
}

type cacheEntry struct {
	key cacheKey
	res result
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[cacheKey]*list.Element{}} }

func (c *Cache) get(spec, rel string, content []byte) (result, bool) {
	if c == nil {
		return result{}, false
	}
	k := cacheKey{spec, rel, sha256.Sum256(content)}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return result{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry).res, true
}

func (c *Cache) put(spec, rel string, content []byte, res result) {
	if c == nil {
		return
	}
	n := len(res.notChecked)
	for _, f := range res.findings {
		n += len(f.Message) + 16
	}
	if n > cacheEntryBytes {
		return
	}
	k := cacheKey{spec, rel, sha256.Sum256(content)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.entries[k] = c.order.PushFront(&cacheEntry{key: k, res: res})
	for c.order.Len() > cacheEntries {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.entries, last.Value.(*cacheEntry).key)
	}
}
