package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hashline/hashline/internal/checkers"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/versions"
	"github.com/hashline/hashline/internal/workspace"
)

// Config is everything Open needs to start an engine over a workspace root.
// Its zero value, with a Root, is the engine hashlined serves by default:
// every field left zero takes the default DefaultConfig holds, which is
// also where hashlined's flags take theirs from, so that an engine started
// by any program behaves alike. A field below is at its default when it is
// zero or less, unless it says that a negative value means "none" or
// "off" (StateBytes, CacheBytes, RequestIDTTL).
type Config struct {
	// Root is the workspace's root directory; every path is confined to
	// it. Required.
	Root string
	// StateDir is the engine's own directory outside the workspace (the
	// intent log, snapshots kept across restarts); "" is the root's
	// default (state.DefaultDir).
	StateDir string
	// StateBytes bounds the snapshots kept in StateDir, oldest out
	// (default versions.DefaultDiskBytes; negative keeps none there).
	StateBytes int64

	// HashLen is the hex digits of every line hash (default
	// hashline.DefaultHashLen; hashline.MinHashLen to MaxHashLen).
	HashLen int
	// ReadLimit is the most lines one Read returns (DefaultReadLimit).
	ReadLimit int
	// ReadBytes is the most bytes of tagged text one Read returns
	// (DefaultReadByteBudget).
	ReadBytes int
	// MaxLineBytes is the length past which a line is shown cut
	// (DefaultMaxLineBytes).
	MaxLineBytes int
	// MaxFileBytes is the largest file the engine reads or writes
	// (workspace.DefaultMaxFileBytes).
	MaxFileBytes int64
	// MaxEdits is the most edits of one batch (DefaultMaxEdits).
	MaxEdits int
	// MaxResponseBytes is the largest Edit response
	// (DefaultMaxResponseBytes).
	MaxResponseBytes int
	// NoFsync turns off the syncing of written files, directories and
	// intent records. UNSAFE: a crash can lose acknowledged writes or leave
	// a file holding zeros; it is for benchmarks.
	NoFsync bool
	// AllowVCSRead lets reads reach version-control metadata
	// (workspace.WithVCSRead); writing there is refused regardless.
	AllowVCSRead bool
	// NoSweep keeps Open from removing, in the background, the temporary
	// files interrupted writes left in the root (workspace.SweepTemp).
	NoSweep bool

	// CacheBytes bounds the snapshots kept in memory for rebases
	// (versions.DefaultCacheBytes; negative keeps none in memory).
	CacheBytes int64
	// ViewEntries and ViewBytes bound the (agent, file) pairs remembered
	// (versions.DefaultViewEntries, versions.DefaultViewBytes).
	ViewEntries int
	ViewBytes   int64
	// NoRequireRead lets an agent edit lines of a file it has not seen
	// (WithRequireRead(false)).
	NoRequireRead bool
	// RequestIDTTL is how long the outcome of a call with a request_id is
	// remembered (DefaultRequestIDTTL; negative turns the table off), and
	// RequestIDBytes the memory of those outcomes (DefaultRequestIDBytes).
	RequestIDTTL   time.Duration
	RequestIDBytes int64
	// MaxPatternBytes is the longest Grep pattern
	// (DefaultMaxPatternBytes); GrepBytes what all Greps hold at once
	// (DefaultGrepBytes).
	MaxPatternBytes int
	GrepBytes       int64
	// MemoryBudget is what Read, Edit, Write and Apply calls hold at once
	// (DefaultMemoryBudget).
	MemoryBudget int64
	// LargeCalls, when set, is told when calls on large files are in
	// flight (WithLargeCalls).
	LargeCalls func(inFlight bool)

	// Syntax is what an edit or write that would introduce syntax errors
	// does (SyntaxAdvisory, the zero value and default: written, and
	// reported); SyntaxStrict lists globs of files checked strictly
	// whatever the mode (WithSyntax).
	Syntax       SyntaxMode
	SyntaxStrict []string

	// Checks and Formats are the operator's commands for the files of a
	// glob, each "GLOB=COMMAND" (internal/checkers: how a command is split
	// and run; checkers.go: what it does to a change). A check command's
	// findings are listed like syntax errors; a format command's output is
	// what is written. Open refuses a rule it cannot parse, or whose
	// program it cannot find.
	Checks, Formats []string
	// CheckTimeout bounds each run of a command
	// (checkers.DefaultTimeout); CheckOutputBytes what a check command
	// may print (checkers.DefaultOutputBytes).
	CheckTimeout     time.Duration
	CheckOutputBytes int

	// Logger receives the engine's log; nil discards it.
	Logger *slog.Logger
	// Hold, when set, is called with the workspace's directory once it is
	// open and before anything in it or in the state directory is read or
	// changed: it claims the root for this engine (a program's lock of one
	// engine per workspace), and its error, returned by Open as it is,
	// stops the start. Close calls the release it returns last, once the
	// engine has let go of the root and the state directory.
	Hold func(root string) (release func(), err error)
	// HistoryBytes bounds the change history's files in StateDir, oldest
	// out (history.DefaultMaxBytes), and HistoryAge the age of the
	// changes it keeps (history.DefaultMaxAge).
	HistoryBytes int64
	HistoryAge   time.Duration

	// Options are applied to New after those Config's fields make (a
	// face's measure of responses, test hooks). They must not set the
	// snapshot disk or the intent log, which Open owns.
	Options []Option
}

