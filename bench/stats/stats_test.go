package stats

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    []time.Duration
		p    float64
		want time.Duration
	}{
		{"the median of an odd count is the middle value", []time.Duration{5, 1, 4, 2, 3}, 50, 3},
		{"the median of an even count is the lower middle value", []time.Duration{4, 1, 3, 2}, 50, 2},
		{"p99 of five values is the largest", []time.Duration{5, 1, 4, 2, 3}, 99, 5},
		{"p0 is the smallest", []time.Duration{5, 1, 4}, 0, 1},
		{"an empty sample gives zero", nil, 50, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := append([]time.Duration(nil), tc.v...)
			if got := Percentile(tc.v, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.v, tc.p, got, tc.want)
			}
			for i := range orig {
				if tc.v[i] != orig[i] {
					t.Fatalf("Percentile reordered its input: %v", tc.v)
				}
			}
		})
	}
	if got := Median([]float64{3.5, 1.5, 2.5}); got != 2.5 {
		t.Errorf("Median of floats = %v, want 2.5", got)
	}
}
