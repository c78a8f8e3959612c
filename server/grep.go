package server

import (
	"context"
	"errors"
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

// Grep streams the matching lines of every file under the request's path,
// one message per file in path order, then a summary.
func (s *Service) Grep(req *hashlinev1.GrepRequest, stream hashlinev1.FileService_GrepServer) error {
	return toStatus(s.grep(req, stream))
}

func (s *Service) grep(req *hashlinev1.GrepRequest, stream hashlinev1.FileService_GrepServer) error {
	if req.GetPattern() == "" {
		return badRequest("pattern", "pattern is empty; give an RE2 pattern, or a plain string with literal set")
	}
	if n, limit := len(req.GetPattern()), s.opts.maxPatternBytes; n > limit {
		return overLimit("pattern", limit, "the pattern is %d bytes, over the %d-byte limit; search for a shorter, more distinctive part of the text", n, limit)
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
			return badRequest(f.name, "%s %d is negative", f.name, f.v)
		}
	}
	if err := grep.CheckTypes(req.GetType()); err != nil {
		return badRequest("type", "%v; or select files by name with glob", err)
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
	// even while a client that does not read holds a Send.
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	snd := s.newGrepSender(stream)
	go snd.run(ctx, cancel)
	sum, err := grep.Search(ctx, s.searchFS(ctx), grep.Options{
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
func (s *Service) linksToVCS(rel string) bool {
	_, _, err := s.ws.Stat(rel)
	return errors.Is(err, workspace.ErrVCSPath)
}

// checkList refuses a glob, excludeGlob or type list over MaxGlobs entries
// or MaxGlobBytes.
func checkList(field string, list []string) error {
	if len(list) > MaxGlobs {
		return overLimit(field, MaxGlobs, "%s has %d entries, over the limit of %d; use fewer, broader ones", field, len(list), MaxGlobs)
	}
	n := 0
	for _, g := range list {
		n += len(g)
	}
	if n > MaxGlobBytes {
		return overLimit(field, MaxGlobBytes, "%s is %d bytes in all, over the %d-byte limit; use fewer, shorter entries", field, n, MaxGlobBytes)
	}
	return nil
}

// grepQueueBytes bounds what a Grep holds between its search and the
// goroutine that sends its results (the files' bytes and their lines),
// counted in grepQueueChunk units, one at least per file: what a client
// that stops reading makes the server keep, on top of what the search
// holds itself while it waits.
const (
	grepQueueBytes = 1 << 20
	grepQueueChunk = 64 << 10
)

// grepSender sends a Grep's files in the order the search queues them.
// Sending blocks while the client does not read (HTTP/2 flow control), and
// grpc gives no way to interrupt it but ending the call; the search, which
// waits for room in the queue, waits on the call's context instead, so a
// call that is cancelled or out of time stops searching and lets go of
// what it held, whatever its client does.
type grepSender struct {
	s      *Service
	stream hashlinev1.FileService_GrepServer
	items  chan grepItem
	// tokens holds one element per grepQueueChunk queued.
	tokens chan struct{}
	done   chan struct{}
	err    error // why sending stopped; read after done
}

type grepItem struct {
	f      grep.File
	chunks int
}

func (s *Service) newGrepSender(stream hashlinev1.FileService_GrepServer) *grepSender {
	n := grepQueueBytes / grepQueueChunk
	// Every item takes a token, so items never waits once the tokens
	// are taken.
	return &grepSender{s: s, stream: stream, items: make(chan grepItem, n), tokens: make(chan struct{}, n), done: make(chan struct{})}
}

// queue hands f to the sender, waiting for room while the queue is full,
// or returns ctx's error once ctx is done. Only the search calls it, never
// concurrently.
func (q *grepSender) queue(ctx context.Context, f grep.File) error {
	size := len(f.Raw)
	for _, l := range f.Lines {
		size += len(l.Content)
	}
	chunks := min(max((size+grepQueueChunk-1)/grepQueueChunk, 1), cap(q.tokens))
	for i := range chunks {
		select {
		case q.tokens <- struct{}{}:
		case <-ctx.Done():
			for range i {
				<-q.tokens
			}
			return ctx.Err()
		}
	}
	q.items <- grepItem{f: f, chunks: chunks}
	return nil
}

// run sends the queued files until the queue is closed; after a failed
// send, or once ctx is done, it only empties the queue. A failed send
// cancels the search through stop.
func (q *grepSender) run(ctx context.Context, stop context.CancelFunc) {
	defer close(q.done)
	for it := range q.items {
		if q.err == nil && ctx.Err() == nil {
			gf := q.s.grepFile(it.f)
			if err := q.stream.Send(&hashlinev1.GrepResponse{Result: &hashlinev1.GrepResponse_File{File: gf}}); err != nil {
				q.err = err
				stop()
			} else {
				// Edits this agent makes from these tags rebase from this
				// version.
				q.s.sawGrep(ctx, gf, it.f.Raw)
			}
		}
		for range it.chunks {
			<-q.tokens
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
func (s *Service) grepFile(f grep.File) *hashlinev1.GrepFile {
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
