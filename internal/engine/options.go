package engine

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/hashline/hashline/internal/checkers"
	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/history"
	"github.com/hashline/hashline/internal/state"
	"github.com/hashline/hashline/internal/syntax"
	"github.com/hashline/hashline/internal/versions"
)

// Defaults for the read limits of docs/DESIGN.md section 3.
const (
	DefaultReadLimit      = 2000
	DefaultReadByteBudget = 256 << 10
	DefaultMaxLineBytes   = 4 << 10
	DefaultContext        = 3
	DefaultMaxEdits       = 10000
	// DefaultMaxResponseBytes matches grpc-go's default client receive
	// limit: a larger Edit response would be written and then lost.
	DefaultMaxResponseBytes = 4 << 20
	// DefaultWatchBuffer is how many events the server keeps for all
	// Watch streams together: a stream that falls further behind skips
	// the older ones (and counts them).
	DefaultWatchBuffer = 4096
	// DefaultWatchDebounce is how long the tree must be quiet before
	// changes made outside the server are read and reported.
	DefaultWatchDebounce = 50 * time.Millisecond
)

// Option configures a Service.
type Option func(*options)

type options struct {
	hasher           hashline.Hasher
	readLimit        int
	readByteBudget   int
	maxLineBytes     int
	maxEdits         int
	maxResponseBytes int
	logger           *slog.Logger
	watchBuffer      int
	watchDebounce    time.Duration
	cacheBytes       int64
	disk             *versions.Disk
	viewEntries      int
	viewBytes        int64
	requireRead      bool
	requestIDTTL     time.Duration
	now              func() time.Time
	requestWaiting   func()
	requestIDBytes   int64
	maxPatternBytes  int
	grepBytes        int64
	intents          IntentLog
	maxChanges       int
	maxSetBytes      int64
	memoryBudget     int64
	largeCalls       func(inFlight bool)
	history          *history.Log
	// grepSearchBytes, for tests, replaces the bound of each Grep's own
	// (grep.DefaultMaxHeldBytes).
	grepSearchBytes int64
	// grepSearched, for tests, is called when a Grep's search has ended.
	grepSearched func(grep.Summary, error)
	// point, for tests, is called at named moments of a commit: before
	// its history entry is prepared ("committing"), after ("prepared"),
	// after a set's intent record is written ("recorded"), after the
	// change is made ("committed") and after its entry is resolved
	// ("resolved").
	point func(name string)
	// recorded, for tests, runs right after a change set's intent record
	// is written, before its commit.
	recorded func(set string)
	// treeWait, for tests, runs when a shared holder of the tree lock is
	// about to wait (treelock.go).
	treeWait func()
	// responseSize measures a result as the transport sends it
	// (WithResponseSize).
	responseSize func(result any) int
	// The syntax check of changes (WithSyntax, WithSyntaxOptions).
	syntaxMode    SyntaxMode
	syntaxStrict  []string
	syntaxOptions syntax.Options
	// tracer records the spans of changes (trace.go); nil records none.
	tracer trace.Tracer
	// The operator's check and format commands (WithCommands).
	checks, formats []checkers.Rule
	commandOptions  checkers.Options
	commandCache    *checkers.Cache
}

func defaultOptions() options {
	return options{
		readLimit:        DefaultReadLimit,
		readByteBudget:   DefaultReadByteBudget,
		maxLineBytes:     DefaultMaxLineBytes,
		maxEdits:         DefaultMaxEdits,
		maxResponseBytes: DefaultMaxResponseBytes,
		logger:           slog.New(slog.DiscardHandler),
		watchBuffer:      DefaultWatchBuffer,
		watchDebounce:    DefaultWatchDebounce,
		cacheBytes:       versions.DefaultCacheBytes,
		viewEntries:      versions.DefaultViewEntries,
		viewBytes:        versions.DefaultViewBytes,
		requireRead:      true,
		requestIDTTL:     DefaultRequestIDTTL,
		now:              time.Now,
		requestIDBytes:   DefaultRequestIDBytes,
		maxPatternBytes:  DefaultMaxPatternBytes,
		grepBytes:        DefaultGrepBytes,
		maxChanges:       DefaultMaxChanges,
		maxSetBytes:      DefaultMaxSetBytes,
		memoryBudget:     DefaultMemoryBudget,
		syntaxOptions:    syntax.Options{Cache: syntax.NewCache(0)},
	}
}

