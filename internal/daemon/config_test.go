package daemon

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// parseWithConfig parses args as serve does, then the environment, then
// the configuration file holding text.
func parseWithConfig(t *testing.T, text string, args ...string) (*config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hashlined.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	c := flags(fs)
	if err := fs.Parse(append([]string{"--config", path}, args...)); err != nil {
		t.Fatal(err)
	}
	if err := envDefaults(fs); err != nil {
		t.Fatal(err)
	}
	return c, configDefaults(fs, c.config)
}

// TestConfigFile: the file sets the flags the command line and the
// environment leave unset, lists for repeatable flags; what it cannot
// mean stops the start, naming the line.
func TestConfigFile(t *testing.T) {
	t.Setenv("HASHLINED_READ_LIMIT", "77")
	const text = `# hashlined.yaml
format:
  - "*.go=gofmt"
  - '*.py=ruff format --stdin-filename {} -'
check: ["*.sh=shellcheck -f gcc -"]
check-timeout: 3s
syntax-strict: "*.json"
hash-len: 4
read-limit: 5
fsync: false
`
	c, err := parseWithConfig(t, text, "--hash-len", "3")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.formats, []string{"*.go=gofmt", "*.py=ruff format --stdin-filename {} -"}) || !slices.Equal(c.checks, []string{"*.sh=shellcheck -f gcc -"}) {
		t.Errorf("formats %q, checks %q", c.formats, c.checks)
	}
	if c.checkTimeout != 3*time.Second || !slices.Equal(c.syntaxStrict, []string{"*.json"}) || c.fsync {
		t.Errorf("check-timeout %s, syntax-strict %q, fsync %v", c.checkTimeout, c.syntaxStrict, c.fsync)
	}
	if c.hashLen != 3 || c.readLimit != 77 {
		t.Errorf("hash-len %d (the command line's 3 wins), read-limit %d (the environment's 77 wins)", c.hashLen, c.readLimit)
	}
	for _, tc := range []struct{ text, want string }{
		{"bogus: 1\n", `line 1: "bogus" is not a flag`},
		{"config: other.yaml\n", `"config" is not a flag`},
		{"hash-len: [2, 3]\n", "--hash-len takes one value, not a list"},
		{"format: ['*.go']\n", `want GLOB=COMMAND`},
		{"check-timeout: soon\n", `--check-timeout "soon"`},
		{"- a\n- b\n", "want a mapping"},
		{"format: ['*.go=gofmt']\nformat: ['*.go=gofmt']\n", "given twice"},
	} {
		if _, err := parseWithConfig(t, tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
	if _, err := parseWithConfig(t, ""); err != nil {
		t.Errorf("an empty file: %v", err)
	}
}
