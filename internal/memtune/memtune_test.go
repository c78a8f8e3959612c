package memtune

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestApplyLeavesTheOperatorsSettingsAlone(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	tests := []struct {
		name, gogc, memlimit string
		wantGC               int
		wantLimit            int64
	}{
		{"defaults", "", "", GCPercent, 2*256<<20 + 512<<20},
		{"GOGC set", "50", "", -1, 2*256<<20 + 512<<20},
		{"GOMEMLIMIT set", "", "1GiB", GCPercent, -1},
		{"both set", "off", "1GiB", -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			t.Setenv("GOMEMLIMIT", tt.memlimit)
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			gc, limit := Apply(256 << 20)
			if gc != tt.wantGC || limit != tt.wantLimit {
				t.Fatalf("Apply = %d, %d; want %d, %d", gc, limit, tt.wantGC, tt.wantLimit)
			}
			// What the runtime now has (SetGCPercent returns the old value).
			wantGC := 100
			if tt.wantGC > 0 {
				wantGC = tt.wantGC
			}
			if got := debug.SetGCPercent(100); got != wantGC {
				t.Errorf("runtime GOGC = %d, want %d", got, wantGC)
			}
			wantLimit := int64(math.MaxInt64)
			if tt.wantLimit > 0 {
				wantLimit = tt.wantLimit
			}
			if got := debug.SetMemoryLimit(-1); got != wantLimit {
				t.Errorf("runtime memory limit = %d, want %d", got, wantLimit)
			}
		})
	}
}
