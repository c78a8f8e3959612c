// Package buildinfo says which build of hashline is running: the version,
// the commit and the Go version, for --version, the MCP serverInfo, the
// server's start log, its Status RPC and its hashline_build_info metric.
//
// The version comes from the linker when the Makefile builds from a
// checkout (-ldflags "-X github.com/hashline/hashline/internal/buildinfo.version=$(git describe)"),
// else from the module version Go records in the binary ("v0.1.0" for
// go install ...@v0.1.0, "(devel)" for a plain go build). The commit comes
// from the linker too, else from the VCS stamp Go records (vcs.revision).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Set with -ldflags -X by the Makefile's build and release targets; empty
// otherwise.
var (
	version string
	commit  string
)

// Info is one build's identity.
type Info struct {
	// Version is the module version, "git describe" of the checkout, or
	// "(devel)".
	Version string
	// Commit is the VCS revision, with "-dirty" when the tree had
	// uncommitted changes; "unknown" when the build recorded none.
	Commit string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Get returns the running binary's Info.
var Get = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, bi)
})

// resolve combines the linker's values with the build info; a value set by
// the linker wins.
func resolve(ldVersion, ldCommit string, bi *debug.BuildInfo) Info {
	i := Info{Version: ldVersion, Commit: ldCommit, GoVersion: runtime.Version()}
	if bi != nil {
		if bi.GoVersion != "" {
			i.GoVersion = bi.GoVersion
		}
		if i.Version == "" {
			i.Version = bi.Main.Version
		}
		if i.Commit == "" {
			var rev string
			var dirty bool
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if rev != "" && dirty {
				rev += "-dirty"
			}
			i.Commit = rev
		}
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	if i.Commit == "" {
		i.Commit = "unknown"
	}
	return i
}

// Version is Get().Version.
func Version() string { return Get().Version }

// String is the one line --version prints: "NAME VERSION (commit COMMIT, GO)".
func (i Info) String(name string) string {
	return fmt.Sprintf("%s %s (commit %s, %s)", name, i.Version, i.Commit, i.GoVersion)
}
