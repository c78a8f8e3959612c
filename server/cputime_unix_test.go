//go:build unix

package server_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time of the process so far, user and system, all
// threads: on a machine shared with other work it is nearer to the cost
// of a benchmark than the wall time is.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
