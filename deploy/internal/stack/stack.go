// Package stack runs what the router tests and measurements need on
// loopback: hashlined backends, each serving one named workspace, nginx
// with the repository's own router configuration
// (deploy/nginx/hashline-router.conf), changed only in its listen port and
// the path of the workspaces file it includes, and nginx as a stock proxy
// routing by host, as an Ingress controller does.
package stack

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hashline/hashline/internal/binarytest"
)

// Domain is the domain of workspace hosts in the router configuration:
// <workspace>.Domain routes to the workspace.
const Domain = "hashline.test"

// The lines of hashline-router.conf that RouterConfig replaces; a change
// to either there must be made here too, or RouterConfig fails.
const (
	listenLine  = "listen 7400 http2;"
	includeLine = "include /etc/nginx/hashline/workspaces.conf;"
)

// deployDir is deploy/ in the source tree this package was built from.
func deployDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// RouterConfigPath is the repository's router configuration.
func RouterConfigPath() string {
	return filepath.Join(deployDir(), "nginx", "hashline-router.conf")
}

// Nginx returns the nginx binary: on PATH, or where Debian installs it
// (/usr/sbin, which a non-root PATH may lack).
func Nginx() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", nil
	}
	return "", errors.New("nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)")
}

// FreePort returns a loopback address with a port free right now.
func FreePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Backend is one hashlined serving one named workspace on a fixed
// address, so that it can be stopped and started again where the router
// expects it.
type Backend struct {
	Name, Root, Addr string
	// Tokens is the backend's own token file, with one token, Token,
	// for agent "agent" with write permission.
	Tokens, Token string
	bin, state    string
	args          []string
	proc          *binarytest.Process
}

// NewBackend makes the workspace directory, state home and token file of
// workspace name under dir, and picks its address; Start starts it.
// extra are more hashlined serve flags.
func NewBackend(bin, dir, name string, extra ...string) (*Backend, error) {
	b := &Backend{Name: name, Root: filepath.Join(dir, name, "root"), state: filepath.Join(dir, name, "state"), bin: bin, args: extra}
	for _, d := range []string{b.Root, b.state} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	b.Token = name + "-token-0123456789abcdef"
	b.Tokens = filepath.Join(dir, name, "tokens.yaml")
	if err := os.WriteFile(b.Tokens, []byte("tokens:\n  - token: "+b.Token+"\n    agent: agent\n    permission: write\n"), 0o600); err != nil {
		return nil, err
	}
	addr, err := FreePort()
	if err != nil {
		return nil, err
	}
	b.Addr = addr
	return b, nil
}

// Start starts the backend (again), and returns once it serves.
func (b *Backend) Start() error {
	args := append([]string{"--root", b.Root, "--listen", b.Addr, "--workspace", b.Name, "--tokens", b.Tokens,
		"--state-dir", filepath.Join(b.state, "store"), "--log-level", "warn"}, b.args...)
	// The engine's place (its lock and socket) is under the state home.
	p, err := binarytest.Start(b.bin, binarytest.Options{Args: args, Env: []string{"XDG_STATE_HOME=" + b.state}, Timeout: 30 * time.Second})
	if err != nil {
		return fmt.Errorf("workspace %s: %w", b.Name, err)
	}
	b.proc = p
	return nil
}

// Pid is the running backend's process id, 0 when stopped.
func (b *Backend) Pid() int {
	if b.proc == nil {
		return 0
	}
	return b.proc.Cmd.Process.Pid
}

// Stop sends SIGTERM, as Kubernetes does, and waits for the graceful drain
// to end (killing the process after grace).
func (b *Backend) Stop(grace time.Duration) error {
	if b.proc == nil {
		return nil
	}
	p := b.proc
	b.proc = nil
	p.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("workspace %s: hashlined ended with %v: %s", b.Name, err, p.Stderr())
		}
		return nil
	case <-time.After(grace):
		p.Kill()
		return fmt.Errorf("workspace %s: hashlined did not stop within %v of SIGTERM", b.Name, grace)
	}
}

