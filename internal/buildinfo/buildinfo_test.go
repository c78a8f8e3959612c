package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v0.1.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}}
	dirty := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	tests := []struct {
		name             string
		ldVersion, ldRev string
		bi               *debug.BuildInfo
		want             Info
	}{
		{"go install reports the module version and the recorded revision", "", "", stamped,
			Info{Version: "v0.1.0", Commit: "abc123", GoVersion: "go1.99"}},
		{"a checkout with changes reports its revision as dirty", "", "", dirty,
			Info{Version: "(devel)", Commit: "abc123-dirty", GoVersion: "go1.99"}},
		{"the linker's values win over the build info", "v0.1.0-3-gdeadbee", "deadbee", dirty,
			Info{Version: "v0.1.0-3-gdeadbee", Commit: "deadbee", GoVersion: "go1.99"}},
		{"a build with no info says devel and unknown", "", "", &debug.BuildInfo{GoVersion: "go1.99"},
			Info{Version: "(devel)", Commit: "unknown", GoVersion: "go1.99"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolve(tt.ldVersion, tt.ldRev, tt.bi); got != tt.want {
				t.Errorf("resolve = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTheRunningBinaryHasAVersion(t *testing.T) {
	i := Get()
	if i.Version == "" || i.Commit == "" || !strings.HasPrefix(i.GoVersion, "go") {
		t.Errorf("Get() = %+v, want every field set", i)
	}
	if s := i.String("hashline"); !strings.HasPrefix(s, "hashline "+i.Version+" (commit ") {
		t.Errorf("String = %q", s)
	}
}
