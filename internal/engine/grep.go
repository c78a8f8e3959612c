package engine

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"unicode/utf8"

	"github.com/hashline/hashline/internal/grep"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/workspace"
)

// DefaultMaxMatches is Grep's match limit when the request sets none.
const DefaultMaxMatches = 100

// DefaultMaxPatternBytes bounds a Grep pattern unless WithMaxPatternBytes
// says otherwise. Grep matches one line at a time and shows at most
// DefaultMaxLineBytes of one, so a literal twice that long is already more
// than a line a model has seen; alternations of hundreds of identifiers fit
// too. Compiling, and the memory of every matcher, grow with the pattern.
const DefaultMaxPatternBytes = 8 << 10

// Bounds on Grep's glob, excludeGlob and type lists, each: every name of a
// file found is matched against every glob.
const (
	MaxGlobs     = 256
	MaxGlobBytes = 16 << 10 // all of one list's entries together
)

// DefaultGrepBytes bounds the bytes all Greps hold at once unless
// WithGrepBytes says otherwise. Greps whose clients read hold little for
// long; the budget is there for those whose clients do not, each of which
// holds its own bound (grep.DefaultMaxHeldBytes) until its deadline: this
// many of them fit before any Grep waits.
const DefaultGrepBytes = 256 << 20

// GrepMemory is what Greps hold of the budget of WithGrepBytes.
type GrepMemory struct {
	// Held is the bytes held now: files found and not yet sent.
	Held int64
	// Peak is the most held at once since the server started.
	Peak int64
	// Budget is the bound.
	Budget int64
}

// GrepMemory returns what Greps hold now of their budget.
func (s *Engine) GrepMemory() GrepMemory {
	b := s.grepBudget
	return GrepMemory{Held: b.Held(), Peak: b.Peak(), Budget: b.Size()}
}

// GrepRequest asks for the lines matching a pattern in the files under a
// path.
type GrepRequest struct {
	// Pattern is an RE2 pattern, or a plain string with Literal.
	Pattern         string
	Literal         bool
	CaseInsensitive bool
	// Path is the file or directory to search; "" is the whole workspace.
	Path string
	// Globs and Types select the files searched, ExcludeGlobs leave some
	// out (grep.Options).
	Globs, ExcludeGlobs, Types []string
	// Hidden searches hidden files and directories; NoIgnore searches what
	// .gitignore files ignore.
	Hidden, NoIgnore bool
	// Before and After are the lines of context shown around each match.
	Before, After int
	// MaxMatches is the most matching lines; 0 means DefaultMaxMatches.
	MaxMatches int
}

// GrepFile is one file's matching lines and their context.
type GrepFile struct {
	Path string
	// Version is the version of the bytes searched: an edit made from
	// these tags rebases like one made from a Read of it.
	Version string
	Lines   []GrepLine
}

// GrepLine is a matching line or a line of context, its content cut to
// the engine's line limit (WithMaxLineBytes) and its hash the whole
// line's.
type GrepLine struct {
	hashline.TaggedLine
	Match bool
	// Submatches are the byte ranges of Content the pattern matches, those
	// of them that the cut left whole.
	Submatches []grep.Span
}

