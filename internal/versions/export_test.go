package versions

import (
	"time"

	"github.com/hashline/hashline/internal/hashline"
)

// DiffWithin is Diff with its search bounded by timeout instead of
// DiffTimeout.
func DiffWithin(old, new *hashline.Document, timeout time.Duration) []Hunk {
	return diff(old, new, timeout)
}

// LCSExactBound is the edit distance from which Diff leaves go-udiff's LCS
// for diffmatchpatch.
const LCSExactBound = lcsExactBound
