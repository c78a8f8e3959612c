package daemon

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// TestHelp: the help is printed once, on stdout when asked for and on
// stderr after a usage error, and names every flag of serve with the
// environment variable that sets it.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"hashlined serve --help prints the help on stdout", []string{"serve", "--help"}, 0},
		{"hashlined serve -h prints the help on stdout", []string{"serve", "-h"}, 0},
		{"hashlined help prints the help on stdout", []string{"help"}, 0},
		{"hashlined --help prints the help on stdout", []string{"--help"}, 0},
		{"hashlined with no command prints the help on stderr", nil, 2},
		{"hashlined serve with a bad flag prints the help on stderr", []string{"serve", "--bogus"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := Run("hashlined", tc.args, &stdout, &stderr, Extras{}); code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			help, other := stdout.String(), stderr.String()
			if tc.code != 0 {
				help, other = other, help
			}
			if n := strings.Count(help, "hashlined serve [flags]"); n != 1 {
				t.Errorf("the usage line is there %d times, want once:\n%s", n, help)
			}
			if strings.Contains(other, "usage:") || strings.Contains(other, "Usage of") {
				t.Errorf("the help is on the other stream too:\n%s", other)
			}
			if tc.code != 0 {
				return
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			flags(fs)
			fs.VisitAll(func(f *flag.Flag) {
				if !strings.Contains(help, "\n  --"+f.Name+" ") || !strings.Contains(help, "env "+envKey(f.Name)) {
					t.Errorf("the help does not show --%s with its variable %s", f.Name, envKey(f.Name))
				}
			})
		})
	}
	if got := envKey("hash-len"); got != "HASHLINED_HASH_LEN" {
		t.Errorf("envKey(hash-len) = %s", got)
	}
}
