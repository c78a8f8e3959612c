// Package memtune sets the Go garbage collector for hashline's
// long-running processes (hashlined, hashline mcp).
//
// Their live heap is usually small (a few MiB plus the snapshot cache),
// while every Read or Edit of a large file allocates a file-sized buffer or
// two. With Go's default GOGC=100 the heap goal stays close to the small
// live heap, so a request on a 10k-line file can start a collection cycle
// of its own: on two cores that was a fifth to a third of a Read's time.
// Apply lets the heap grow to five times the live heap between cycles
// (GOGC=400) and bounds the process with a soft memory limit instead, so a
// large cache still gets collected before it can run away.
package memtune

import (
	"os"
	"runtime/debug"
)

// GCPercent is the GOGC value Apply sets.
const GCPercent = 400

// Limit is the soft memory limit Apply sets for a snapshot cache of
// cacheBytes: room for the cache twice over (old and new snapshots while
// they turn over) plus 512 MiB for requests in flight.
func Limit(cacheBytes int64) int64 { return 2*max(cacheBytes, 0) + 512<<20 }

// Apply sets GOGC to GCPercent and the memory limit to Limit(cacheBytes),
// each only if the environment does not set it (GOGC, GOMEMLIMIT), so an
// operator's choice always wins. It reports what it set.
func Apply(cacheBytes int64) (gcPercent int, limit int64) {
	gcPercent, limit = -1, -1
	if os.Getenv("GOGC") == "" {
		gcPercent = GCPercent
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		limit = Limit(cacheBytes)
		debug.SetMemoryLimit(limit)
	}
	return gcPercent, limit
}
