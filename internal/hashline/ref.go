package hashline

import (
	"fmt"
	"strconv"
	"strings"
)

// TaggedLine is one line as a model sees it: number, hash and content.
type TaggedLine struct {
	// Number is the 1-based line number.
	Number int
	// Hash is the lowercase hex hash of Content (see Hasher.Sum).
	Hash string
	// Content is the line without its ending.
	Content string
}

// String returns the line in the read format "12:3f|content".
func (t TaggedLine) String() string {
	return t.Tag() + "|" + t.Content
}

// Tag returns the reference a model copies to point at the line, "12:3f".
func (t TaggedLine) Tag() string {
	return strconv.Itoa(t.Number) + ":" + t.Hash
}

// Ref is a parsed LINE:HASH reference.
type Ref struct {
	// Line is the 1-based line number.
	Line int
	// Hash is lowercase hex, MinHashLen to MaxHashLen digits.
	Hash string
}

// String returns the canonical form "12:3f".
func (r Ref) String() string {
	return strconv.Itoa(r.Line) + ":" + r.Hash
}

// refExample is the hint every ParseRef error ends with, so a model learns
// the expected form from the error alone.
const refExample = `expected LINE:HASH like "12:3f" copied from read output`

// ParseRef parses a reference as models actually send them. Besides the
// canonical "12:3f" it accepts surrounding spaces, upper-case hex, a whole
// copied tagged line ("12:3f|content" means "12:3f") and a leading ">>>" or
// ">>" marker as printed in stale-reference errors. The hash must have
// MinHashLen to MaxHashLen hex digits and the line must be at least 1.
func ParseRef(s string) (Ref, error) {
	t := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(t, ">>>"); ok {
		t = strings.TrimSpace(rest)
	} else if rest, ok := strings.CutPrefix(t, ">>"); ok {
		t = strings.TrimSpace(rest)
	}
	if i := strings.IndexByte(t, '|'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	if t == "" {
		return Ref{}, fmt.Errorf("empty line reference; %s", refExample)
	}
	num, hash, ok := strings.Cut(t, ":")
	if !ok {
		return Ref{}, fmt.Errorf("%q is not a line reference: missing ':'; %s", s, refExample)
	}
	if num == "" || !allDigits(num) {
		return Ref{}, fmt.Errorf("%q is not a line reference: %q is not a line number; %s", s, num, refExample)
	}
	line, err := strconv.Atoi(num)
	if err != nil {
		return Ref{}, fmt.Errorf("%q is not a line reference: line number %s is too large; %s", s, num, refExample)
	}
	if line < 1 {
		return Ref{}, fmt.Errorf("%q is not a line reference: line numbers start at 1; %s", s, refExample)
	}
	if len(hash) < MinHashLen || len(hash) > MaxHashLen || !allHex(hash) {
		return Ref{}, fmt.Errorf("%q is not a line reference: hash %q must be %d to %d hex digits; %s", s, hash, MinHashLen, MaxHashLen, refExample)
	}
	return Ref{Line: line, Hash: strings.ToLower(hash)}, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
