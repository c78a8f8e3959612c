package machine

import (
	"strings"
	"testing"
)

func TestCPUModel(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nmodel name\t: other\n", "AMD EPYC 7B13"},
		{"processor\t: 0\nFeatures\t: fp asimd\n", "unknown CPU"},
		{"", "unknown CPU"},
	} {
		if got := cpuModel(tt.in); got != tt.want {
			t.Errorf("cpuModel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoadAvg(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0.52 1.10 1.31 2/78 14128\n", "0.52 1.10 1.31"},
		{"0.52 1.10", "unknown"},
		{"", "unknown"},
	} {
		if got := loadAvg(tt.in); got != tt.want {
			t.Errorf("loadAvg(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSummaryNamesCoresAndToolchain(t *testing.T) {
	s := Summary()
	if !strings.Contains(s, " cores (GOMAXPROCS ") || !strings.Contains(s, "go1.") {
		t.Errorf("Summary() = %q", s)
	}
}