// Change-set bounds (Apply).
const (
	// DefaultMaxChanges is the most changes one Apply may make.
	DefaultMaxChanges = 1000
	// DefaultMaxSetBytes bounds the new contents one Apply writes, all
	// files together: they are all held in memory until the set commits.
	DefaultMaxSetBytes = 256 << 20
)

// WithIntentLog sets the intent log that makes change sets of several
// files all or nothing across a crash (state.Intents; Recover replays it
// at start). Without one a set is still all or nothing against refusals
// and errors found before its first rename, but a crash while its files
// are renamed into place may leave some renamed and some not. A nil
// *state.Intents is no log.
func WithIntentLog(l IntentLog) Option {
	return func(o *options) {
		if p, ok := l.(*state.Intents); ok && p == nil {
			l = nil
		}
		o.intents = l
	}
}

// WithMaxChanges sets the most changes one Apply may make.
func WithMaxChanges(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxChanges = n
		}
	}
}

// WithMemoryBudget bounds the bytes Read, Edit and Apply calls hold at
// once, all together (default DefaultMemoryBudget): each is charged, before
// it reads anything, an estimate from the sizes of the files it reads, and
// waits, in turn and until its deadline, for that much to be free (then it
// is DEADLINE_EXCEEDED, saying why). One call larger than the whole budget
// is refused TOO_LARGE at once. The caches (snapshots, views, request_id
// outcomes) and Greps (WithGrepBytes) have bounds of their own.
func WithMemoryBudget(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.memoryBudget = n
		}
	}
}

// WithLargeCalls has f told, one call at a time, when the first call
// charged LargeCallBytes or more of the memory budget, or the first Grep,
// starts (true) and when the last such call ends (false). A program that tunes its runtime
// for calls on large files while they run, and for small ones otherwise,
// uses it; the engine itself tunes nothing.
func WithLargeCalls(f func(inFlight bool)) Option {
	return func(o *options) { o.largeCalls = f }
}

// WithMaxSetBytes bounds the new contents one Apply writes.
func WithMaxSetBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxSetBytes = n
		}
	}
}

// WithHistory gives the engine the change history it records changes in
// and answers History and Blame from (internal/history; Open opens the
// state directory's). Without one, History and Blame are refused, saying
// the history is off. The caller closes l after the engine.
func WithHistory(l *history.Log) Option { return func(o *options) { o.history = l } }

// WithHasher sets the line hasher (and so the hash length) of every tag the
// service prints and checks.
func WithHasher(h hashline.Hasher) Option { return func(o *options) { o.hasher = h } }

// WithReadLimit sets how many lines Read returns when the request gives no
// limit, and the most it returns whatever the request asks.
func WithReadLimit(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.readLimit = n
		}
	}
}

// WithReadByteBudget caps the bytes of tagged text one Read returns; past it
// the response is truncated with a next offset.
func WithReadByteBudget(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.readByteBudget = n
		}
	}
}

// WithMaxLineBytes sets the length past which a line's content is shown cut
// (its hash still covers the whole line).
func WithMaxLineBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxLineBytes = n
		}
	}
}

// WithMaxEdits caps the edits of one batch.
func WithMaxEdits(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxEdits = n
		}
	}
}

// WithMaxResponseBytes caps an Edit response; a bigger one is refused
// before anything is written (set it to the clients' receive limit).
func WithMaxResponseBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxResponseBytes = n
		}
	}
}

// WithResponseSize sets how the face measures a result as it sends it,
// which the response size limit (WithMaxResponseBytes) is checked against
// before anything is written: the limit is the transport's. nil, the
// default, checks no size.
func WithResponseSize(f func(result any) int) Option { return func(o *options) { o.responseSize = f } }

// WithLogger sets the logger; the default discards.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithWatchBuffer sets how many events the server keeps for all Watch
// streams together, in one ring that every stream reads at its own pace;
// a stream that falls further behind skips to the oldest event kept, and
// the next event it sends says in its dropped field how many it skipped
// (changes to any file: the skipped events are gone, so whether they were
// for the stream's path is not known).
func WithWatchBuffer(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.watchBuffer = n
		}
	}
}

