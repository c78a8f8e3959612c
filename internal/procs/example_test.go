package procs_test

import "github.com/hashline/hashline/internal/procs"

// A process that serves one client at a time runs on one P from the start,
// and widens around the work that is parallel by design.
func Example() {
	procs.Serial() // at startup; does nothing if GOMAXPROCS is set

	search := func() { /* workers, one per P */ }
	narrow := procs.Widen()
	search()
	narrow()
}