// DefaultConfig returns the configuration a zero Config stands for, every
// default filled in (Root and StateDir excepted): the one place the
// defaults are kept, for Open and for the flags of the programs that start
// engines.
func DefaultConfig() Config {
	return Config{
		StateBytes:       versions.DefaultDiskBytes,
		HashLen:          hashline.DefaultHashLen,
		ReadLimit:        DefaultReadLimit,
		ReadBytes:        DefaultReadByteBudget,
		MaxLineBytes:     DefaultMaxLineBytes,
		MaxFileBytes:     workspace.DefaultMaxFileBytes,
		MaxEdits:         DefaultMaxEdits,
		MaxResponseBytes: DefaultMaxResponseBytes,
		CacheBytes:       versions.DefaultCacheBytes,
		ViewEntries:      versions.DefaultViewEntries,
		ViewBytes:        versions.DefaultViewBytes,
		RequestIDTTL:     DefaultRequestIDTTL,
		RequestIDBytes:   DefaultRequestIDBytes,
		MaxPatternBytes:  DefaultMaxPatternBytes,
		GrepBytes:        DefaultGrepBytes,
		MemoryBudget:     DefaultMemoryBudget,
		HistoryBytes:     history.DefaultMaxBytes,
		HistoryAge:       history.DefaultMaxAge,
		Syntax:           SyntaxAdvisory,
		CheckTimeout:     checkers.DefaultTimeout,
		CheckOutputBytes: checkers.DefaultOutputBytes,
	}
}

// withDefaults is c with every zero field set from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	orInt := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	orInt64 := func(p *int64, v int64) {
		if *p <= 0 {
			*p = v
		}
	}
	// Here zero alone is the default: a negative value means none or off
	// (or is refused, HashLen).
	if c.StateBytes == 0 {
		c.StateBytes = d.StateBytes
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = d.CacheBytes
	}
	if c.HashLen == 0 {
		c.HashLen = d.HashLen
	}
	if c.RequestIDTTL == 0 {
		c.RequestIDTTL = d.RequestIDTTL
	}
	orInt(&c.ReadLimit, d.ReadLimit)
	orInt(&c.ReadBytes, d.ReadBytes)
	orInt(&c.MaxLineBytes, d.MaxLineBytes)
	orInt64(&c.MaxFileBytes, d.MaxFileBytes)
	orInt(&c.MaxEdits, d.MaxEdits)
	orInt(&c.MaxResponseBytes, d.MaxResponseBytes)
	orInt(&c.ViewEntries, d.ViewEntries)
	orInt64(&c.ViewBytes, d.ViewBytes)
	orInt64(&c.RequestIDBytes, d.RequestIDBytes)
	orInt(&c.MaxPatternBytes, d.MaxPatternBytes)
	orInt64(&c.GrepBytes, d.GrepBytes)
	orInt64(&c.MemoryBudget, d.MemoryBudget)
	orInt64(&c.HistoryBytes, d.HistoryBytes)
	orInt(&c.CheckOutputBytes, d.CheckOutputBytes)
	if c.CheckTimeout <= 0 {
		c.CheckTimeout = d.CheckTimeout
	}
	if c.HistoryAge <= 0 {
		c.HistoryAge = d.HistoryAge
	}
	return c
}

