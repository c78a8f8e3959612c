package checkers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one run of a command. Formatters and linters
	// of one file take milliseconds to a second; an edit waits for them
	// under its file's lock.
	DefaultTimeout = 10 * time.Second
	// DefaultOutputBytes bounds what a check command prints (stdout and
	// stderr together), and what a formatter prints on stderr.
	DefaultOutputBytes = 256 << 10
)

// Options bound the runs of commands. The zero value takes the defaults.
type Options struct {
	// Timeout bounds each run; a command still running then is killed,
	// with every process of its group.
	Timeout time.Duration
	// OutputBytes bounds a check command's output, and a formatter's
	// stderr; past it the command is killed and its output not used.
	OutputBytes int
	// TempDir is where each run's private directory is made; "" is the
	// system's (os.TempDir). It must not be inside the workspace (the
	// engine checks).
	TempDir string
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.OutputBytes <= 0 {
		o.OutputBytes = DefaultOutputBytes
	}
	return o
}

// outcome is what one run of a command did.
type outcome struct {
	stdout []byte
	// output is what the command printed on stdout and stderr, in the
	// order written, for a check; stderr alone for a formatter.
	output []byte
	exit   int
	// failed says why the run is not to be trusted at all ("" when it
	// ran to its end): it could not start, ran out of time, printed too
	// much, or was killed by a signal.
	failed string
	// tmpFile and tmpDir are where the content was put, to be named as
	// the workspace's file in the command's messages.
	tmpFile, tmpDir string
}

// run runs the rule's command on content, the text of the file named
// name (its base name), in a private directory of its own: the content
// on stdin, and the placeholder, where the command has one, replaced by
// the path of a copy of it there. With combined, stdout and stderr are
// read together into output, which holds at most o.OutputBytes;
// otherwise stdout holds at most stdoutMax bytes and output (stderr)
// o.OutputBytes. Printing more stops the command.
func (r Rule) run(ctx context.Context, name string, content []byte, o Options, combined bool, stdoutMax int) outcome {
	o = o.withDefaults()
	var out outcome
	who, err := runAs()
	if err != nil {
		out.failed = "could not start: " + err.Error()
		return out
	}
	dir, err := os.MkdirTemp(o.TempDir, "hashline-run-")
	if err != nil {
		out.failed = "could not start: " + err.Error()
		return out
	}
	defer os.RemoveAll(dir)
	if err := who.own(dir); err != nil {
		out.failed = "could not start: " + err.Error()
		return out
	}
	out.tmpDir = dir
	out.tmpFile = filepath.Join(dir, name)
	args := make([]string, len(r.Args)-1)
	uses := false
	for i, a := range r.Args[1:] {
		if strings.Contains(a, Placeholder) {
			uses = true
			a = strings.ReplaceAll(a, Placeholder, out.tmpFile)
		}
		args[i] = a
	}
	if uses {
		err := os.WriteFile(out.tmpFile, content, 0o600)
		if err == nil {
			err = who.own(out.tmpFile)
		}
		if err != nil {
			out.failed = "could not start: " + err.Error()
			return out
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, r.Path, args...)
	cmd.Args[0] = r.Args[0]
	cmd.Dir = dir
	cmd.Env = environ(dir)
	cmd.Stdin = bytes.NewReader(content)
	// A child that exits while a process it started keeps the pipes open,
	// or that ignores being killed, is not waited for long.
	cmd.WaitDelay = time.Second
	group(cmd, who)
	flood := &flooded{cancel: cancel}
	errOut := &capped{max: o.OutputBytes, flood: flood}
	var stdout *capped
	if combined {
		cmd.Stdout, cmd.Stderr = errOut, errOut
	} else {
		stdout = &capped{max: stdoutMax, flood: flood}
		cmd.Stdout, cmd.Stderr = stdout, errOut
	}
	err = cmd.Run()
	if cmd.Process != nil {
		// Whatever of its group is still running goes too: nothing it
		// started outlives the run.
		killGroup(cmd.Process.Pid)
	}
	out.output = errOut.buf.Bytes()
	if stdout != nil {
		out.stdout = stdout.buf.Bytes()
	}
	var exit *exec.ExitError
	switch {
	case cmd.Process == nil:
		out.failed = "could not start: " + err.Error()
	case flood.happened():
		out.failed = fmt.Sprintf("printed more than %d bytes, so it was stopped and its output not used", flood.max)
	case ctx.Err() != nil:
		out.failed = "was stopped: the call ended first"
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		out.failed = fmt.Sprintf("ran past its %s time limit and was stopped", o.Timeout)
	case errors.As(err, &exit):
		if sig := signaled(exit); sig != "" {
			out.failed = "was killed by " + sig
		} else {
			out.exit = exit.ExitCode()
		}
	case err != nil:
		out.failed = err.Error()
	}
	return out
}

// flooded records that a command printed more than it may, and stops it.
type flooded struct {
	mu     sync.Mutex
	did    bool
	max    int
	cancel func()
}

func (f *flooded) set(max int) {
	f.mu.Lock()
	if !f.did {
		f.did, f.max = true, max
	}
	f.mu.Unlock()
	f.cancel()
}

func (f *flooded) happened() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.did
}

// capped keeps at most max bytes written to it; past them it drops the
// rest, so that the command is not blocked on a full pipe, and stops the
// command.
type capped struct {
	buf   bytes.Buffer
	max   int
	over  bool
	flood *flooded
}

func (c *capped) Write(p []byte) (int, error) {
	if c.over {
		return len(p), nil
	}
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:room])
		c.over = true
		c.flood.set(c.max)
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}
