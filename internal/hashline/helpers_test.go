package hashline

import (
	"fmt"
	"regexp"
	"strconv"
)

// placeholder matches the refs tests write instead of real hashes: "@3"
// is line 3 with its current hash, "!3" is line 3 with a hash it does not
// have (a stale ref).
var placeholder = regexp.MustCompile(`^([@!])(\d+)$`)

// resolveRef turns a placeholder into a real ref against d; anything else
// is returned as is.
func resolveRef(d *Document, h Hasher, s string) string {
	m := placeholder.FindStringSubmatch(s)
	if m == nil {
		return s
	}
	n, _ := strconv.Atoi(m[2])
	hash := ""
	if n >= 1 && n <= d.Len() {
		hash = h.Sum(d.Line(n))
	} else {
		hash = h.Sum("")
	}
	if m[1] == "!" {
		hash = wrongHash(hash)
	}
	return fmt.Sprintf("%d:%s", n, hash)
}

// wrongHash returns a hash of the same length that differs from hash.
func wrongHash(hash string) string {
	b := []byte(hash)
	if b[0] == '0' {
		b[0] = '1'
	} else {
		b[0] = '0'
	}
	return string(b)
}

func resolveEdits(d *Document, h Hasher, edits []Edit) []Edit {
	out := make([]Edit, len(edits))
	for i, e := range edits {
		e.Start = resolveRef(d, h, e.Start)
		e.End = resolveRef(d, h, e.End)
		out[i] = e
	}
	return out
}
