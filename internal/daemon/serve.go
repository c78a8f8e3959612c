package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/hashline/hashline/internal/buildinfo"
	"github.com/hashline/hashline/internal/checkers"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/wire"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

const usage = `hashlined serves a workspace directory to LLM agents over gRPC (hashline.v1.FileService).

usage:
  hashlined serve [flags]    serve the workspace (default: the current directory on 127.0.0.1:7420)
  hashlined state list|prune list, or remove, the state directories of workspace roots
                             that no longer exist (hashlined state --help)
  hashlined help             show this help
  hashlined --version        print the version, commit and Go version

Every flag may also come from the environment variable shown with it (e.g.
HASHLINED_LISTEN=unix:///tmp/h.sock); the command line wins.

flags of serve:
`

// envKey is the environment variable of the flag name.
func envKey(name string) string {
	return "HASHLINED_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// printUsage writes the help: the usage, then every flag of serve with its
// type, environment variable, default and description, generated from the
// flag set so that it cannot drift from what serve accepts.
func printUsage(w io.Writer) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	flags(fs)
	fmt.Fprint(w, usage)
	fs.VisitAll(func(f *flag.Flag) {
		typ, desc := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		meta := "env " + envKey(f.Name)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			meta += ", default " + f.DefValue
		}
		fmt.Fprintf(w, "%s  (%s)\n      %s\n", line, meta, desc)
	})
}

// config is the binary's flags; the libraries take functional options.
type config struct {
	kind           string        // who runs the engine, for the record of its place
	ready          chan struct{} // closed once the engine serves (Embed)
	extras         Extras
	hup            <-chan os.Signal // SIGHUPs to answer (Run's); nil when embedded
	idleExit       time.Duration
	root           string
	workspace      string
	listen         string
	hashLen        int
	logFormat      string
	logLevel       string
	readLimit      int
	readBytes      int
	maxLineBytes   int
	maxFileBytes   int64
	maxEdits       int
	maxRecvBytes   int
	maxRespBytes   int
	defaultTimeout time.Duration
	shutdownGrace  time.Duration
	fsync          bool
	allowVCSRead   bool

	// Exposure: authentication, transport security, limits, metrics.
	tokens           string
	insecureNoAuth   bool
	tlsCert          string
	tlsKey           string
	tlsClientCA      string
	rate             float64
	burst            int
	maxStreams       uint
	agentStreams     int
	keepaliveTime    time.Duration
	keepaliveTimeout time.Duration
	keepaliveMinTime time.Duration
	metricsListen    string
	cleanTemp        bool
	otlpEndpoint     string
	otlpProtocol     string

	// Versions and the multi-agent model.
	cacheBytes   int64
	viewEntries  int
	viewBytes    int64
	requireRead  bool
	stateDir     string
	stateBytes   int64
	historyBytes int64
	historyAge   time.Duration

	// Idempotency keys of Edit and Write (request_id).
	requestIDTTL   time.Duration
	requestIDBytes int64

	// Grep.
	maxPatternBytes int
	grepBytes       int64

	// Memory that Read, Edit, Write and Apply calls hold at once.
	memoryBudget int64

	// The syntax check of edits and writes.
	syntax       syntaxFlag
	syntaxStrict globsFlag

	// The operator's check and format commands.
	checks, formats  commandsFlag
	checkTimeout     time.Duration
	checkOutputBytes int

	// A file of flag values (config.go).
	config string
}

// syntaxFlag is --syntax: off, advisory or strict.
type syntaxFlag struct{ mode engine.SyntaxMode }

func (f *syntaxFlag) String() string { return f.mode.String() }
func (f *syntaxFlag) Set(v string) (err error) {
	f.mode, err = engine.ParseSyntaxMode(v)
	return err
}

// globsFlag is a repeatable flag of globs, one a use.
type globsFlag []string

func (g *globsFlag) String() string { return strings.Join(*g, " ") }
func (g *globsFlag) Set(v string) error {
	if err := engine.CheckSyntaxGlobs([]string{v}); err != nil {
		return err
	}
	*g = append(*g, v)
	return nil
}

func (g *globsFlag) repeatable() {}

// commandsFlag is a repeatable flag of GLOB=COMMAND rules, one a use;
// their programs are found when the engine opens.
type commandsFlag []string

