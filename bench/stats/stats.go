// Package stats holds the order statistics the benchmarks report, so that
// every table of the bench module computes a median the same way.
package stats

import (
	"cmp"
	"slices"
)

// Percentile returns the p-th percentile of v by nearest rank (the
// smallest value with at least p percent of v at or below it), or the
// zero value if v is empty. v is not changed.
func Percentile[T cmp.Ordered](v []T, p float64) T {
	if len(v) == 0 {
		var zero T
		return zero
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// Median is the 50th percentile: of an even number of values, the lower
// of the two in the middle, which is always one that was measured.
func Median[T cmp.Ordered](v []T) T { return Percentile(v, 50) }
