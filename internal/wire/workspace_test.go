package wire

import (
	"strings"
	"testing"
)

func TestCheckWorkspaceName(t *testing.T) {
	for _, ok := range []string{"a", "alpha", "ws-1", "0", "a1-b2", strings.Repeat("x", 63)} {
		if err := CheckWorkspaceName(ok); err != nil {
			t.Errorf("CheckWorkspaceName(%q) = %v, want nil", ok, err)
		}
	}
	for name, want := range map[string]string{
		"":                      "empty",
		strings.Repeat("x", 64): "64 bytes: at most 63",
		"../etc":                "path syntax",
		"a/b":                   "path syntax",
		`a\b`:                   "path syntax",
		"alpha.example.com":     "host syntax",
		"alpha:7420":            "host syntax",
		"user@alpha":            "host syntax",
		"[::1]":                 "host syntax",
		"Alpha":                 `upper case: workspace names are lowercase ("alpha")`,
		"-alpha":                "starting and ending with a letter or digit",
		"alpha-":                "starting and ending with a letter or digit",
		"al pha":                "only lowercase letters",
		"al_pha":                "only lowercase letters",
		"alpha\x00":             "only lowercase letters",
		"é":                     "only lowercase letters",
	} {
		err := CheckWorkspaceName(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckWorkspaceName(%q) = %v, want an error saying %q", name, err, want)
		}
	}
	// An oversized name is quoted cut, not whole.
	err := CheckWorkspaceName(strings.Repeat("y", 10000))
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("CheckWorkspaceName(10000 bytes) = %v, want a short error", err)
	}
}