func (c *commandsFlag) String() string { return strings.Join(*c, " ") }
func (c *commandsFlag) Set(v string) error {
	if _, err := checkers.Parse(v); err != nil {
		return err
	}
	*c = append(*c, v)
	return nil
}

func (c *commandsFlag) repeatable() {}

// runtimeAllowance is what the soft memory limit allows besides the
// memory budget and the caches: the runtime, goroutine stacks, connection
// buffers and the small structures no bound counts.
const runtimeAllowance = 16 << 20

// flags defines serve's flags on fs. The engine's settings take their
// defaults from engine.DefaultConfig, so that every program starting an
// engine starts the same one.
func flags(fs *flag.FlagSet) *config {
	c := &config{}
	d := engine.DefaultConfig()
	fs.StringVar(&c.root, "root", ".", "workspace root directory; every path is confined to it")
	fs.StringVar(&c.workspace, "workspace", "", "the workspace's name, a DNS label such as \"alpha\": Status reports it, and a call whose x-hashline-workspace metadata names another workspace is refused (WRONG_WORKSPACE), so that a router's mistake never edits this tree; calls that name none are served. Give every server behind a router one (docs/DESIGN.md, Deployment)")
	fs.StringVar(&c.listen, "listen", "127.0.0.1:7420", "address to listen on: host:port, or unix:///path/to.sock (port 0 picks a free port); empty = only the workspace's own socket, which hashline --local and hashline mcp find by themselves")
	fs.DurationVar(&c.idleExit, "idle-exit", 0, "stop once no client has been connected for this long (0 = never); the engine hashline starts for its sessions uses it")
	fs.IntVar(&c.hashLen, "hash-len", d.HashLen, "hex digits per line hash, 2 to 8")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json (logs go to stderr)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.IntVar(&c.readLimit, "read-limit", d.ReadLimit, "most lines one Read returns")
	fs.IntVar(&c.readBytes, "read-bytes", d.ReadBytes, "most bytes of tagged text one Read returns")
	fs.IntVar(&c.maxLineBytes, "max-line-bytes", d.MaxLineBytes, "lines longer than this are shown cut (their hash covers the whole line)")
	fs.Int64Var(&c.maxFileBytes, "max-file-bytes", d.MaxFileBytes, "largest file Read, Edit, Write and Grep handle")
	fs.IntVar(&c.maxEdits, "max-edits", d.MaxEdits, "most edits in one Edit batch")
	fs.IntVar(&c.maxRecvBytes, "max-recv-bytes", 64<<20, "largest request message")
	fs.IntVar(&c.maxRespBytes, "max-response-bytes", d.MaxResponseBytes, "largest Edit response; a bigger one is refused before writing (grpc clients accept 4 MiB by default)")
	fs.DurationVar(&c.defaultTimeout, "default-timeout", 60*time.Second, "deadline for calls that arrive without one, Watch streams excepted (0 = none)")
	fs.DurationVar(&c.shutdownGrace, "shutdown-grace", 10*time.Second, "on SIGINT/SIGTERM, how long in-flight calls may finish before they are cut")
	fs.BoolVar(&c.fsync, "fsync", !d.NoFsync, "fsync files and directories on write; false is UNSAFE (a crash can lose acknowledged edits, or leave a file just written holding zeros) and meant for benchmarks")
	fs.BoolVar(&c.allowVCSRead, "allow-vcs-read", d.AllowVCSRead, "let Read and Grep read version-control metadata ("+strings.Join(workspace.VCSDirs(), ", ")+"), refused by default (VCS_METADATA); writing there is refused regardless")
	fs.StringVar(&c.tokens, "tokens", "", "token file (YAML or JSON, see SECURITY.md): every call but health and reflection then needs \"authorization: Bearer <token>\"; SIGHUP reloads it")
	fs.BoolVar(&c.insecureNoAuth, "insecure-no-auth", false, "allow listening on a non-loopback address without --tokens (anyone who can connect can read and change the workspace)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "TLS certificate (PEM); with --tls-key, serve TLS instead of plaintext")
	fs.StringVar(&c.tlsKey, "tls-key", "", "TLS private key (PEM) of --tls-cert")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", "", "CA certificates (PEM): require client certificates signed by them (mutual TLS)")
	fs.Float64Var(&c.rate, "rate", 0, "calls per second each agent may make, refilled continuously (0 = no limit); over it calls fail RESOURCE_EXHAUSTED RATE_LIMITED with a retry delay")
	fs.IntVar(&c.burst, "burst", 50, "calls an agent may make at once before --rate applies")
	fs.UintVar(&c.maxStreams, "max-concurrent-streams", 256, "calls in flight on one connection; more wait for a free slot")
	fs.IntVar(&c.agentStreams, "streams-per-agent", server.DefaultStreamsPerAgent, "Grep and Watch streams one agent may have open at once; more are refused RESOURCE_EXHAUSTED TOO_MANY_STREAMS (0 = no limit)")
	fs.DurationVar(&c.keepaliveTime, "keepalive-time", 2*time.Minute, "ping a client after this long without activity, to find dead connections")
	fs.DurationVar(&c.keepaliveTimeout, "keepalive-timeout", 20*time.Second, "close a connection whose ping is not answered within this")
	fs.DurationVar(&c.keepaliveMinTime, "keepalive-min-time", 10*time.Second, "shortest interval between a client's pings; a client pinging more often is disconnected (GOAWAY too_many_pings)")
	fs.StringVar(&c.metricsListen, "metrics-listen", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9420; empty = off)")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", "", "export OpenTelemetry traces of every call and of the engine's steps to the OTLP collector at this URL (http:// or https://, as OTEL_EXPORTER_OTLP_ENDPOINT; empty = off unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set); callers' W3C trace context (traceparent) is continued. The other OTEL_* variables apply (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SDK_DISABLED...)")
	fs.StringVar(&c.otlpProtocol, "otlp-protocol", "", "OTLP protocol of the traces (--otlp-endpoint or the OTEL_* endpoint): grpc or http/protobuf (empty = OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf, the OTLP default)")
	fs.BoolVar(&c.cleanTemp, "clean-temp", !d.NoSweep, "at startup, remove in the background the temporary files an interrupted write left behind (regular files named exactly .hashline-, 26 characters A-Z or 2-7, .tmp, older than the process)")
	fs.Int64Var(&c.cacheBytes, "cache-bytes", d.CacheBytes, "bytes of file snapshots kept in memory to rebase edits made against older versions (LRU, shared by all agents; 0 = none); an edit whose base is neither here nor in the state store is refused (STALE_REF) unless it has no line references")
	fs.StringVar(&c.stateDir, "state-dir", "", "directory of the server's own state, outside the workspace (refused inside it): the intent log that makes change sets (Apply) all or nothing across a crash, and snapshots that memory let go, for rebases, kept across restarts (default: hashline/<hash of the root> under $XDG_STATE_HOME, else ~/.local/state, %LocalAppData% on Windows, ~/Library/Application Support on macOS)")
	fs.Int64Var(&c.stateBytes, "state-bytes", d.StateBytes, "bytes of snapshots kept in --state-dir, oldest out (0 = none: an edit whose base memory let go is then refused unless it has no line references)")
	fs.Int64Var(&c.historyBytes, "history-bytes", d.HistoryBytes, "bytes of the change history kept in --state-dir (who changed what, when: History, Blame), oldest changes out")
	fs.DurationVar(&c.historyAge, "history-age", d.HistoryAge, "how long a change stays in the change history; older ones are no longer shown and their files are removed")
	fs.IntVar(&c.viewEntries, "view-entries", d.ViewEntries, "(agent, file) pairs whose last seen versions (4 each) and the lines shown of each are remembered (LRU); a forgotten pair must Read again")
	fs.DurationVar(&c.requestIDTTL, "request-id-ttl", d.RequestIDTTL, "how long the outcome of an Edit or Write with a request_id is remembered, so that a retry with the same key gets it instead of applying again (0 = off: retries apply again)")
	fs.Int64Var(&c.requestIDBytes, "request-id-bytes", d.RequestIDBytes, "memory for remembered request_id outcomes; past it the oldest are forgotten first")
	fs.Int64Var(&c.viewBytes, "view-bytes", d.ViewBytes, "bytes those pairs may take, each counted by its agent name, path, versions and runs of shown lines plus fixed overheads (LRU)")
	fs.IntVar(&c.maxPatternBytes, "max-pattern-bytes", d.MaxPatternBytes, "longest Grep pattern; a longer one is refused INVALID_ARGUMENT before it is compiled")
	fs.Int64Var(&c.grepBytes, "grep-bytes", d.GrepBytes, "bytes all Greps may hold at once (files found and not yet sent; each Grep holds at most "+strconv.Itoa(grep.DefaultMaxHeldBytes>>20)+" MiB of them, or one larger file); past it Greps wait for bytes, until their deadline, rather than fail")
	fs.Int64Var(&c.memoryBudget, "memory-budget", d.MemoryBudget, "bytes that Read, Edit, Write and Apply calls may hold at once, all together, each charged before it reads anything with the size of the files it reads times "+strconv.Itoa(engine.MemoryHoldFactor)+" at most; past it calls wait, until their deadline, and one call larger than it all is refused TOO_LARGE. The Go runtime's soft memory limit is set to it plus the caches' bounds (--cache-bytes twice, --view-bytes, --request-id-bytes, --grep-bytes) and 16 MiB, unless GOMEMLIMIT is set")
	c.syntax.mode = d.Syntax
	fs.Var(&c.syntax, "syntax", "`MODE` of the syntax check of every Edit, Write and Apply change, saying what a change that would introduce syntax errors into its file does: advisory writes it and lists the errors in the reply, strict refuses it (FAILED_PRECONDITION SYNTAX_ERROR) and writes nothing, off checks nothing (a request's strict_syntax still refuses)")
	fs.Var(&c.syntaxStrict, "syntax-strict", "check the files matching `GLOB` strictly whatever --syntax (repeatable; a glob without / matches the file name anywhere, as Grep's)")
	fs.Var(&c.checks, "check", "run the check command of `GLOB=COMMAND` on the new content of every Edit, Write and Apply change of a file the glob matches (repeatable; the glob as Grep's, the command split without a shell, the content on stdin and {} the path of a copy in a private directory outside the workspace; see SECURITY.md): its findings (lines FILE:LINE[:COL]: MESSAGE) come back like syntax errors, and strict syntax checking refuses them, e.g. --check '*.py=ruff check --output-format=concise --stdin-filename {} -'")
	fs.Var(&c.formats, "format", "put the new content of every Edit, Write and Apply change of a file the glob matches through the format command of `GLOB=COMMAND` before it is checked and written (repeatable; run as --check's): its stdout is written, and the reply's tags and version are the formatted file's; a formatter that fails leaves the content unformatted, with a warning, e.g. --format '*.go=gofmt'")
	fs.DurationVar(&c.checkTimeout, "check-timeout", d.CheckTimeout, "time limit of each run of a --check or --format command; one still running then is killed with its process group, and the change is reported not checked (or not formatted)")
	fs.IntVar(&c.checkOutputBytes, "check-output-bytes", d.CheckOutputBytes, "most bytes a --check command may print (stdout and stderr together), and a --format command on stderr; past it the command is killed and its output not used")
	fs.StringVar(&c.config, "config", "", "YAML (or JSON) file of flag values: each key a flag's name without --, each value its value, a list for --check, --format and --syntax-strict; flags on the command line and in the environment win over it (see the README, \"Configuration file\")")
	fs.BoolVar(&c.requireRead, "require-read", !d.NoRequireRead, "refuse replace/insert/delete/replaceText edits (NOT_READ) by an agent that has not seen the file through Read, Grep, Edit or Write")
	return c
}

