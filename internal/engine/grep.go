package engine

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
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

// Grep streams the matching lines of every file under the request's path,
// one message per file in path order, then a summary.
// GrepStream is where Grep sends its messages.
type GrepStream interface {
	Send(*hashlinev1.GrepResponse) error
}

func (s *Engine) Grep(ctx context.Context, fsys fs.FS, req *hashlinev1.GrepRequest, stream GrepStream) error {
	if req.GetPattern() == "" {
		return BadRequest("pattern", "pattern is empty; give an RE2 pattern, or a plain string with literal set")
	}
	if n, limit := len(req.GetPattern()), s.opts.maxPatternBytes; n > limit {
		return OverLimit("pattern", limit, "the pattern is %d bytes, over the %d-byte limit; search for a shorter, more distinctive part of the text", n, limit)
	}
	for _, f := range []struct {
		name string
		list []string
	}{{"glob", req.GetGlob()}, {"excludeGlob", req.GetExcludeGlob()}, {"type", req.GetType()}} {
		if err := checkList(f.name, f.list); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		v    int32
	}{{"before", req.GetBefore()}, {"after", req.GetAfter()}, {"maxMatches", req.GetMaxMatches()}} {
		if f.v < 0 {
			return BadRequest(f.name, "%s %d is negative", f.name, f.v)
		}
	}
	if err := grep.CheckTypes(req.GetType()); err != nil {
		return BadRequest("type", "%v; or select files by name with glob", err)
	}
	path := req.GetPath()
	if path == "" {
		path = "." // the whole workspace
	}
	rel, err := s.ws.Rel(path)
	if err != nil {
		return err
	}
	// The path is resolved as Read resolves its own, so that a symlink
	// loop, a missing path, a link out of the root or into version-control
	// metadata is refused as Read refuses it.
	if _, _, err := s.ws.Stat(rel); err != nil {
		return err
	}
	maxMatches := int(req.GetMaxMatches())
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
	snd := s.newGrepSender(stream)
	go snd.run(ctx, cancel)
	defer context.AfterFunc(ctx, snd.abandon)()
	sum, err := grep.Search(ctx, fsys, grep.Options{
		Pattern:         req.GetPattern(),
		Literal:         req.GetLiteral(),
		CaseInsensitive: req.GetCaseInsensitive(),
		Path:            rel,
		Globs:           req.GetGlob(),
		ExcludeGlobs:    req.GetExcludeGlob(),
		Types:           req.GetType(),
		Hidden:          req.GetHidden(),
		NoIgnore:        req.GetNoIgnore(),
		Before:          int(req.GetBefore()),
		After:           int(req.GetAfter()),
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
		return serr // the client is gone; the search stopped because of it
	}
	if err != nil {
		return err
	}
	return stream.Send(&hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_Summary{Summary: &hashlinev1.GrepSummary{
		FilesScanned: int32(sum.FilesScanned),
		FilesMatched: int32(sum.FilesMatched),
		Matches:      int32(sum.Matches),
		Truncated:    sum.Truncated,
		BytesScanned: sum.BytesScanned,
		Elapsed:      durationpb.New(sum.Elapsed),
	}}})
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
// Sending blocks while the client does not read (HTTP/2 flow control), and
// grpc gives no way to interrupt it but ending the call; the search, which
// waits for room in the queue, waits on the call's context instead, so a
// call that is cancelled or out of time stops searching and lets go of
// what it held, whatever its client does.
type grepSender struct {
	s      *Engine
	stream GrepStream
	items  chan grep.File
	done   chan struct{}
	err    error // why sending stopped; read after done

	mu sync.Mutex
	// sending is the file being sent; abandoned is set once the call's
	// context is done.
	sending   grep.File
	abandoned bool
}

func (s *Engine) newGrepSender(stream GrepStream) *grepSender {
	return &grepSender{s: s, stream: stream, items: make(chan grep.File, GrepQueueLen), done: make(chan struct{})}
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
			if err := q.stream.Send(&hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_File{File: gf}}); err != nil {
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

// grepFile turns one file's result into its message: tagged lines, with
// the version of the exact bytes that were searched (so an edit from these
// tags rebases like one from a Read of that version).
func (s *Engine) grepFile(f grep.File) *hashlinev1.GrepFile {
	h := s.opts.hasher
	lines := make([]*hashlinev1.GrepLine, len(f.Lines))
	for i, l := range f.Lines {
		gl := &hashlinev1.GrepLine{
			Number:  int32(l.Number),
			Hash:    h.Sum(l.Content),
			Content: hashline.CutLine(l.Content, s.opts.maxLineBytes),
			Match:   l.Match,
		}
		shown := shownBytes(l.Content, s.opts.maxLineBytes)
		for _, sp := range l.Submatches {
			if sp.End > shown {
				break // past the cut: not in content
			}
			gl.Submatches = append(gl.Submatches, &hashlinev1.Span{Start: int32(sp.Start), End: int32(sp.End)})
		}
		lines[i] = gl
	}
	return &hashlinev1.GrepFile{Path: f.Path, Version: workspace.Version(f.Raw), Lines: lines}
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
