// Package daemon builds this module's binaries and runs a hashlined binary
// until it serves. It is the one reader of the line hashlined prints on
// stdout once it listens, "hashlined: serving ROOT on ADDR", for the tests
// and benchmarks that drive the real server.
package daemon

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// servingPrefix starts the line hashlined prints once it listens.
const servingPrefix = "hashlined: serving "

// Options say how to run it.
type Options struct {
	// Args follow "serve".
	Args []string
	// Env is added to this process's environment.
	Env []string
	// Stderr, if set, receives the server's stderr as well.
	Stderr io.Writer
	// Timeout bounds the wait for the serving line (default 60s).
	Timeout time.Duration
}

// Build compiles the main package pkg (an import path, or a directory
// relative to the working directory) into the binary out with go build,
// flags first. Its error carries go build's output.
func Build(out, pkg string, flags ...string) error {
	args := append(append([]string{"build"}, flags...), "-o", out, pkg)
	if b, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// Process is a running hashlined.
type Process struct {
	Cmd *exec.Cmd
	// Addr is where it serves, as printed (host:port, or unix:///path).
	Addr string
	// Before holds the stdout lines printed before the serving line (the
	// metrics address, for one).
	Before []string
	stderr *tail
}

// Start runs "bin serve Args..." and returns once it serves. If it exits
// or stays silent past the timeout, it is killed and the error carries the
// end of its stderr.
func Start(bin string, o Options) (*Process, error) {
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	cmd := exec.Command(bin, append([]string{"serve"}, o.Args...)...)
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	p := &Process{Cmd: cmd, stderr: &tail{max: 16 << 10}}
	cmd.Stderr = p.stderr
	if o.Stderr != nil {
		cmd.Stderr = io.MultiWriter(p.stderr, o.Stderr)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	type found struct {
		addr   string
		before []string
	}
	done := make(chan found, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		var before []string
		for s.Scan() {
			l := s.Text()
			// The root may contain " on "; the address never does.
			if i := strings.LastIndex(l, " on "); strings.HasPrefix(l, servingPrefix) && i >= 0 {
				done <- found{l[i+len(" on "):], before}
				break
			}
			before = append(before, l)
		}
		close(done)
		io.Copy(io.Discard, stdout) // nobody reads after startup; keep draining
	}()
	select {
	case f, ok := <-done:
		if ok {
			p.Addr, p.Before = f.addr, f.before
			return p, nil
		}
		p.Kill()
		return nil, fmt.Errorf("hashlined exited before serving: %s", p.Stderr())
	case <-time.After(o.Timeout):
		p.Kill()
		return nil, fmt.Errorf("hashlined did not start within %v: %s", o.Timeout, p.Stderr())
	}
}

// Stderr returns the end of what the server wrote on stderr.
func (p *Process) Stderr() string { return p.stderr.String() }

// Kill kills the server and waits for it.
func (p *Process) Kill() {
	p.Cmd.Process.Kill()
	p.Cmd.Wait()
}

// Stop asks the server to shut down gracefully (SIGINT) and waits up to
// grace for it, then kills it.
func (p *Process) Stop(grace time.Duration) {
	p.Cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { p.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		p.Cmd.Process.Kill()
		<-done
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