// envDefaults sets every flag not given on the command line from its
// HASHLINED_* variable.
func envDefaults(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		key := envKey(f.Name)
		if v, ok := os.LookupEnv(key); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", key, v, err))
			}
		}
	})
	return errors.Join(errs...)
}

// Extras are what only hashlined links: a program's every import is
// initialised on each start, and hashline, which harnesses run once per
// tool call, must stay quick to start.
type Extras struct {
	// Metrics serves Prometheus metrics of svc on --metrics-listen addr
	// and returns the gRPC server's metrics, the address it listens on
	// and a func that stops it. Nil: --metrics-listen is refused.
	Metrics func(addr string, logger *slog.Logger, svc *server.Service) (server.Metrics, string, func(), error)
	// Register adds services to the gRPC server (reflection).
	Register func(*grpc.Server)
	// Tracing, when set, starts OpenTelemetry tracing as its config and
	// the OTEL_* environment say, or returns nil when they leave it off.
	// Nil: --otlp-endpoint is refused (the OTEL_* environment is ignored).
	Tracing func(TracingConfig) (*Tracing, error)
	// TuneRuntime, when set, is given the bytes the engine may hold live
	// and tunes the Go runtime for them (TuneRuntime) while ctx lasts,
	// which ends when the engine stops; what it returns, if not nil, the
	// engine tells when calls on large files run (engine.WithLargeCalls).
	// Only a program's main may change process-wide settings, so an
	// engine embedded in another program's process (Embed) leaves them
	// alone.
	TuneRuntime func(ctx context.Context, liveBytes int64) (largeCalls func(inFlight bool))
}

