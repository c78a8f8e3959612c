package machine

import (
	"os"
	"os/exec"
	"path/filepath"
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

// The report being written is excluded from the checkout's changes,
// wherever it is (a report outside the checkout must not make git fail and
// hide the checkout's own changes), and the whole checkout counts, not only
// the working directory (bench/).
func TestCommitSeesChangesOutsideTheExcludedReport(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	for _, f := range []string{"REPORT.md", "top.go", "sub/code.go"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("v1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	git("commit", "-q", "-m", "one")
	t.Chdir(filepath.Join(dir, "sub"))
	outside := filepath.Join(t.TempDir(), "REPORT.md")
	for _, tc := range []struct {
		name, change, exclude string
		dirty                 bool
	}{
		{"a clean checkout", "", "../REPORT.md", false},
		{"the report changed and excluded", "REPORT.md", "../REPORT.md", false},
		{"the report changed but another excluded", "REPORT.md", outside, true},
		{"code changed, the report in the checkout excluded", "sub/code.go", "../REPORT.md", true},
		{"code changed, a report outside the checkout excluded", "sub/code.go", outside, true},
		{"code above the working directory changed", "top.go", "../REPORT.md", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			git("checkout", "-q", ".")
			if tc.change != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.change), []byte("v2\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := Commit(tc.exclude)
			if got == "" || strings.Contains(got, "unknown") || strings.HasSuffix(got, " (with uncommitted changes)") != tc.dirty {
				t.Errorf("Commit(%q) = %q, want dirty %v", tc.exclude, got, tc.dirty)
			}
		})
	}
}
