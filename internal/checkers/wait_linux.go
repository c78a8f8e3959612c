package checkers

import (
	"os/exec"

	"golang.org/x/sys/unix"
)

// awaitExit returns a channel closed once the started command has exited,
// and a func that then reaps it and returns what cmd.Wait does. The
// command is not reaped before reap is called: until then its process id,
// the id of its group, cannot be another's, so that its group may be
// killed after it exited without reaching an unrelated one.
func awaitExit(cmd *exec.Cmd) (exited <-chan struct{}, reap func() error) {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for {
			var info unix.Siginfo
			if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
				return
			}
		}
	}()
	return ch, cmd.Wait
}