// TuneRuntime is the runtime tuning of a process whose main job is the
// engine (hashlined, hashline engine), for Extras.TuneRuntime.
//
// A call on a large file allocates file-sized buffers while the live heap
// (mostly the snapshot cache) stays put: at Go's default GOGC=100 the
// collector runs every few such calls and its work lands in theirs
// (BENCHMARKS.md, Edit of 100k lines). So while such calls run (the
// returned function is told, engine.WithLargeCalls) GOGC is largeCallsGOGC,
// which keeps the collector off their path; otherwise it is Go's default,
// under which a burst of calls on small files (many agents reading a
// repository) grows the heap to twice what is live, not five times
// (BENCHMARKS.md, "Resident memory of one hashlined").
//
// The soft memory limit, liveBytes, is what the server may hold live: the
// memory budget of its calls and the bounds of its caches, plus an
// allowance for the runtime and everything small; without it the heap
// would grow to several times the live bytes before a collection, past
// the budget the operator chose. GOGC and GOMEMLIMIT in the environment
// win, as for any Go program (GOGC set, nothing is returned). Until ctx
// ends, the memory a burst of calls leaves freed is returned to the
// operating system once the process goes quiet (releaseWhenQuiet),
// whatever GOGC.
func TuneRuntime(ctx context.Context, liveBytes int64) func(inFlight bool) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(liveBytes)
	}
	go releaseWhenQuiet(ctx)
	if os.Getenv("GOGC") != "" {
		return nil
	}
	return func(inFlight bool) {
		if inFlight {
			debug.SetGCPercent(largeCallsGOGC)
		} else {
			debug.SetGCPercent(100)
		}
	}
}