// WithWatchDebounce sets how long the workspace must be quiet before
// changes made outside the server are read and reported; a steady stream
// of changes is reported at least every ten such periods.
func WithWatchDebounce(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.watchDebounce = d
		}
	}
}

// WithSnapshotCacheBytes sets the budget of the snapshot cache, shared by
// all agents and files, that rebases read older versions from (default
// 256 MiB). 0 keeps none in memory: an Edit made against an older version
// that no other store holds is then refused with STALE_REF, unless it has
// no line references (see rebase).
func WithSnapshotCacheBytes(n int64) Option {
	return func(o *options) {
		if n >= 0 {
			o.cacheBytes = n
		}
	}
}

// WithSnapshotDisk gives the snapshot cache a disk store (the state
// directory's, internal/state): snapshots evicted from memory, or larger
// than its budget, are kept there, and rebases find their base there when
// memory misses, so that an edit from a version memory let go is rebased
// instead of refused. Before closing d, call SaveSnapshots, so that a later
// server finds the snapshots held in memory too.
func WithSnapshotDisk(d *versions.Disk) Option { return func(o *options) { o.disk = d } }

// WithViewEntries bounds how many (agent, file) pairs the service remembers
// the last seen versions of, and their shown lines (default 100,000); past
// it the least recently used pair is forgotten, as if that agent had not
// read that file.
func WithViewEntries(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.viewEntries = n
		}
	}
}

// WithViewBytes bounds the bytes those pairs take, counting each by its
// agent name, file path, versions and runs of shown lines plus fixed
// overheads (default 64 MiB): names, paths and what a Grep shows are
// chosen by callers, so a bound on the number of pairs alone does not
// bound their memory.
func WithViewBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.viewBytes = n
		}
	}
}

// WithRequireRead sets whether an agent must have seen a file (through
// Read, Grep, Edit or Write) before it may replace, insert, delete or
// replaceText in it (default true; NOT_READ otherwise). Append, prepend and
// creating files never need a read.
func WithRequireRead(on bool) Option { return func(o *options) { o.requireRead = on } }

// WithRequestIDTTL sets how long the outcome of an Edit or Write with a
// request_id is remembered, for retries with the same key to get it instead
// of applying the request again (default 10 minutes). 0 turns the table
// off: request_id is then only checked for length, and a retry applies
// again.
func WithRequestIDTTL(d time.Duration) Option {
	return func(o *options) {
		if d >= 0 {
			o.requestIDTTL = d
		}
	}
}

// WithRequestIDBytes bounds the memory of remembered request_id outcomes,
// responses and errors together (default 64 MiB); past it the oldest are
// forgotten first, and a retry of a forgotten one applies again.
func WithRequestIDBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.requestIDBytes = n
		}
	}
}

// WithGrepBytes bounds the bytes all Greps hold at once (default
// DefaultGrepBytes): files found ahead of what was sent, and files waiting
// to be sent. Each Grep also holds at most a few MiB of its own (one file
// when a single file is larger), so a Grep whose client does not read
// keeps that much and no more. A Grep that finds the budget spent waits,
// until its deadline, for others to give bytes back; it does not fail.
func WithGrepBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.grepBytes = n
		}
	}
}

// WithMaxPatternBytes bounds the pattern of a Grep (default 8 KiB); a
// longer one is refused with INVALID_ARGUMENT before it is compiled.
func WithMaxPatternBytes(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxPatternBytes = n
		}
	}
}

// WithGrepSearched makes the engine call f when the search of a Grep has
// ended (before its results are all sent), with what it scanned and why it
// ended.
func WithGrepSearched(f func(grep.Summary, error)) Option {
	return func(o *options) { o.grepSearched = f }
}

// WithGrepSearchBytes sets the bound of each Grep's own on what it holds
// (grep.Options.MaxHeldBytes).
func WithGrepSearchBytes(n int64) Option {
	return func(o *options) { o.grepSearchBytes = n }
}

// WithClock sets the clock the engine reads for the age of remembered
// request_id outcomes (time.Now by default), so that a test can move time.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithRequestWaiting makes the engine call f whenever a call starts
// waiting for a running call with the same request_id.
func WithRequestWaiting(f func()) Option { return func(o *options) { o.requestWaiting = f } }
