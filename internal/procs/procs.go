// Package procs runs a process on one P (GOMAXPROCS=1) and widens it again
// for work that can use more cores.
//
// hashline mcp serves one client over stdio, mostly one call at a time. The
// MCP SDK passes each call through several goroutines (one reads the line,
// one dispatches it, one runs the handler), and whenever a goroutine becomes
// runnable while a P is idle, Go wakes another thread to run it: a
// cross-CPU wake-up at each hand-off. On a virtual machine such a wake-up
// costs tens of microseconds, which on a small call is more than the work.
// With one P the hand-offs are queue operations on the thread already
// running. Work that is parallel by design (grep's workers) calls Widen to
// get the other cores back while it runs.
package procs

import (
	"os"
	"runtime"
	"sync"
)

var (
	mu      sync.Mutex
	wide    int // GOMAXPROCS before Serial lowered it; 0 if it did not
	widened int // Widen calls not yet narrowed
)

// Serial sets GOMAXPROCS to 1, unless the environment sets GOMAXPROCS (an
// operator's choice wins). It reports whether it did.
func Serial() bool {
	if os.Getenv("GOMAXPROCS") != "" {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	if n := runtime.GOMAXPROCS(1); n > 1 && wide == 0 {
		wide = n
	}
	return true
}

// Widen restores the GOMAXPROCS Serial lowered, until the returned narrow
// is called. Calls may overlap: the process stays wide until the last one
// narrows. Without Serial, or on one CPU, it changes nothing. Each change
// stops the world briefly, so Widen is for work that takes milliseconds,
// not for every call.
func Widen() (narrow func()) {
	mu.Lock()
	defer mu.Unlock()
	if wide == 0 {
		return func() {}
	}
	if widened == 0 {
		runtime.GOMAXPROCS(wide)
	}
	widened++
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if widened--; widened == 0 {
				runtime.GOMAXPROCS(1)
			}
		})
	}
}
