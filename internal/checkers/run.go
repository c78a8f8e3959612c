package checkers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one run of a command. Formatters and linters
	// of one file take milliseconds to a second. A change waits for its
	// formatters, and for its checks when they are strict, under its
	// file's lock (they decide what is written); for advisory checks,
	// after the write, without it.
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
	// engine checks), nor a directory where others could move what the
	// server makes in it (CheckDir).
	TempDir string

	// handedOver, in tests, is called with a run's working directory
	// once the command's user may write in it: what it does there is
	// what that user could do before the command starts.
	handedOver func(work string)
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
	// much, was killed by a signal, or left a process holding its
	// output.
	failed string
	// tmpFile and tmpDir are where the content was put, to be named as
	// the workspace's file in the command's messages.
	tmpFile, tmpDir string
}

// lingerDelay is how long the output of a command that ended is read
// after its group was killed: only a process that left the group (a
// session of its own) still holds it then.
const lingerDelay = time.Second

// run runs the rule's command on content, the text of the file named
// name (its base name), in a private directory of its own: the content
// on stdin, and the placeholder, where the command has one, replaced by
// the path of a copy of it there. With combined, stdout and stderr are
// read together into output, which holds at most o.OutputBytes;
// otherwise stdout holds at most stdoutMax bytes and output (stderr)
// o.OutputBytes. Printing more stops the command.
func (r Rule) run(ctx context.Context, name string, content []byte, o Options, combined bool, stdoutMax int) (out outcome) {
	o = o.withDefaults()
	startFailed := func(err error) outcome {
		out.failed = "could not start: " + err.Error()
		return out
	}
	who, err := runAs()
	if err != nil {
		return startFailed(err)
	}
	uses := slices.ContainsFunc(r.Args[1:], func(a string) bool { return strings.Contains(a, Placeholder) })
	var copied []byte
	if uses {
		copied = content
	}
	d, err := makeRunDir(o.TempDir, name, copied, uses, who)
	if err != nil {
		return startFailed(err)
	}
	defer d.remove(who)
	if o.handedOver != nil {
		o.handedOver(d.work)
	}
	out.tmpDir, out.tmpFile = d.work, filepath.Join(d.work, name)
	args := make([]string, len(r.Args)-1)
	for i, a := range r.Args[1:] {
		args[i] = strings.ReplaceAll(a, Placeholder, out.tmpFile)
	}
	if err := ctx.Err(); err != nil {
		out.failed = "was stopped: the call ended first"
		return out
	}

	// The command's ends of its pipes are files of its own, not pipes
	// that exec copies from: so its exit is known apart from its output,
	// and what it started is killed before its output is read to the end.
	var p pipes
	defer p.close()
	stdin, err := p.pipe(true)
	if err != nil {
		return startFailed(err)
	}
	stdoutR, err := p.pipe(false)
	if err != nil {
		return startFailed(err)
	}
	stderrR := stdoutR
	if !combined {
		if stderrR, err = p.pipe(false); err != nil {
			return startFailed(err)
		}
	}
	cmd := exec.Command(r.Path, args...)
	cmd.Args[0] = r.Args[0]
	cmd.Dir = d.work
	cmd.Env = environ(d.work)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.child[0], p.child[1], p.child[len(p.child)-1]
	procAttr(cmd, who)
	err = cmd.Start()
	p.closeChild()
	if err != nil {
		return startFailed(err)
	}
	flood := &flooded{stop: make(chan struct{})}
	errOut := &capped{max: o.OutputBytes, flood: flood}
	var stdout *capped
	var readers sync.WaitGroup
	if combined {
		readers.Go(func() { drain(errOut, stdoutR) })
	} else {
		stdout = &capped{max: stdoutMax, flood: flood}
		readers.Go(func() { drain(stdout, stdoutR) })
		readers.Go(func() { drain(errOut, stderrR) })
	}
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		// A command that does not read its stdin may end without it: the
		// write then fails, which says nothing of the command.
		_, _ = stdin.Write(content)
		stdin.Close()
	}()
	exited, reap := awaitExit(cmd)

	timer := time.NewTimer(o.Timeout)
	defer timer.Stop()
	var stopped string
	select {
	case <-exited:
	case <-timer.C:
		stopped = fmt.Sprintf("ran past its %s time limit and was stopped", o.Timeout)
	case <-ctx.Done():
		stopped = "was stopped: the call ended first"
	case <-flood.stop:
	}
	if stopped != "" || flood.happened() {
		killGroup(cmd.Process)
		<-exited
	}
	// Whatever of its group is still running goes too: nothing it started
	// outlives the run, nor holds its output open.
	killGroup(cmd.Process)
	err = reap()
	read := make(chan struct{})
	go func() {
		readers.Wait()
		close(read)
	}()
	lingered := false
	select {
	case <-read:
	case <-time.After(lingerDelay):
		lingered = true
		p.closeParent()
		<-read
	}
	stdin.Close()
	<-fed

	out.output = errOut.buf.Bytes()
	if stdout != nil {
		out.stdout = stdout.buf.Bytes()
	}
	var exit *exec.ExitError
	switch {
	case flood.happened():
		out.failed = fmt.Sprintf("printed more than %d bytes, so it was stopped and its output not used", flood.max)
	case stopped != "":
		out.failed = stopped
	case lingered:
		out.failed = "ended, but a process it started outside its process group kept its output open, so its output was not used"
	case errors.As(err, &exit):
		if sig := signaled(exit); sig != "" {
			out.failed = "was killed by " + sig
		} else {
			out.exit = exit.ExitCode()
		}
	case err != nil:
		out.failed = "failed: " + err.Error()
	}
	return out
}