// largeCallsGOGC is GOGC while calls on large files run (TuneRuntime).
const largeCallsGOGC = 400

// Run runs the hashlined command line args ("serve [flags]", "help",
// "--version") as the process kind ("hashlined", or "hashline engine" for
// the engine hashline starts for its sessions), and returns the exit code.
func Run(kind string, args []string, stdout, stderr io.Writer, extras Extras) int {
	// The help is printed once: on stdout when asked for (exit 0), on
	// stderr after a usage error (exit 2).
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintln(stdout, buildinfo.Get().String("hashlined"))
		return 0
	}
	if args[0] != "serve" {
		fmt.Fprintf(stderr, "hashlined: unknown command %q; run 'hashlined help'\n", args[0])
		return 2
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr) // the flag package's error for a bad flag
	fs.Usage = func() {}
	c := flags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return 0
		}
		printUsage(stderr)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hashlined serve: unexpected argument %q (use --root to choose the workspace)\n", fs.Arg(0))
		return 2
	}
	if err := envDefaults(fs); err != nil {
		fmt.Fprintf(stderr, "hashlined serve: %v\n", err)
		return 2
	}
	if err := configDefaults(fs, c.config); err != nil {
		fmt.Fprintf(stderr, "hashlined serve: --config %s: %v\n", c.config, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup, stopHUP := catchHUP()
	defer stopHUP()
	c.kind, c.extras, c.hup = kind, extras, hup
	if err := serve(ctx, stop, c, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "hashlined serve: %v\n", err)
		return 1
	}
	return 0
}

func newLogger(c *config, w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.logLevel)
	}
	ho := &slog.HandlerOptions{Level: lvl}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", c.logFormat)
}