// MetricsURL is the running backend's metrics address
// (http://ADDR/metrics), when it was started with --metrics-listen.
func (b *Backend) MetricsURL() string {
	if b.proc == nil {
		return ""
	}
	for _, l := range b.proc.Before {
		if u, ok := strings.CutPrefix(l, "hashlined: metrics on "); ok {
			return u
		}
	}
	return ""
}

// Stderr is the end of what the running backend wrote on stderr.
func (b *Backend) Stderr() string {
	if b.proc == nil {
		return ""
	}
	return b.proc.Stderr()
}

// Router is nginx running the repository's router configuration, or
// the stock proxy of StartStockProxy.
type Router struct {
	Addr string
	dir  string
	cmd  *exec.Cmd
	done chan error
}

// RouterConfig returns the repository's router configuration listening
// on addr and including the workspaces file at include.
func RouterConfig(addr, include string) (string, error) {
	b, err := os.ReadFile(RouterConfigPath())
	if err != nil {
		return "", err
	}
	conf := string(b)
	for _, line := range []string{listenLine, includeLine} {
		if strings.Count(conf, line) != 1 {
			return "", fmt.Errorf("%s no longer holds the line %q once; update package stack", RouterConfigPath(), line)
		}
	}
	conf = strings.Replace(conf, listenLine, "listen "+addr+" http2;", 1)
	conf = strings.Replace(conf, includeLine, "include "+include+";", 1)
	return conf, nil
}

// WorkspacesConfig is the workspaces.conf of routes (workspace -> backend
// address), in the form of deploy/nginx/workspaces.conf.example.
func WorkspacesConfig(routes map[string]string) string {
	names := make([]string, 0, len(routes))
	for n := range routes {
		names = append(names, n)
	}
	sort.Strings(names)
	var ups, m strings.Builder
	m.WriteString("map $hashline_workspace $hashline_upstream {\n    default \"\";\n")
	for _, n := range names {
		fmt.Fprintf(&ups, "upstream hashline_%s {\n    server %s;\n    keepalive 16;\n}\n", strings.ReplaceAll(n, "-", "_"), routes[n])
		fmt.Fprintf(&m, "    %s hashline_%s;\n", n, strings.ReplaceAll(n, "-", "_"))
	}
	m.WriteString("}\n")
	return ups.String() + m.String()
}

// StartRouter starts nginx in dir with the router configuration and
// routes, and returns once it accepts connections.
func StartRouter(dir string, routes map[string]string) (*Router, error) {
	addr, err := FreePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ws := filepath.Join(dir, "workspaces.conf")
	if err := os.WriteFile(ws, []byte(WorkspacesConfig(routes)), 0o644); err != nil {
		return nil, err
	}
	router, err := RouterConfig(addr, ws)
	if err != nil {
		return nil, err
	}
	return startNginx(dir, addr, router)
}

// StockProxyConfig is nginx configured as a stock gRPC proxy that routes
// by host, as an Ingress controller does (ingress-nginx writes such a
// server per Ingress host): <workspace>.Domain goes to the workspace's
// address in routes, any other host to a default server answering HTTP
// 404, as the controller's default backend does, and a backend that does
// not answer gets nginx's own 502 page. None of it is the repository's
// router: what it cannot route it answers with HTTP error pages, not
// gRPC statuses.
func StockProxyConfig(addr string, routes map[string]string) string {
	names := make([]string, 0, len(routes))
	for n := range routes {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "server {\n    listen %s http2 default_server;\n    server_name _;\n    location / {\n        return 404 \"default backend - 404\";\n    }\n}\n", addr)
	for _, n := range names {
		fmt.Fprintf(&b, "server {\n    listen %s http2;\n    server_name %s.%s;\n    grpc_connect_timeout 2s;\n    location / {\n        grpc_pass grpc://%s;\n    }\n}\n", addr, n, Domain, routes[n])
	}
	return b.String()
}

