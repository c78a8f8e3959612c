//go:build !linux

package checkers

import "os/exec"

// awaitExit returns a channel closed once the started command has exited,
// and a func that returns what cmd.Wait did. Here the command is reaped
// as soon as it exits: the group is killed after that.
func awaitExit(cmd *exec.Cmd) (exited <-chan struct{}, reap func() error) {
	ch := make(chan struct{})
	var err error
	go func() {
		err = cmd.Wait()
		close(ch)
	}()
	return ch, func() error {
		<-ch
		return err
	}
}