// LiveBytes is what an engine of c may hold live at most by its own
// bounds: the memory budget of its calls and the bounds of its caches
// (the snapshot cache counted twice: a snapshot is parsed beside the text
// it was read as). A program that tunes its runtime adds what no bound
// counts (the runtime, stacks, connection buffers).
func (c Config) LiveBytes() int64 {
	c = c.withDefaults()
	return c.MemoryBudget + 2*max(c.CacheBytes, 0) + c.ViewBytes + c.RequestIDBytes + c.GrepBytes
}

// SettingError is Open's error about one field of Config, named by
// Setting, so that a program can name the flag of its own that set it.
type SettingError struct {
	Setting string
	Err     error
}

func (e *SettingError) Error() string { return e.Setting + ": " + e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// opened is what Open started and Close stops; nil for an engine of New,
// whose caller keeps what it passed.
type opened struct {
	stateDir    string
	recovered   Recovered // what Recover did at start
	disk        *versions.Disk
	history     *history.Log
	releaseLog  func() error
	releaseHold func()
	stopSweep   func()
	closeOnce   sync.Once
	closeErr    error
}

// Open starts an engine as c says: it opens the workspace, claims it
// (c.Hold), opens the state directory and takes its intent log's lock (one
// engine at a time replays and commits through a log), opens the change
// history (its "history" subdirectory), finishes the change sets a crash
// left committed (Recover, recording each in the history) and resolves the
// history's entries a crash left pending (record.go), opens the snapshot
// store, and starts removing, in the background, the temporary files
// interrupted writes left. Recovery runs before the sweep, which would remove a
// committed set's staged files, and both before Open returns, so nothing
// is served over a half-finished set. On failure everything started is
// let go again. Close stops what Open started.
func Open(c Config) (*Engine, error) {
	started := time.Now()
	if c.Root == "" {
		return nil, &SettingError{Setting: "Root", Err: errors.New("no workspace root given")}
	}
	c = c.withDefaults()
	logger := c.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := CheckSyntaxGlobs(c.SyntaxStrict); err != nil {
		return nil, &SettingError{Setting: "SyntaxStrict", Err: err}
	}
	checks, err := ParseCommands(c.Checks)
	if err != nil {
		return nil, &SettingError{Setting: "Checks", Err: err}
	}
	formats, err := ParseCommands(c.Formats)
	if err != nil {
		return nil, &SettingError{Setting: "Formats", Err: err}
	}
	hasher, err := hashline.NewHasher(c.HashLen)
	if err != nil {
		return nil, &SettingError{Setting: "HashLen", Err: err}
	}
	ws, err := workspace.Open(c.Root, workspace.WithMaxFileBytes(c.MaxFileBytes), workspace.WithFsync(!c.NoFsync), workspace.WithVCSRead(c.AllowVCSRead))
	if err != nil {
		return nil, &SettingError{Setting: "Root", Err: err}
	}
	if len(checks)+len(formats) > 0 {
		if err := checkCommandPlaces("", ws.Dir(), slices.Concat(checks, formats)); err != nil {
			ws.Close()
			return nil, &SettingError{Setting: "Checks", Err: err}
		}
	}
	if c.NoFsync {
		logger.Warn("fsync is off: a crash or power loss can lose or corrupt acknowledged writes")
	}
	o := &opened{}
	// undo lets go of what was started, in reverse order, when a later
	// step fails.
	undo := func() {
		if o.history != nil {
			o.history.Close()
		}
		if o.disk != nil {
			o.disk.Close()
		}
		if o.releaseLog != nil {
			o.releaseLog()
		}
		ws.Close()
		if o.releaseHold != nil {
			o.releaseHold()
		}
	}
	if c.Hold != nil {
		release, err := c.Hold(ws.Dir())
		if err != nil {
			ws.Close()
			return nil, err
		}
		o.releaseHold = release
	}
	stateErr := func(err error) error {
		undo()
		return &SettingError{Setting: "StateDir", Err: err}
	}
	sd, err := state.Open(c.StateDir, ws.Dir())
	if err != nil {
		return nil, stateErr(err)
	}
	o.stateDir = sd.Path()
	intents, err := sd.Intents(!c.NoFsync)
	if err != nil {
		return nil, stateErr(err)
	}
	// The intent log's own lock guards a state directory that the engines
	// of two roots were given.
	if o.releaseLog, err = intents.Lock(); err != nil {
		return nil, stateErr(err)
	}
	// The history is opened first: replay records the sets it finishes.
	// It is written without a sync per change (history.Options.Fsync):
	// its entries are prepared before the changes they record are made
	// (record.go).
	histDir, err := sd.Sub("history")
	if err != nil {
		return nil, stateErr(err)
	}
	if o.history, err = history.Open(histDir, history.Options{MaxBytes: c.HistoryBytes, MaxAge: c.HistoryAge}); err != nil {
		undo()
		return nil, &SettingError{Setting: "HistoryBytes", Err: err}
	}
	r, err := recoverSets(ws, intents, o.history, logger)
	if err == nil {
		err = recoverHistory(ws, o.history, logger, &r)
	}
	if err != nil {
		return nil, stateErr(err)
	}
	o.recovered = r
	if r.Unfinished > 0 {
		logger.Error("intent log: change sets committed before a crash could be finished only in part; see the errors above", "sets", r.Unfinished)
	}
	if c.StateBytes > 0 {
		if o.disk, err = sd.Snapshots(c.StateBytes); err != nil {
			return nil, stateErr(err)
		}
	}
	opts := []Option{
		WithHasher(hasher),
		WithReadLimit(c.ReadLimit),
		WithReadByteBudget(c.ReadBytes),
		WithMaxLineBytes(c.MaxLineBytes),
		WithMaxEdits(c.MaxEdits),
		WithMaxResponseBytes(c.MaxResponseBytes),
		WithLogger(logger),
		WithSnapshotCacheBytes(max(c.CacheBytes, 0)),
		WithSnapshotDisk(o.disk),
		WithViewEntries(c.ViewEntries),
		WithViewBytes(c.ViewBytes),
		WithMaxPatternBytes(c.MaxPatternBytes),
		WithGrepBytes(c.GrepBytes),
		WithRequireRead(!c.NoRequireRead),
		WithRequestIDTTL(max(c.RequestIDTTL, 0)),
		WithRequestIDBytes(c.RequestIDBytes),
		WithIntentLog(intents),
		WithMemoryBudget(c.MemoryBudget),
		WithLargeCalls(c.LargeCalls),
		WithHistory(o.history),
		WithSyntax(c.Syntax, c.SyntaxStrict...),
		WithCommands(checks, formats, checkers.Options{Timeout: c.CheckTimeout, OutputBytes: c.CheckOutputBytes}),
	}
	e := New(ws, append(opts, c.Options...)...)
	e.opened = o
	o.stopSweep = func() {}
	if !c.NoSweep {
		// Files older than this start only: the temp files of the
		// engine's own writes are never touched. Until the sweep is done
		// the leftovers are harmless (the API refuses their names).
		ctx, cancel := context.WithCancel(context.Background())
		swept := make(chan struct{})
		go func() {
			defer close(swept)
			ws.SweepTemp(ctx, started, logger)
		}()
		o.stopSweep = func() { cancel(); <-swept }
	}
	return e, nil
}

// Close stops an engine of Open: it ends the Watch streams (Shutdown),
// stops the temp sweep, saves the snapshots held in memory to the state
// directory for the next engine (SaveSnapshots), closes the change
// history and the snapshot store, which writes them, lets go of the intent log's lock, closes the
// workspace and then releases the hold on the root (Config.Hold): nothing
// of this engine touches the root or the state directory once another may
// have them. Call it once every call to the engine has returned. A second
// Close returns what the first did. For an engine of New, Close is
// Shutdown and SaveSnapshots: its caller closes what it passed.
func (s *Engine) Close() error {
	o := s.opened
	if o == nil {
		s.Shutdown()
		s.SaveSnapshots()
		return nil
	}
	o.closeOnce.Do(func() {
		s.Shutdown()
		o.stopSweep()
		s.SaveSnapshots()
		var errs []error
		if err := o.history.Close(); err != nil {
			errs = append(errs, fmt.Errorf("history: %w", err))
		}
		if o.disk != nil {
			if err := o.disk.Close(); err != nil {
				errs = append(errs, fmt.Errorf("snapshot store: %w", err))
			}
		}
		if err := o.releaseLog(); err != nil {
			errs = append(errs, fmt.Errorf("intent log lock: %w", err))
		}
		if err := s.ws.Close(); err != nil {
			errs = append(errs, fmt.Errorf("workspace: %w", err))
		}
		if o.releaseHold != nil {
			o.releaseHold()
		}
		o.closeErr = errors.Join(errs...)
	})
	return o.closeErr
}

// StateDir is the state directory of an engine of Open ("" for one of
// New).
func (s *Engine) StateDir() string {
	if s.opened == nil {
		return ""
	}
	return s.opened.stateDir
}
