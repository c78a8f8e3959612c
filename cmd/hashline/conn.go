package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	goio "io"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/daemon"
	"github.com/hashline/hashline/internal/wire"
)

// connFlags are the flags every file command shares: where the service is,
// who is calling, and how to print.
type connFlags struct {
	server    string
	local     bool
	root      string
	agent     string
	token     string
	workspace string
	domain    string
	timeout   time.Duration
	json      bool
	tls       tlsFlags
	fs        *flag.FlagSet
}

const connHelp = `
connection (every command):
  --server ADDR   hashlined address: host:port or http://host:port
                  (plaintext), https://host:port (TLS), unix:///path.sock
                  (env HASHLINE_SERVER, default 127.0.0.1:7420)
  --local         use the engine of the current directory's workspace on
                  this machine instead of --server: the hashlined or session
                  engine serving it, or one started for it that stops once
                  idle (same rules, no server to start)
  --root DIR      with --local: the workspace directory (default .)
  --agent NAME    agent name sent with every call (env HASHLINE_AGENT); the
                  server remembers what each agent has read
  --token TOKEN   bearer token for a server started with --tokens
                  (env HASHLINE_TOKEN)
  --workspace NAME
                  the workspace the call is meant for, sent as
                  x-hashline-workspace: a router finds its server by it, and
                  a server serving another workspace refuses the call
                  (env HASHLINE_WORKSPACE)
  --workspace-domain DOMAIN
                  with --workspace: send the host NAME.DOMAIN, for a router
                  that routes by host but is reached at --server's address
                  (env HASHLINE_WORKSPACE_DOMAIN)
  --timeout D     deadline of the call (default 30s)
  --json          print the response as JSON (protojson) instead of text
` + tlsHelp

// tlsHelp documents the flags of tlsFlags, for the commands that call a
// server.
const tlsHelp = `
TLS (a server started with --tls-cert; https:// addresses turn it on):
  --tls           speak TLS to a host:port address
  --tls-ca FILE   trust the CA certificates (PEM) in FILE instead of the
                  system's (env HASHLINE_TLS_CA)
  --tls-cert FILE client certificate (PEM) for a server that asks for one
                  (mutual TLS, hashlined --tls-client-ca); with --tls-key
                  (env HASHLINE_TLS_CERT)
  --tls-key FILE  private key (PEM) of --tls-cert (env HASHLINE_TLS_KEY)
  --tls-server-name NAME
                  the name the server's certificate must hold, when it is
                  not the host in the address (env HASHLINE_TLS_SERVER_NAME)
  --tls-ca, --tls-cert, --tls-key and --tls-server-name turn TLS on too;
  their env vars apply only when it is on.
`

func (c *connFlags) register(fs *flag.FlagSet, io stdio) {
	fs.StringVar(&c.server, "server", envOr(io, "HASHLINE_SERVER", client.DefaultAddress), "")
	fs.BoolVar(&c.local, "local", false, "")
	fs.StringVar(&c.root, "root", "", "")
	fs.StringVar(&c.agent, "agent", io.getenv("HASHLINE_AGENT"), "")
	fs.StringVar(&c.token, "token", io.getenv("HASHLINE_TOKEN"), "")
	fs.StringVar(&c.workspace, "workspace", io.getenv("HASHLINE_WORKSPACE"), "")
	fs.StringVar(&c.domain, "workspace-domain", io.getenv("HASHLINE_WORKSPACE_DOMAIN"), "")
	fs.DurationVar(&c.timeout, "timeout", client.DefaultTimeout, "")
	fs.BoolVar(&c.json, "json", false, "")
	c.tls.register(fs, io)
	c.fs = fs
}

func envOr(io stdio, key, def string) string {
	if v := io.getenv(key); v != "" {
		return v
	}
	return def
}

