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

func TestMedianCI(t *testing.T) {
	seq := func(n int) []int64 {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(n - i) // reversed: MedianCI sorts
		}
		return v
	}
	for _, tc := range []struct {
		name           string
		v              []int64
		wantLo, wantHi int64
	}{
		// n=100: ranks floor(50-9.8)=40 and ceil(1+50+9.8)=61.
		{"100 values", seq(100), 40, 61},
		// n=400: ranks floor(200-19.6)=180 and ceil(1+200+19.6)=221.
		{"400 values", seq(400), 180, 221},
		{"too few to narrow: the extremes", seq(3), 1, 3},
		{"one value", []int64{7}, 7, 7},
		{"none", nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := append([]int64(nil), tc.v...)
			lo, hi := MedianCI(tc.v, 1.96)
			if lo != tc.wantLo || hi != tc.wantHi {
				t.Errorf("MedianCI = [%d, %d], want [%d, %d]", lo, hi, tc.wantLo, tc.wantHi)
			}
			for i := range orig {
				if tc.v[i] != orig[i] {
					t.Fatalf("MedianCI reordered its input")
				}
			}
		})
	}
}

func TestRatios(t *testing.T) {
	got := Ratios([]time.Duration{30, 10, 8}, []time.Duration{10, 20})
	if len(got) != 2 || got[0] != 3 || got[1] != 0.5 {
		t.Errorf("Ratios = %v, want [3 0.5] (the pairs only)", got)
	}
}