// Grep sends the matching lines of every file under the request's path to
// send, one file at a time in path order, and returns the summary of the
// search. send runs on a goroutine of its own, never two calls at once;
// it may block (a client that does not read), but the search stops when
// ctx ends whatever send does, and Grep returns once send has. Grep
// returns send's first error and sends nothing after it.
func (s *Engine) Grep(ctx context.Context, fsys fs.FS, req GrepRequest, send func(GrepFile) error) (*grep.Summary, error) {
	if req.Pattern == "" {
		return nil, BadRequest("pattern", "pattern is empty; give an RE2 pattern, or a plain string with literal set")
	}
	if n, limit := len(req.Pattern), s.opts.maxPatternBytes; n > limit {
		return nil, OverLimit("pattern", limit, "the pattern is %d bytes, over the %d-byte limit; search for a shorter, more distinctive part of the text", n, limit)
	}
	for _, f := range []struct {
		name string
		list []string
	}{{"glob", req.Globs}, {"excludeGlob", req.ExcludeGlobs}, {"type", req.Types}} {
		if err := checkList(f.name, f.list); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"before", req.Before}, {"after", req.After}, {"maxMatches", req.MaxMatches}} {
		if f.v < 0 {
			return nil, BadRequest(f.name, "%s %d is negative", f.name, f.v)
		}
	}
	if err := grep.CheckTypes(req.Types); err != nil {
		return nil, BadRequest("type", "%v; or select files by name with glob", err)
	}
	// A search reads file after file, as a call on a large file reads
	// one: it is one for WithLargeCalls.
	defer s.memory.largeCall()()
	path := req.Path
	if path == "" {
		path = "." // the whole workspace
	}
	rel, err := s.ws.Rel(path)
	if err != nil {
		return nil, err
	}
	// The path is resolved as Read resolves its own, so that a symlink
	// loop, a missing path, a link out of the root or into version-control
	// metadata is refused as Read refuses it.
	if _, _, err := s.ws.Stat(rel); err != nil {
		return nil, err
	}
	maxMatches := req.MaxMatches
	if maxMatches == 0 {
		maxMatches = DefaultMaxMatches
	}
	// Results go to the client through a bounded queue and a goroutine of
	// their own (grepSender), so that the search stops when the call ends
	// even while a client that does not read holds a Send. The files in
	// the queue count against the search's bounds and the server's budget
	// until they are sent, and are given back at once when the call ends.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	snd := s.newGrepSender(send)
	go snd.run(ctx, cancel)
	defer context.AfterFunc(ctx, snd.abandon)()
	sum, err := grep.Search(ctx, fsys, grep.Options{
		Pattern:         req.Pattern,
		Literal:         req.Literal,
		CaseInsensitive: req.CaseInsensitive,
		Path:            rel,
		Globs:           req.Globs,
		ExcludeGlobs:    req.ExcludeGlobs,
		Types:           req.Types,
		Hidden:          req.Hidden,
		NoIgnore:        req.NoIgnore,
		Before:          req.Before,
		After:           req.After,
		MaxMatches:      maxMatches,
		MaxFileBytes:    s.ws.MaxFileBytes(),
		SkipFile:        workspace.IsTempName,
		SkipLink:        s.linksToVCS,
		Budget:          s.grepBudget,
		MaxHeldBytes:    s.opts.grepSearchBytes,
	}, func(f grep.File) error { return snd.queue(ctx, f) })
	if s.opts.grepSearched != nil {
		s.opts.grepSearched(sum, err)
	}
	if serr := snd.close(); serr != nil {
		return nil, serr // the client is gone; the search stopped because of it
	}
	if err != nil {
		return nil, err
	}
	return &sum, nil
}

// linksToVCS reports whether the symlink at rel leads into version-control
// metadata that this server does not read: the walk skips such
// directories by name, but would follow a link into one.
func (s *Engine) linksToVCS(rel string) bool {
	_, _, err := s.ws.Stat(rel)
	return errors.Is(err, workspace.ErrVCSPath)
}

// checkList refuses a glob, excludeGlob or type list over MaxGlobs entries
// or MaxGlobBytes.
func checkList(field string, list []string) error {
	if len(list) > MaxGlobs {
		return OverLimit(field, MaxGlobs, "%s has %d entries, over the limit of %d; use fewer, broader ones", field, len(list), MaxGlobs)
	}
	n := 0
	for _, g := range list {
		n += len(g)
	}
	if n > MaxGlobBytes {
		return OverLimit(field, MaxGlobBytes, "%s is %d bytes in all, over the %d-byte limit; use fewer, shorter entries", field, n, MaxGlobBytes)
	}
	return nil
}

// GrepQueueLen bounds the files of a Grep's send queue; their bytes count
// against the search's own bound (and the server's budget) until sent, so
// this only needs to keep a queue of small files from growing long.
const GrepQueueLen = 64