func serve(ctx context.Context, stopSignals func(), c *config, stdout, stderr io.Writer) error {
	started := time.Now()
	logger, err := newLogger(c, stderr)
	if err != nil {
		return err
	}
	if _, err := hashline.NewHasher(c.hashLen); err != nil {
		return fmt.Errorf("--hash-len: %w", err)
	}
	if c.workspace != "" {
		if err := wire.CheckWorkspaceName(c.workspace); err != nil {
			return fmt.Errorf("--workspace: %w", err)
		}
	}
	if err := checkExposure(c, logger); err != nil {
		return err
	}
	creds, err := tlsOption(c)
	if err != nil {
		return err
	}
	authn, reloadAuth, err := loadAuth(c, logger)
	if err != nil {
		return err
	}
	defer handleHUP(c.hup, logger, reloadAuth)()
	if c.rate < 0 || c.burst < 1 {
		return fmt.Errorf("--rate %g --burst %d: want a rate >= 0 (0 = off) and a burst >= 1", c.rate, c.burst)
	}
	if c.cacheBytes < 0 || c.viewEntries < 1 || c.viewBytes < 1 {
		return fmt.Errorf("--cache-bytes %d --view-entries %d --view-bytes %d: want bytes >= 0 (0 = no snapshots), entries >= 1 and view bytes >= 1", c.cacheBytes, c.viewEntries, c.viewBytes)
	}
	if c.agentStreams < 0 || c.maxPatternBytes < 1 {
		return fmt.Errorf("--streams-per-agent %d --max-pattern-bytes %d: want streams >= 0 (0 = no limit) and pattern bytes >= 1", c.agentStreams, c.maxPatternBytes)
	}
	if c.grepBytes < 1 {
		return fmt.Errorf("--grep-bytes %d: want bytes >= 1", c.grepBytes)
	}
	if c.requestIDTTL < 0 || c.requestIDBytes < 1 {
		return fmt.Errorf("--request-id-ttl %s --request-id-bytes %d: want a duration >= 0 (0 = off) and bytes >= 1", c.requestIDTTL, c.requestIDBytes)
	}
	if c.memoryBudget < 1 {
		return fmt.Errorf("--memory-budget %d: want bytes >= 1", c.memoryBudget)
	}
	if c.stateBytes < 0 {
		return fmt.Errorf("--state-bytes %d: want bytes >= 0 (0 = no snapshots on disk)", c.stateBytes)
	}
	if c.checkTimeout <= 0 || c.checkOutputBytes < 1 {
		return fmt.Errorf("--check-timeout %s --check-output-bytes %d: want a duration > 0 and bytes >= 1", c.checkTimeout, c.checkOutputBytes)
	}
	if c.historyBytes < 4096 || c.historyAge <= 0 {
		return fmt.Errorf("--history-bytes %d --history-age %s: want bytes >= 4096 and a duration > 0", c.historyBytes, c.historyAge)
	}
	// Tracing starts before the engine, which records spans with it, and
	// stops after it (this defer runs after the engine's Close).
	tracing, err := startTracing(c, logger)
	if err != nil {
		return err
	}
	if tracing != nil {
		defer stopTracing(tracing, logger)
	}
	cfg := engineConfig(c, logger)
	if tracing != nil {
		cfg.Options = append(cfg.Options, engine.WithTracerProvider(tracing.Provider))
	}
	if c.extras.TuneRuntime != nil {
		tuned, stopTuning := context.WithCancel(ctx)
		defer stopTuning()
		cfg.LargeCalls = c.extras.TuneRuntime(tuned, cfg.LiveBytes()+runtimeAllowance)
	}
	// One engine per workspace: the place's lock is held from before the
	// engine touches the root until it has stopped (Close releases it
	// last), so no second engine, of any kind, writes the root meanwhile.
	var (
		pl   place
		sock net.Listener
	)
	cfg.Hold = func(root string) (func(), error) {
		p, l, release, err := holdPlace(root)
		pl, sock = p, l
		return release, err
	}
	e, err := engine.Open(cfg)
	if err != nil {
		return flagError(err)
	}
	// After the gRPC server has stopped (every call has returned) and
	// the listeners are closed: the engine saves the snapshots held in
	// memory for the next engine of this workspace and lets go of it.
	defer func() {
		if err := e.Close(); err != nil {
			logger.Warn("stopping the engine", "err", err)
		}
	}()
	ws := e.Workspace()
	var lis net.Listener
	if c.listen != "" {
		l, cleanup, err := listen(c.listen)
		if err != nil {
			return err
		}
		defer cleanup()
		lis = l
	}

	svc := server.NewService(e)
	var (
		callMetrics server.Metrics
		metricsAddr string
		stopMetrics = func() {}
	)
	if c.metricsListen != "" {
		if c.extras.Metrics == nil {
			return fmt.Errorf("--metrics-listen: %s serves no metrics; run hashlined for them", c.kind)
		}
		callMetrics, metricsAddr, stopMetrics, err = c.extras.Metrics(c.metricsListen, logger, svc)
	}
	if err != nil {
		return err
	}
	defer stopMetrics()
	// Stop must still wait for handlers, so an edit cut at the end of the
	// grace period finishes its write before the root is closed.
	srvOpts := []grpc.ServerOption{grpc.WaitForHandlers(true)}
	if creds != nil {
		srvOpts = append(srvOpts, creds)
	}
	traces := "off"
	if tracing != nil {
		srvOpts = append(srvOpts, tracing.ServerOptions...)
		traces = tracing.Describe
	}
	var limiter *server.RateLimiter
	if c.rate > 0 {
		limiter = server.NewRateLimiter(c.rate, c.burst, 0)
	}
	var streams *server.StreamLimiter
	if c.agentStreams > 0 {
		streams = server.NewStreamLimiter(c.agentStreams)
	}
	gs, hs := server.NewGRPCServer(svc, server.GRPCConfig{
		MaxRecvBytes:         c.maxRecvBytes,
		MaxSendBytes:         c.maxRecvBytes,
		DefaultTimeout:       c.defaultTimeout,
		MaxConcurrentStreams: uint32(min(c.maxStreams, 1<<31)),
		Keepalive:            keepalive.ServerParameters{Time: c.keepaliveTime, Timeout: c.keepaliveTimeout},
		KeepalivePolicy:      keepalive.EnforcementPolicy{MinTime: c.keepaliveMinTime, PermitWithoutStream: true},
		Auth:                 authn,
		RateLimit:            limiter,
		StreamLimit:          streams,
		Metrics:              callMetrics,
		Tracing:              tracing != nil,
		Workspace:            c.workspace,
		Logger:               logger,
		ServerOptions:        srvOpts,
	})
	if c.extras.Register != nil {
		c.extras.Register(gs)
	}

	addr := "unix://" + pl.socket
	if lis != nil {
		addr = lis.Addr().String()
		if lis.Addr().Network() == "unix" {
			addr = "unix://" + addr
		}
	}
	if metricsAddr != "" {
		fmt.Fprintf(stdout, "hashlined: metrics on http://%s/metrics\n", metricsAddr)
	}
	if err := writeHolder(pl.record, holder{PID: os.Getpid(), Kind: c.kind, Root: ws.Dir(), Listen: tcpAddr(lis), Socket: pl.socket, Started: started}); err != nil {
		return fmt.Errorf("the engine's record in %s: %w", pl.dir, err)
	}
	// Tests and scripts read this line to find a port chosen with :0.
	fmt.Fprintf(stdout, "hashlined: serving %s on %s\n", ws.Dir(), addr)
	bi := buildinfo.Get()
	logger.Info("serving", "workspace", c.workspace, "version", bi.Version, "commit", bi.Commit, "go", bi.GoVersion, "root", ws.Dir(), "listen", addr, "socket", pl.socket, "hashLen", c.hashLen,
		"tls", creds != nil, "mtls", c.tlsClientCA != "", "tokens", authn != nil, "rate", c.rate, "metrics", metricsAddr, "traces", traces, "stateDir", e.StateDir())

	if c.ready != nil {
		close(c.ready)
	}
	conns := newConnCounter(c.idleExit)
	errc := make(chan error, 2)
	go func() { errc <- gs.Serve(conns.wrap(sock)) }()
	if lis != nil {
		go func() { errc <- gs.Serve(conns.wrap(lis)) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-conns.idle():
		logger.Info("no client for a while: stopping", "idle-exit", c.idleExit)
	}
	stopSignals() // a second Ctrl-C kills the process at once
	logger.Info("shutting down: finishing in-flight calls", "grace", c.shutdownGrace)
	hs.Shutdown() // health answers NOT_SERVING from here on
	e.Shutdown()  // Watch streams never end by themselves: end them now
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(c.shutdownGrace):
		logger.Warn("grace period over: cutting remaining calls")
		gs.Stop()
	}
	logger.Info("stopped")
	return nil
}

