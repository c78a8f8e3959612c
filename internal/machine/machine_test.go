package machine

import (
	"strings"
	"testing"
)

func TestParsers(t *testing.T) {
	for _, tt := range []struct {
		name     string
		parse    func(string) string
		in, want string
	}{
		{"cpuModel", cpuModel, "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nmodel name\t: other\n", "AMD EPYC 7B13"},
		{"cpuModel", cpuModel, "processor\t: 0\nFeatures\t: fp asimd\n", "unknown CPU"},
		{"cpuModel", cpuModel, "", "unknown CPU"},
		{"loadAvg", loadAvg, "0.52 1.10 1.31 2/78 14128\n", "0.52 1.10 1.31"},
		{"loadAvg", loadAvg, "0.52 1.10", "unknown"},
		{"loadAvg", loadAvg, "", "unknown"},
	} {
		if got := tt.parse(tt.in); got != tt.want {
			t.Errorf("%s(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestSummaryNamesCoresAndToolchain(t *testing.T) {
	s := Summary()
	if !strings.Contains(s, " cores (GOMAXPROCS ") || !strings.Contains(s, "go1.") {
		t.Errorf("Summary() = %q", s)
	}
}
