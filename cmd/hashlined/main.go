// Command hashlined serves one workspace directory over gRPC as the
// hashline.v1.FileService: the one authoritative editor that LLM agents read
// and edit files through with hashline references.
//
// Usage:
//
//	hashlined serve [flags]
//
// Every flag can also be set by an environment variable: HASHLINED_ and the
// flag name in upper case with "-" as "_" (--hash-len -> HASHLINED_HASH_LEN).
// A flag on the command line wins over the environment.
//
// The server is internal/daemon, which hashline also runs (as "hashline
// engine") when a session finds no engine serving its workspace: one code
// path and one set of defaults for every engine.
package main

import (
	"os"

	"github.com/hashline/hashline/internal/daemon"
	"github.com/hashline/hashline/server/reflection"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "state" {
		os.Exit(runState(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(daemon.Run("hashlined", os.Args[1:], os.Stdout, os.Stderr, daemon.Extras{Metrics: serveMetrics, Tracing: startTracing, Register: reflection.Register, TuneRuntime: daemon.TuneRuntime}))
}