// grepSender sends a Grep's files in the order the search queues them.
// Sending blocks while the client does not read (HTTP/2 flow control, for
// the gRPC face), and there is no way to interrupt it but ending the call;
// the search, which
// waits for room in the queue, waits on the call's context instead, so a
// call that is cancelled or out of time stops searching and lets go of
// what it held, whatever its client does.
type grepSender struct {
	s     *Engine
	send  func(GrepFile) error
	items chan grep.File
	done  chan struct{}
	err   error // why sending stopped; read after done

	mu sync.Mutex
	// sending is the file being sent; abandoned is set once the call's
	// context is done.
	sending   grep.File
	abandoned bool
}

func (s *Engine) newGrepSender(send func(GrepFile) error) *grepSender {
	return &grepSender{s: s, send: send, items: make(chan grep.File, GrepQueueLen), done: make(chan struct{})}
}

// queue hands f to the sender, waiting for room while the queue is full,
// or returns ctx's error once ctx is done. Only the search calls it, never
// concurrently.
func (q *grepSender) queue(ctx context.Context, f grep.File) error {
	select {
	case q.items <- f:
		if ctx.Err() != nil {
			q.abandon() // it may have emptied the queue before f came
		}
		return nil
	case <-ctx.Done():
		f.Release()
		return ctx.Err()
	}
}

// run sends the queued files until the queue is closed; after a failed
// send, or once ctx is done, it only empties the queue. A failed send
// cancels the search through stop.
func (q *grepSender) run(ctx context.Context, stop context.CancelFunc) {
	defer close(q.done)
	for f := range q.items {
		if q.err == nil && ctx.Err() == nil && q.start(f) {
			gf := q.s.grepFile(f)
			if err := q.send(gf); err != nil {
				q.err = err
				stop()
			} else {
				// Edits this agent makes from these tags rebase from this
				// version.
				q.s.sawGrep(ctx, gf, f.Raw)
			}
		}
		f.Release()
	}
}

// start makes f the file being sent, unless the call has ended.
func (q *grepSender) start(f grep.File) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.abandoned {
		return false
	}
	q.sending = f
	return true
}

// abandon gives back the bytes of the queued files and of the one being
// sent: the call has ended, and they will not be sent (the one in a Send
// that the client does not read stays in memory until the client goes,
// which grpc leaves to the client and keepalive).
func (q *grepSender) abandon() {
	q.mu.Lock()
	q.abandoned = true
	q.sending.Release()
	q.mu.Unlock()
	for {
		select {
		case f, ok := <-q.items:
			if !ok {
				return
			}
			f.Release()
		default:
			return
		}
	}
}

// close ends the queue (the search has returned), waits for the sender and
// returns its error.
func (q *grepSender) close() error {
	close(q.items)
	<-q.done
	return q.err
}

// grepFile turns one file's result into tagged lines, with the version of
// the exact bytes that were searched (so an edit from these tags rebases
// like one from a Read of that version).
func (s *Engine) grepFile(f grep.File) GrepFile {
	h := s.opts.hasher
	lines := make([]GrepLine, len(f.Lines))
	for i, l := range f.Lines {
		gl := &lines[i]
		gl.Number = l.Number
		gl.Hash = h.Sum(l.Content)
		gl.Content = hashline.CutLine(l.Content, s.opts.maxLineBytes)
		gl.Match = l.Match
		shown := shownBytes(l.Content, s.opts.maxLineBytes)
		k := 0
		for k < len(l.Submatches) && l.Submatches[k].End <= shown {
			k++ // past the cut: not in content
		}
		if k > 0 {
			gl.Submatches = l.Submatches[:k:k]
		}
	}
	return GrepFile{Path: f.Path, Version: workspace.Version(f.Raw), Lines: lines}
}

// shownBytes returns how many bytes of content a line shows: all of them,
// or as many as hashline.CutLine keeps (at most max, backed off to a rune
// boundary) before its marker.
func shownBytes(content string, max int) int {
	if max <= 0 || len(content) <= max {
		return len(content)
	}
	n := max
	for n > 0 && !utf8.RuneStart(content[n]) {
		n--
	}
	return n
}
