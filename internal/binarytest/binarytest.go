// Package binarytest is the harness for tests and benchmarks that drive the
// real binaries rather than the code in-process: Build compiles a binary
// once per process, whoever asks for it first, and Start runs a hashlined
// and returns once it serves. Start is the one reader of the line hashlined
// prints on stdout once it listens, "hashlined: serving ROOT on ADDR".
//
// The bench module (bench/) imports it too: its import path is inside this
// module's tree, which is all the go command's internal rule asks.
package binarytest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The commands of this module, as Build takes them.
const (
	Hashlined = "github.com/hashline/hashline/cmd/hashlined"
	Hashline  = "github.com/hashline/hashline/cmd/hashline"
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

// built holds the binaries of this process, one per package and flags;
// a failed build is kept too, so that every test asking for it fails the
// same way without building again.
var built struct {
	sync.Mutex
	dir  string
	bins map[string]result
}

type result struct {
	path string
	err  error
}

// Build returns the binary of the main package pkg (an import path, or a
// directory relative to the working directory) built with flags, building
// it on the first call for that pkg and those flags in this process; later
// calls return the same file. The go command runs in the working directory,
// so a test builds with this module's go.mod and the benchmarks with the
// bench module's, which requires this one. The error carries the go
// command's output. Cleanup removes the binaries.
//
// Where cp exists, the binary comes from go run -exec cp, which copies the
// executable go run links to out: go run keeps its executables in the build
// cache, so the test processes of other packages, and later runs, reuse the
// link that go build would redo each time (a -race link of hashlined is
// seconds of CPU, and a go test ./... has several processes asking).
func Build(pkg string, flags ...string) (string, error) {
	built.Lock()
	defer built.Unlock()
	key := strings.Join(append([]string{pkg}, flags...), "\x00")
	if r, ok := built.bins[key]; ok {
		return r.path, r.err
	}
	if built.dir == "" {
		dir, err := os.MkdirTemp("", "hashline-binarytest-")
		if err != nil {
			return "", err
		}
		built.dir, built.bins = dir, map[string]result{}
	}
	// A directory per build keeps the command's own name on the binary,
	// which is what ps and error messages show.
	name := filepath.Base(pkg)
	if name == "." {
		name = "main"
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	out := filepath.Join(built.dir, strconv.Itoa(len(built.bins)), name)
	args := append(append([]string{"build"}, flags...), "-o", out, pkg)
	if cp, e := exec.LookPath("cp"); e == nil && runtime.GOOS != "windows" {
		if e := os.MkdirAll(filepath.Dir(out), 0o755); e != nil {
			return "", e
		}
		args = append(append([]string{"run"}, flags...), "-exec", cp, pkg, out)
	}
	var err error
	if b, e := exec.Command("go", args...).CombinedOutput(); e != nil {
		err = fmt.Errorf("go %s %s: %v\n%s", args[0], pkg, e, b)
	}
	built.bins[key] = result{out, err}
	return out, err
}

// Cleanup removes every binary Build made; a TestMain calls it after
// m.Run. Build after Cleanup builds again.
func Cleanup() {
	built.Lock()
	defer built.Unlock()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	built.dir, built.bins = "", nil
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

// StopEngines stops the workspace engines running with their place under
// the state home dir (the XDG_STATE_HOME a test gave the hashline binaries
// it ran): hashline --local and hashline mcp start engines that outlive
// them until idle, and a test must not leave them behind. It asks each to
// stop (SIGTERM) and waits up to ten seconds for it, then kills it.
func StopEngines(stateHome string) {
	records, _ := filepath.Glob(filepath.Join(stateHome, "hashline", "*", "engine.json"))
	var procs []*os.Process
	for _, r := range records {
		b, err := os.ReadFile(r)
		if err != nil {
			continue
		}
		var rec struct {
			PID int `json:"pid"`
		}
		if json.Unmarshal(b, &rec) != nil || rec.PID <= 0 || rec.PID == os.Getpid() {
			continue
		}
		if p, err := os.FindProcess(rec.PID); err == nil && p.Signal(syscall.SIGTERM) == nil {
			procs = append(procs, p)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range procs {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(p) {
			p.Kill()
		}
	}
}

// alive reports whether p still runs; signal 0 checks without sending.
func alive(p *os.Process) bool { return p.Signal(syscall.Signal(0)) == nil }