// pipes are a run's pipes: the command's ends (child), closed once it
// started, and the server's (parent).
type pipes struct {
	child, parent []*os.File
}

// pipe makes a pipe and returns the server's end: the write end for the
// command's stdin (in), else the read end.
func (p *pipes) pipe(in bool) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	if in {
		r, w = w, r
	}
	p.parent = append(p.parent, r)
	p.child = append(p.child, w)
	return r, nil
}

func (p *pipes) closeChild() {
	for _, f := range p.child {
		f.Close()
	}
	p.child = nil
}

func (p *pipes) closeParent() {
	for _, f := range p.parent {
		f.Close()
	}
}

func (p *pipes) close() {
	p.closeChild()
	p.closeParent()
}

// drain reads r into c until its end, or until it is closed.
func drain(c *capped, r io.Reader) { _, _ = io.Copy(c, r) }

// runDir is a run's private directory: top, made by the server and
// writable by it alone, holds work, the command's working directory (its
// HOME and TMPDIR), which the command's user owns, and in it the copy of
// the content. No one but the server can move or replace work, so the
// paths the command is given stay what the server made; and the server
// writes nothing once work is the command's user's: it makes the copy
// first, with a file of its own that no link can stand for.
type runDir struct{ top, work string }

func makeRunDir(parent, name string, content []byte, copy bool, who *account) (d runDir, err error) {
	top, err := os.MkdirTemp(parent, "hashline-run-")
	if err != nil {
		return d, err
	}
	d.top = top
	defer func() {
		if err != nil {
			d.remove(who)
		}
	}()
	if who != nil {
		// The command's user may pass through, not write.
		if err := os.Chmod(top, 0o711); err != nil {
			return d, err
		}
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return d, err
	}
	defer root.Close()
	if err := root.Mkdir("w", 0o700); err != nil {
		return d, err
	}
	d.work = filepath.Join(top, "w")
	if copy {
		f, err := root.OpenFile(filepath.Join("w", name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return d, err
		}
		_, err = f.Write(content)
		if err == nil {
			err = who.own(f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return d, err
		}
	}
	if who != nil {
		if err := root.Lchown("w", int(who.uid), int(who.gid)); err != nil {
			return d, err
		}
	}
	return d, nil
}

// remove removes the run's directory with everything in it. The command
// may have left directories it cannot be read or entered: a server that
// runs commands as itself opens them up (root needs not), and tries again.
func (d runDir) remove(who *account) {
	if d.top == "" || os.RemoveAll(d.top) == nil {
		return
	}
	for range 3 {
		if who == nil {
			_ = filepath.WalkDir(d.top, func(p string, e fs.DirEntry, err error) error {
				if e != nil && e.IsDir() {
					_ = os.Chmod(p, 0o700)
				}
				return nil
			})
		}
		if os.RemoveAll(d.top) == nil {
			return
		}
	}
}

// flooded records that a command printed more than it may, and stops it.
type flooded struct {
	mu   sync.Mutex
	did  bool
	max  int
	stop chan struct{}
}

func (f *flooded) set(max int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.did {
		f.did, f.max = true, max
		close(f.stop)
	}
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