// connect returns a client for the server, or for the workspace's engine with
// --local, and a func that releases it.
func (c *connFlags) connect(ctx context.Context) (*client.Client, func(), error) {
	opts := []client.Option{client.WithTimeout(c.timeout)}
	if c.agent != "" {
		opts = append(opts, client.WithAgentID(c.agent))
	}
	if c.token != "" {
		opts = append(opts, client.WithToken(c.token))
	}
	if c.workspace != "" {
		if err := wire.CheckWorkspaceName(c.workspace); err != nil {
			return nil, nil, fmt.Errorf("--workspace: %w", err)
		}
		opts = append(opts, client.WithWorkspace(c.workspace))
	}
	if c.domain != "" {
		if c.workspace == "" {
			return nil, nil, errors.New("--workspace-domain names the domain of a workspace's host: give --workspace NAME too (env HASHLINE_WORKSPACE)")
		}
		if c.local || c.root != "" {
			return nil, nil, errors.New("--workspace-domain: --local uses the workspace's engine on this machine, reached by no router")
		}
		opts = append(opts, client.WithWorkspaceDomain(c.domain))
	}
	if c.local || c.root != "" {
		if set := c.tls.set(c.fs); len(set) > 0 {
			return nil, nil, fmt.Errorf("%s: --local uses the workspace's engine on this machine, over a private socket with no connection to secure", strings.Join(set, " and "))
		}
		root := c.root
		if root == "" {
			root = "."
		}
		start, err := engineStart()
		if err != nil {
			return nil, nil, err
		}
		// One shot or not, the command is a client of the workspace's one
		// engine: an edit here and an agent's edit through hashlined or
		// hashline mcp are checked and rebased against each other.
		cl, err := daemon.Attach(ctx, root, start, opts...)
		if err != nil {
			return nil, nil, err
		}
		return cl, func() { cl.Close() }, nil
	}
	tlsOpts, err := c.tls.options(c.fs, c.server)
	if err != nil {
		return nil, nil, err
	}
	cl, err := client.Dial(c.server, append(opts, tlsOpts...)...)
	if err != nil {
		return nil, nil, err
	}
	return cl, func() { cl.Close() }, nil
}

// parse parses args with flags allowed before, between and after the
// positional arguments ("edit FILE --dry-run" and "edit --dry-run FILE"),
// and returns the positional ones; "--" ends the flags. It prints the usage
// and returns exitOK for --help, or the error (flagError) and exitUsage for
// a bad flag; -1 means go on.
func parse(fs *flag.FlagSet, io stdio, usage string, args []string) ([]string, int) {
	// The flag package prints a bad flag's error and then calls Usage, for
	// -help too; here the usage goes to stdout for --help only, and a bad
	// flag gets its error and a pointer to --help.
	fs.SetOutput(goio.Discard) // flagError prints the error
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(io.stdout, usage)
				return nil, exitOK
			}
			return nil, flagError(io, fs.Name(), fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, -1
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), -1
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError prints a usage problem and returns exitUsage.
func usageError(io stdio, cmd, format string, args ...any) int {
	fmt.Fprintf(io.stderr, "hashline %s: %s\n", cmd, fmt.Sprintf(format, args...))
	fmt.Fprintf(io.stderr, "Run \"hashline %s --help\" for usage.\n", cmd)
	return exitUsage
}

// fail prints a call's error the way a model acts on it and returns the
// exit code: exitStale when the file changed since it was read (the fresh
// tags are printed), else exitError.
func fail(io stdio, cmd string, err error) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(io.stderr, "hashline %s: interrupted\n", cmd)
		return exitError
	}
	var stale client.StaleRefError
	if errors.As(err, &stale) {
		fmt.Fprint(io.stderr, client.FormatError(err))
		fmt.Fprintln(io.stderr, "Retry with the refs above (or read the file again).")
		return exitStale
	}
	if errors.Is(err, client.ErrVersionMismatch) {
		fmt.Fprint(io.stderr, client.FormatError(err))
		fmt.Fprintln(io.stderr, "The file changed since that version: read it again and retry.")
		return exitStale
	}
	var e *client.Error
	if errors.As(err, &e) {
		msg := client.FormatError(err)
		if e.TLS != client.NoTLSProblem {
			// The server is there: its TLS set-up and the client's differ.
			msg = strings.TrimSuffix(msg, "\n") + "\n" + e.TLS.FlagHint() + "\n"
		} else if e.Reason == "" && e.NotSent && e.Code == codes.Unavailable {
			// The call never left: say so, or a model retries an edit
			// it fears was applied.
			msg = strings.TrimSuffix(msg, "\n") + "\nNothing was sent: no hashlined answered there. Start one with \"hashlined serve\", pass --server ADDR, or use --local.\n"
		} else if e.Reason == "" && e.NotSent {
			msg = strings.TrimSuffix(msg, "\n") + "\nNothing was sent: the call ended before it reached the server. Retry (with a longer --timeout if it ran out).\n"
		} else if e.Reason == "" && e.Code == codes.Unavailable && e.HTTPStatus == 0 && !strings.HasPrefix(e.Message, wire.RouterMessagePrefix) {
			msg = strings.TrimSuffix(msg, "\n") + "\nIs hashlined running there? Start it with \"hashlined serve\", pass --server ADDR, or use --local.\n"
		} else if e.Code == codes.Unauthenticated {
			msg = strings.TrimSuffix(msg, "\n") + "\nThe server wants a token: pass --token TOKEN or set HASHLINE_TOKEN.\n"
		}
		fmt.Fprint(io.stderr, msg)
		return exitError
	}
	fmt.Fprintf(io.stderr, "hashline %s: %v\n", cmd, err)
	return exitError
}