// StartStockProxy starts nginx in dir as the stock proxy of
// StockProxyConfig, and returns once it accepts connections.
func StartStockProxy(dir string, routes map[string]string) (*Router, error) {
	addr, err := FreePort()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return startNginx(dir, addr, StockProxyConfig(addr, routes))
}

// startNginx runs nginx in dir with conf in its http block, listening on
// addr, and returns once it accepts connections there.
func startNginx(dir, addr, conf string) (*Router, error) {
	bin, err := Nginx()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "hashline-router.conf"), []byte(conf), 0o644); err != nil {
		return nil, err
	}
	// Everything nginx writes stays in dir; root runs its worker as root
	// too, so that it may use dir.
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n"
	}
	main := user + `daemon off;
master_process on;
worker_processes 1;
pid ` + filepath.Join(dir, "nginx.pid") + `;
error_log ` + filepath.Join(dir, "error.log") + ` warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path ` + filepath.Join(dir, "body") + `;
    proxy_temp_path ` + filepath.Join(dir, "proxy") + `;
    fastcgi_temp_path ` + filepath.Join(dir, "fastcgi") + `;
    uwsgi_temp_path ` + filepath.Join(dir, "uwsgi") + `;
    scgi_temp_path ` + filepath.Join(dir, "scgi") + `;
    include ` + filepath.Join(dir, "hashline-router.conf") + `;
}
`
	mainConf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(mainConf, []byte(main), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-c", mainConf)
	out, err := os.Create(filepath.Join(dir, "nginx.out"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	r := &Router{Addr: addr, dir: dir, cmd: cmd, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait(); out.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return r, nil
		}
		select {
		case err := <-r.done:
			return nil, fmt.Errorf("nginx exited (%v): %s", err, r.Log())
		default:
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("nginx did not listen on %s within 10s: %s", addr, r.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Log is what nginx wrote to its output and error log.
func (r *Router) Log() string {
	var b strings.Builder
	for _, f := range []string{"nginx.out", "error.log"} {
		if data, err := os.ReadFile(filepath.Join(r.dir, f)); err == nil {
			b.Write(data)
		}
	}
	return b.String()
}

// Stop stops nginx (SIGQUIT: its graceful stop) and waits for it.
func (r *Router) Stop() {
	r.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-r.done
	}
}

// Stack is three or more backends behind one router, and behind a stock
// proxy (StockProxyConfig) too.
type Stack struct {
	Router *Router
	// Stock routes to the same backends by host, as an Ingress does.
	Stock    *Router
	Backends map[string]*Backend
}

// Start builds hashlined and starts a backend per name and a router for
// them under dir. routes adds routes to extra names (name -> backend
// name), for tests of a wrong route.
func Start(dir string, names []string, routes map[string]string, extra ...string) (*Stack, error) {
	bin, err := binarytest.Build(binarytest.Hashlined)
	if err != nil {
		return nil, err
	}
	s := &Stack{Backends: map[string]*Backend{}}
	table := map[string]string{}
	for _, n := range names {
		b, err := NewBackend(bin, dir, n, extra...)
		if err != nil {
			s.Stop()
			return nil, err
		}
		if err := b.Start(); err != nil {
			s.Stop()
			return nil, err
		}
		s.Backends[n] = b
		table[n] = b.Addr
	}
	for n, to := range routes {
		table[n] = s.Backends[to].Addr
	}
	r, err := StartRouter(filepath.Join(dir, "nginx"), table)
	if err != nil {
		s.Stop()
		return nil, err
	}
	s.Router = r
	if s.Stock, err = StartStockProxy(filepath.Join(dir, "nginx-stock"), table); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops the router, the stock proxy and every backend.
func (s *Stack) Stop() {
	if s.Router != nil {
		s.Router.Stop()
	}
	if s.Stock != nil {
		s.Stock.Stop()
	}
	for _, b := range s.Backends {
		b.Stop(15 * time.Second)
	}
}