// engineConfig is the engine's configuration from the flags. A flag's 0
// that means none or off is the engine's negative value for it: the
// engine's zero is its default.
func engineConfig(c *config, logger *slog.Logger) engine.Config {
	none := func(n int64) int64 {
		if n == 0 {
			return -1
		}
		return n
	}
	ttl := c.requestIDTTL
	if ttl == 0 {
		ttl = -1
	}
	return engine.Config{
		Root:             c.root,
		StateDir:         c.stateDir,
		StateBytes:       none(c.stateBytes),
		HashLen:          c.hashLen,
		ReadLimit:        c.readLimit,
		ReadBytes:        c.readBytes,
		MaxLineBytes:     c.maxLineBytes,
		MaxFileBytes:     c.maxFileBytes,
		MaxEdits:         c.maxEdits,
		MaxResponseBytes: c.maxRespBytes,
		NoFsync:          !c.fsync,
		AllowVCSRead:     c.allowVCSRead,
		NoSweep:          !c.cleanTemp,
		CacheBytes:       none(c.cacheBytes),
		ViewEntries:      c.viewEntries,
		ViewBytes:        c.viewBytes,
		NoRequireRead:    !c.requireRead,
		RequestIDTTL:     ttl,
		RequestIDBytes:   c.requestIDBytes,
		MaxPatternBytes:  c.maxPatternBytes,
		GrepBytes:        c.grepBytes,
		MemoryBudget:     c.memoryBudget,
		HistoryBytes:     c.historyBytes,
		HistoryAge:       c.historyAge,
		Syntax:           c.syntax.mode,
		SyntaxStrict:     c.syntaxStrict,
		Checks:           c.checks,
		Formats:          c.formats,
		CheckTimeout:     c.checkTimeout,
		CheckOutputBytes: c.checkOutputBytes,
		Logger:           logger,
		// The gRPC face measures what it sends, for the response limit.
		Options: server.EngineOptions(),
	}
}