// failMutation is fail for an edit or write with the request_id id: when
// the call may have been applied although it failed (cut off by the
// deadline, a lost connection or an interrupt), it says how to find out
// without applying it twice.
func failMutation(io stdio, cmd string, err error, id string) int {
	code := fail(io, cmd, err)
	var e *client.Error
	cut := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &e) && !e.NotSent && (e.Code == codes.DeadlineExceeded || e.Code == codes.Unavailable || e.Code == codes.Canceled))
	if cut && id != "" {
		fmt.Fprintf(io.stderr, "The %s may have been applied although the call failed. Re-run the same command with --request-id %s: the server applies it at most once and prints the outcome.\n", cmd, id)
	}
	return code
}

// printResult prints a call's response: as indented JSON with --json, else
// as the text a model reads. It returns the exit code.
func printResult(io stdio, op string, json bool, m proto.Message, text func() string) int {
	if json {
		if err := printJSON(io, m); err != nil {
			return fail(io, op, err)
		}
		return exitOK
	}
	fmt.Fprint(io.stdout, text())
	return exitOK
}

// printJSON writes m as protojson, the JSON grpcurl users see, indented
// by encoding/json: protojson varies its whitespace on purpose, and a
// shell user's diffs and our golden files need it stable.
func printJSON(io stdio, m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = io.stdout.Write(out.Bytes())
	return err
}

// errStdinTerminal is readStdin's refusal to wait on a terminal for input
// nobody is about to type; each caller says what it wanted there.
var errStdinTerminal = errors.New("stdin is a terminal")

// readStdin reads all of stdin for a command that takes its input there.
func readStdin(io stdio) (string, error) {
	if io.stdin == nil {
		return "", nil
	}
	if f, ok := io.stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return "", errStdinTerminal
		}
	}
	b, err := goio.ReadAll(io.stdin)
	return string(b), err
}

// tlsFlags are the TLS settings of a command that calls a server: the
// CLI's file commands and hashline mcp --server.
type tlsFlags struct {
	on                        bool
	ca, cert, key, serverName string
}

// tlsFlagNames are the flags tlsFlags registers, in the order they are
// named in messages.
var tlsFlagNames = []string{"tls", "tls-ca", "tls-cert", "tls-key", "tls-server-name"}

// register adds the TLS flags to fs, their defaults from the environment.
func (t *tlsFlags) register(fs *flag.FlagSet, io stdio) {
	fs.BoolVar(&t.on, "tls", false, "with --server: speak TLS to a host:port address (https:// addresses always do)")
	fs.StringVar(&t.ca, "tls-ca", io.getenv("HASHLINE_TLS_CA"), "with --server: trust the CA certificates (PEM) in this file instead of the system's (env HASHLINE_TLS_CA)")
	fs.StringVar(&t.cert, "tls-cert", io.getenv("HASHLINE_TLS_CERT"), "with --server: client certificate (PEM) for a hashlined that asks for one (mutual TLS), with --tls-key (env HASHLINE_TLS_CERT)")
	fs.StringVar(&t.key, "tls-key", io.getenv("HASHLINE_TLS_KEY"), "with --server: private key (PEM) of --tls-cert (env HASHLINE_TLS_KEY)")
	fs.StringVar(&t.serverName, "tls-server-name", io.getenv("HASHLINE_TLS_SERVER_NAME"), "with --server: the name the server's certificate must hold, when it is not the address's host (env HASHLINE_TLS_SERVER_NAME)")
}

// set returns the TLS flags given on the command line, as "--name".
func (t *tlsFlags) set(fs *flag.FlagSet) []string {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var out []string
	for _, n := range tlsFlagNames {
		if given[n] {
			out = append(out, "--"+n)
		}
	}
	return out
}

// options returns the client options that secure a connection to addr.
// TLS is on for an https:// address, and for a bare one with --tls or any
// other TLS flag on the command line; the HASHLINE_TLS_* variables then
// fill in the flags not given, and are ignored while TLS is off, so that
// setting them for one server does not break a plaintext or unix one.
func (t *tlsFlags) options(fs *flag.FlagSet, addr string) ([]client.Option, error) {
	set := t.set(fs)
	lower := strings.ToLower(addr)
	https, http := strings.HasPrefix(lower, "https://"), strings.HasPrefix(lower, "http://")
	if http && len(set) > 0 {
		verb := "asks"
		if len(set) > 1 {
			verb = "ask"
		}
		return nil, fmt.Errorf("%s %s for TLS but %s is plaintext: use https://%s", strings.Join(set, " and "), verb, addr, addr[len("http://"):])
	}
	if !https && len(set) == 0 {
		return nil, nil
	}
	if (t.cert == "") != (t.key == "") {
		return nil, errors.New("--tls-cert and --tls-key go together (env HASHLINE_TLS_CERT, HASHLINE_TLS_KEY): give both, or neither")
	}
	cfg, err := client.TLSConfig(t.ca, t.cert, t.key, t.serverName)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "hashline: "))
	}
	return []client.Option{client.WithTLS(cfg)}, nil
}
