// Package stats holds the order statistics the benchmarks report, so that
// every table of the bench module computes a median (and the interval
// around it) the same way.
package stats

import (
	"cmp"
	"math"
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

// MedianCI returns the bounds of a confidence interval for the median of
// the population v was drawn from, by order statistics alone (no
// assumption about the distribution): the values at ranks n/2 - z*sqrt(n)/2
// and 1 + n/2 + z*sqrt(n)/2 of the sorted v, z 1.96 for 95%. It returns
// the zero values for an empty v, and the smallest and largest values for
// one too small to narrow them. v is not changed.
func MedianCI[T cmp.Ordered](v []T, z float64) (lo, hi T) {
	if len(v) == 0 {
		return lo, hi
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := float64(len(s))
	half := z * math.Sqrt(n) / 2
	i := int(math.Floor(n/2-half)) - 1 // ranks are 1-based
	j := int(math.Ceil(1+n/2+half)) - 1
	return s[max(0, min(i, len(s)-1))], s[max(0, min(j, len(s)-1))]
}

// Ratios returns a[i]/b[i] for every pair of a and b, as long as the
// shorter of the two: the ratios of measurements taken in pairs.
func Ratios[T ~int64 | ~float64](a, b []T) []float64 {
	out := make([]float64, 0, min(len(a), len(b)))
	for i := range min(len(a), len(b)) {
		out = append(out, float64(a[i])/float64(b[i]))
	}
	return out
}