// settingFlags are the flags of the engine's settings Open can refuse.
var settingFlags = map[string]string{"Root": "--root", "StateDir": "--state-dir", "HashLen": "--hash-len", "HistoryBytes": "--history-bytes", "Checks": "--check", "Formats": "--format"}

// flagError names the flag of a setting engine.Open refused, as serve's
// other errors do.
func flagError(err error) error {
	var se *engine.SettingError
	if errors.As(err, &se) {
		if f, ok := settingFlags[se.Setting]; ok {
			return fmt.Errorf("%s: %w", f, se.Err)
		}
	}
	return err
}

// listen opens a TCP address or a unix:// socket path. A stale socket file
// left by a crashed server is removed; a live one is refused.
func listen(addr string) (net.Listener, func(), error) {
	path, ok := strings.CutPrefix(addr, "unix://")
	if !ok {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, nil, ListenError("--listen", addr, err)
		}
		return lis, func() {}, nil
	}
	if path == "" {
		return nil, nil, fmt.Errorf("--listen %s: want unix:///absolute/path.sock", addr)
	}
	path = filepath.Clean(path)
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, nil, fmt.Errorf("--listen %s: another server is listening there", addr)
		}
		// Only a refused connection proves the socket is dead; a busy or
		// slow server must not lose its socket file.
		if !refused(err) {
			return nil, nil, fmt.Errorf("--listen %s: the socket exists and its server did not answer (%v); remove it if no server owns it", addr, err)
		}
		os.Remove(path)
	}
	// Create the socket already private: no window with umask permissions.
	restore := privateFiles()
	lis, err := net.Listen("unix", path)
	restore()
	if err != nil {
		return nil, nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	// Only this user may talk to the server through the socket.
	if err := os.Chmod(path, 0o600); err != nil { // belt and braces
		lis.Close()
		return nil, nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	return lis, func() { lis.Close() }, nil
}

// Embed runs an engine in this process with hashlined serve's flags args,
// as the process kind, until ctx ends. It returns once the engine serves,
// with a func that waits for it to stop; an engine that cannot start (the
// workspace held by another, a bad flag) is its error.
func Embed(ctx context.Context, kind string, args []string, stderr io.Writer) (wait func() error, err error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := flags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := envDefaults(fs); err != nil {
		return nil, err
	}
	if err := configDefaults(fs, c.config); err != nil {
		return nil, fmt.Errorf("--config %s: %w", c.config, err)
	}
	c.kind, c.ready = kind, make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, func() {}, c, io.Discard, stderr) }()
	select {
	case <-c.ready:
		return func() error { return <-errc }, nil
	case err := <-errc:
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
}
