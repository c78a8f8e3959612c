package hashline

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// checkDiff applies a unified diff to old strictly, checking both sides of
// every hunk header and every context and deleted line, and fails unless the
// result is new. It is deliberately independent of the code that writes the diff.
func checkDiff(t testing.TB, old, new, diff string) {
	t.Helper()
	got, err := applyUnified(old, diff)
	if err != nil {
		t.Fatalf("diff does not apply: %v\n%s", err, diff)
	}
	if got != new {
		t.Fatalf("diff applied to the old text gives %q, want %q\n%s", got, new, diff)
	}
}

// splitKeep splits s after every "\n", keeping the endings.
func splitKeep(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func applyUnified(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	src := splitKeep(old)
	lines := splitKeep(diff)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("missing file header")
	}
	var out []string
	next := 0 // next old line to copy (0-based)
	atoi := func(s string, def int) int {
		if s == "" {
			return def
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	for i := 2; i < len(lines); {
		m := hunkHeader.FindStringSubmatch(strings.TrimSuffix(lines[i], "\n"))
		if m == nil {
			return "", fmt.Errorf("line %d: want a hunk header, got %q", i, lines[i])
		}
		i++
		oldStart, oldCount := atoi(m[1], 0), atoi(m[2], 1)
		newStart, newCount := atoi(m[3], 0), atoi(m[4], 1)
		firstOld := oldStart - 1 // 0-based first old line of the hunk
		if oldCount == 0 {
			firstOld = oldStart
		}
		if firstOld < next || firstOld > len(src) {
			return "", fmt.Errorf("hunk %q starts at old line %d, already at %d", m[0], firstOld+1, next+1)
		}
		out = append(out, src[next:firstOld]...)
		next = firstOld
		firstNew := newStart - 1
		if newCount == 0 {
			firstNew = newStart
		}
		if firstNew != len(out) {
			return "", fmt.Errorf("hunk %q: new side starts at line %d, but the new file is at line %d", m[0], firstNew+1, len(out)+1)
		}
		seenOld, seenNew := 0, 0
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				l = strings.TrimSuffix(l, "\n")
				i++
			}
			kind, text := l[0], l[1:]
			switch kind {
			case ' ', '-':
				if next >= len(src) || src[next] != text {
					return "", fmt.Errorf("hunk %q: old line %d is %q, diff says %q", m[0], next+1, at(src, next), text)
				}
				next++
				seenOld++
				if kind == ' ' {
					out = append(out, text)
					seenNew++
				}
			case '+':
				out = append(out, text)
				seenNew++
			default:
				return "", fmt.Errorf("bad diff line %q", l)
			}
		}
		if seenOld != oldCount || seenNew != newCount {
			return "", fmt.Errorf("hunk %q has %d old and %d new lines", m[0], seenOld, seenNew)
		}
	}
	out = append(out, src[next:]...)
	for i, l := range out[:max(len(out)-1, 0)] {
		if !strings.HasSuffix(l, "\n") {
			return "", fmt.Errorf("new line %d %q has no newline but is not the last line", i+1, l)
		}
	}
	return strings.Join(out, ""), nil
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<EOF>"
}
