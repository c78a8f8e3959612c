package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/grep"
)

// Authenticator checks the bearer token of every call ("authorization:
// Bearer <token>" metadata) against a token set that can be swapped while
// the server runs (hashlined reloads its token file on SIGHUP).
type Authenticator struct {
	tokens atomic.Pointer[Tokens]
	logger *slog.Logger

	mu      sync.Mutex // serialises Replace and guards streams
	streams map[*liveStream]struct{}
}

// NewAuthenticator returns an Authenticator over t. Failed attempts are
// logged to logger (nil discards), never with the token.
func NewAuthenticator(t *Tokens, logger *slog.Logger) *Authenticator {
	a := &Authenticator{logger: logger, streams: map[*liveStream]struct{}{}}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	a.tokens.Store(t)
	return a
}

// liveStream is an open stream's hold on its token. Unary calls are short
// (and bounded by the default deadline) and finish with the grant they
// started with; a stream (Watch lasts until cancelled) is checked again at
// every Replace.
type liveStream struct {
	sum    [sha256.Size]byte // of its token
	grant  atomic.Pointer[Grant]
	cancel context.CancelCauseFunc

	mu sync.Mutex
	// recheck repeats the access check of the stream's request with the
	// grant in force (set once the request is received; see access).
	recheck func() error
}

// setRecheck is called before the first check of the request, so that a
// Replace running at the same time either stores its grant before that
// check reads it or finds recheck set and runs it.
func (ls *liveStream) setRecheck(f func() error) {
	ls.mu.Lock()
	ls.recheck = f
	ls.mu.Unlock()
}

func (ls *liveStream) check() error {
	ls.mu.Lock()
	f := ls.recheck
	ls.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

// Replace swaps in a new token set. Unary calls already authenticated keep
// their grant. Every open stream is checked against the new set at once:
//   - a stream whose token is gone ends with UNAUTHENTICATED (reason
//     UNAUTHENTICATED), its message saying the token was revoked;
//   - a stream whose token no longer covers its request (its path left the
//     token's paths; a permission change never matters, since both
//     permissions allow the streaming calls) ends with the refusal a new
//     call would get: PERMISSION_DENIED, reason PATH_NOT_ALLOWED;
//   - any other stream goes on under the new grant: Watch filters its
//     events, and Grep the rest of its walk, by the new paths.
//
// A stream whose handler is blocked sending to a client that does not read
// ends when that send completes or the client goes away.
func (a *Authenticator) Replace(t *Tokens) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens.Store(t)
	var revoked, narrowed int
	for ls := range a.streams {
		g := t.lookupSum(ls.sum)
		if g == nil {
			ls.cancel(errTokenRevoked)
			revoked++
			continue
		}
		ls.grant.Store(g)
		var ae *accessError
		if err := ls.check(); errors.As(err, &ae) {
			ls.cancel(&accessError{reason: ae.reason, msg: "the server reloaded its token file and this stream's token no longer allows it: " + ae.msg})
			narrowed++
		}
	}
	if revoked+narrowed > 0 {
		a.logger.Info("token reload ended open streams", "revoked", revoked, "narrowed", narrowed)
	}
}

// errTokenRevoked ends the streams of a token a reload removed.
var errTokenRevoked = &accessError{reason: ReasonUnauthenticated,
	msg: "the token of this stream was revoked: the server reloaded its token file and the token is no longer in it; ask the operator for a valid token, then Read the files you care about again and open the stream again"}

type grantKey struct{}

// grantFrom returns the caller's grant, or nil when the server runs
// without tokens. A stream's grant is the one in force: a token file
// reload may have changed it since the stream began.
func grantFrom(ctx context.Context) *Grant {
	switch v := ctx.Value(grantKey{}).(type) {
	case *Grant:
		return v
	case *liveStream:
		return v.grant.Load()
	}
	return nil
}

// lookup finds the grant of the call's bearer token, or refuses the call.
func (a *Authenticator) lookup(ctx context.Context) (string, *Grant, error) {
	tok, err := auth.AuthFromMD(ctx, "bearer")
	if err != nil {
		a.refused(ctx, "no bearer token")
		return "", nil, &accessError{reason: ReasonUnauthenticated,
			msg: "missing credentials: send the metadata \"authorization: Bearer <token>\" with a token from the server's token file"}
	}
	g := a.tokens.Load().Lookup(tok)
	if g == nil {
		a.refused(ctx, "unknown token")
		return "", nil, &accessError{reason: ReasonUnauthenticated,
			msg: "the bearer token is not valid (unknown, revoked, or mistyped); ask the operator for a token"}
	}
	return tok, g, nil
}

// authenticate is the auth.AuthFunc: it puts the token's grant into the
// context or refuses the call.
func (a *Authenticator) authenticate(ctx context.Context) (context.Context, error) {
	_, g, err := a.lookup(ctx)
	if err != nil {
		return nil, err
	}
	return context.WithValue(ctx, grantKey{}, g), nil
}

// authenticateStream is authenticate for a stream, which it also registers
// for Replace to check again; call the returned function when the stream
// ends.
func (a *Authenticator) authenticateStream(ctx context.Context) (context.Context, func(), error) {
	tok, _, err := a.lookup(ctx)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	ls := &liveStream{sum: sha256.Sum256([]byte(tok)), cancel: cancel}
	a.mu.Lock()
	// Looked up again under the lock, so that no Replace can come between
	// the lookup and the registration and miss this stream.
	g := a.tokens.Load().lookupSum(ls.sum)
	if g == nil {
		a.mu.Unlock()
		cancel(nil)
		a.refused(ctx, "token revoked")
		return nil, nil, errTokenRevoked
	}
	ls.grant.Store(g)
	a.streams[ls] = struct{}{}
	a.mu.Unlock()
	return context.WithValue(ctx, grantKey{}, ls), func() {
		a.mu.Lock()
		delete(a.streams, ls)
		a.mu.Unlock()
		cancel(nil)
	}, nil
}

func (a *Authenticator) refused(ctx context.Context, why string) {
	from := "unknown"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		from = p.Addr.String()
	}
	method, _ := grpc.Method(ctx)
	a.logger.WarnContext(ctx, "unauthenticated call refused", "why", why, "peer", from, "method", method)
}

// needsToken says which calls must carry a token: all but health checks and
// reflection, so load balancers and grpcurl's discovery work without one.
// Anything not named here needs a token, whatever is registered later.
func needsToken(_ context.Context, c interceptors.CallMeta) bool {
	switch c.Service {
	case healthpb.Health_ServiceDesc.ServiceName,
		"grpc.reflection.v1.ServerReflection",
		"grpc.reflection.v1alpha.ServerReflection":
		return false
	}
	return true
}

func (a *Authenticator) unary() grpc.UnaryServerInterceptor {
	return selector.UnaryServerInterceptor(
		auth.UnaryServerInterceptor(func(ctx context.Context) (context.Context, error) {
			ctx, err := a.authenticate(ctx)
			return ctx, toStatus(err)
		}),
		selector.MatchFunc(needsToken))
}

func (a *Authenticator) stream() grpc.StreamServerInterceptor {
	return selector.StreamServerInterceptor(
		func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			ctx, done, err := a.authenticateStream(ss.Context())
			if err != nil {
				return toStatus(err)
			}
			defer done()
			err = handler(srv, &ctxStream{ServerStream: ss, ctx: ctx})
			// A handler ended by Replace may report only that its context
			// was cancelled (Grep does); the cause says why.
			var ae *accessError
			if err != nil && errors.As(context.Cause(ctx), &ae) {
				return toStatus(ae)
			}
			return err
		},
		selector.MatchFunc(needsToken))
}

// accessError is a refusal by authentication or authorization; errors.go
// maps its reason to the gRPC code.
type accessError struct {
	reason hashlinev1.ErrorReason
	msg    string
}

func (e *accessError) Error() string { return e.msg }

// Methods by what they need. Read methods only look; anything else, including
// a method added later and not listed here, needs write permission.
var readMethods = map[string]bool{
	hashlinev1.FileService_Read_FullMethodName:    true,
	hashlinev1.FileService_Grep_FullMethodName:    true,
	hashlinev1.FileService_Watch_FullMethodName:   true,
	hashlinev1.FileService_Status_FullMethodName:  true,
	hashlinev1.FileService_List_FullMethodName:    true,
	hashlinev1.FileService_History_FullMethodName: true,
	hashlinev1.FileService_Blame_FullMethodName:   true,
}

// searchMethods take a directory and filter what they find by the grant
// (Grep and List walk searchFS, Watch drops events allowed rejects, History
// shows only the files allowed lets it), so their path
// may also be a directory above an allowed prefix ("" or "." for the whole
// workspace). Every other method's path must itself be allowed. A method
// added here must filter its results the same way.
var searchMethods = map[string]bool{
	hashlinev1.FileService_Grep_FullMethodName:    true,
	hashlinev1.FileService_Watch_FullMethodName:   true,
	hashlinev1.FileService_List_FullMethodName:    true,
	hashlinev1.FileService_History_FullMethodName: true,
}

// pathRequest is every request message with a path.
type pathRequest interface{ GetPath() string }

// access checks each FileService request against the caller's grant. The
// paths no caller may name (over the length and depth limits, the
// workspace's temp files) are not its business: the workspace refuses them
// to every caller (workspace.Rel), with or without this interceptor.
//   - a read-only grant may not call Edit, Write, Delete, Move or Apply
//     (READ_ONLY);
//   - with path prefixes, the request path, and the file it resolves to
//     through symlinks, must lie inside one (PATH_NOT_ALLOWED): both ends
//     of a Move, every path of an Apply, and every path of the change a
//     Revert undoes.
type access struct {
	svc *Service
}

func newAccess(svc *Service) *access { return &access{svc: svc} }

func (a *access) check(ctx context.Context, method string, req any) error {
	if !isFileService(method) {
		return nil
	}
	g := grantFrom(ctx)
	if g != nil && g.Permission != PermWrite && !readMethods[method] {
		return &accessError{reason: ReasonReadOnly,
			msg: fmt.Sprintf("agent %q has a read-only token; %s needs a token with permission write", g.Agent, method[strings.LastIndexByte(method, '/')+1:])}
	}
	if method == hashlinev1.FileService_Status_FullMethodName {
		return nil // names no file: any grant may ask (status.go)
	}
	if paths, ok := a.changePaths(req); ok {
		// Both ends of a move, and every path of a change set, are
		// checked as the path of a single call would be.
		for _, p := range paths {
			if err := a.checkPath(g, method, p); err != nil {
				return err
			}
		}
		return nil
	}
	pr, ok := req.(pathRequest)
	if !ok {
		if g != nil && len(g.Prefixes) > 0 {
			return &accessError{reason: ReasonPathNotAllowed, msg: "this call names no path, and the token is limited to " + strings.Join(g.Prefixes, ", ")}
		}
		return nil
	}
	return a.checkPath(g, method, pr.GetPath())
}

// changePaths returns the paths a Move or Apply request names, or those
// of the change a Revert names (as the history holds it; none for an id it
// cannot name, which the call itself then reports), and false for any
// other request.
func (a *access) changePaths(req any) ([]string, bool) {
	switch r := req.(type) {
	case *hashlinev1.RevertRequest:
		paths, _ := a.svc.e.ChangePaths(r.GetChangeId())
		return paths, true
	case *hashlinev1.MoveRequest:
		return []string{r.GetFrom(), r.GetTo()}, true
	case *hashlinev1.ApplyRequest:
		var out []string
		for _, c := range r.GetChanges() {
			switch ch := c.GetChange().(type) {
			case *hashlinev1.Change_Edit:
				out = append(out, ch.Edit.GetPath())
			case *hashlinev1.Change_Write:
				out = append(out, ch.Write.GetPath())
			case *hashlinev1.Change_Delete:
				out = append(out, ch.Delete.GetPath())
			case *hashlinev1.Change_Move:
				out = append(out, ch.Move.GetFrom(), ch.Move.GetTo())
			}
		}
		return out, true
	}
	return nil, false
}

// checkPath checks one path a request names against g.
func (a *access) checkPath(g *Grant, method, p string) error {
	if g == nil || len(g.Prefixes) == 0 {
		return nil
	}
	if p == "" {
		// The whole workspace, for a search; and for any call of a
		// restricted token, so that no method can read "" as "everything".
		p = "."
	}
	rel, err := a.svc.e.Workspace().Rel(p)
	if err != nil {
		return nil // the service reports the bad path, as it would without tokens
	}
	allowed := g.allows
	if searchMethods[method] {
		allowed = g.leadsTo
	}
	if !allowed(rel) {
		return a.denied(g, rel)
	}
	if target, ok := a.resolve(rel); ok && !allowed(target) {
		return a.denied(g, rel+" (through a symlink to "+target+")")
	}
	return nil
}

func (a *access) denied(g *Grant, what string) error {
	return &accessError{reason: ReasonPathNotAllowed,
		msg: fmt.Sprintf("agent %q may not access %s; its token is limited to %s", g.Agent, what, strings.Join(g.Prefixes, ", "))}
}

// resolve returns the symlink-free path, relative to the root, of the file
// rel reaches, exactly as the workspace will resolve it (for a file that
// does not exist yet, its nearest existing directory plus the rest). It
// reports false when that fails, e.g. for links out of the root, which the
// workspace refuses itself.
func (a *access) resolve(rel string) (string, bool) {
	target, _, err := a.svc.e.Workspace().Resolve(rel)
	return target, err == nil
}

// sees reports whether g may see the file at rel: rel, and the file it
// resolves to, lie inside g's prefixes. Paths that cannot be resolved are
// not seen.
func (a *access) sees(g *Grant, rel string) bool {
	if len(g.Prefixes) == 0 {
		return true
	}
	if !g.allows(rel) {
		return false
	}
	target, ok := a.resolve(rel)
	return ok && g.allows(target)
}

type accessKey struct{}

func (a *access) unary() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := a.check(ctx, info.FullMethod, req); err != nil {
			return nil, toStatus(err)
		}
		return handler(context.WithValue(ctx, accessKey{}, a), req)
	}
}

// stream checks the request of a server-streaming call when the handler
// receives it, before the handler sees it.
func (a *access) stream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if !isFileService(info.FullMethod) {
			return handler(srv, ss)
		}
		cs := &checkedStream{ServerStream: ss, ctx: context.WithValue(ss.Context(), accessKey{}, a), a: a, method: info.FullMethod}
		if info.IsClientStream {
			// None in FileService; such a method would need its checks
			// per message, so refuse it rather than pass it unchecked.
			cs.check = func(any) error {
				return &accessError{reason: ReasonPermissionDenied, msg: "client-streaming calls are not supported"}
			}
		}
		return handler(srv, cs)
	}
}

type checkedStream struct {
	grpc.ServerStream
	ctx    context.Context
	a      *access
	method string
	check  func(m any) error
}

func (s *checkedStream) Context() context.Context { return s.ctx }

func (s *checkedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if s.check != nil {
		return toStatus(s.check(m))
	}
	if ls, ok := s.ctx.Value(grantKey{}).(*liveStream); ok {
		// A token file reload checks the request again, under the new
		// grant.
		ls.setRecheck(func() error { return s.a.check(s.ctx, s.method, m) })
	}
	if err := s.a.check(s.ctx, s.method, m); err != nil {
		return toStatus(err)
	}
	return nil
}

// allowed reports whether the caller may see the file at rel (a clean path
// relative to the root): always without tokens or prefixes; otherwise if
// rel, and the file it resolves to, lie inside the grant's prefixes.
// Streams over many files (Grep, Watch) filter what they report with it.
func allowed(ctx context.Context, rel string) bool {
	g := grantFrom(ctx)
	if g == nil || len(g.Prefixes) == 0 {
		return true
	}
	a, ok := ctx.Value(accessKey{}).(*access)
	return ok && a.sees(g, rel)
}

// searchFS returns the file system a search for the caller walks: the
// workspace root, or for a token limited to path prefixes a view of it in
// which everything else does not exist (directories above a prefix list
// only what leads to it, so .gitignore files above the prefixes do not
// apply, as they do not when a search starts inside a directory).
func (s *Service) searchFS(ctx context.Context) fs.FS {
	fsys := grep.RootFS(s.e.Workspace().Root())
	g := grantFrom(ctx)
	if g == nil || len(g.Prefixes) == 0 {
		return fsys
	}
	a, ok := ctx.Value(accessKey{}).(*access)
	if !ok {
		a = newAccess(s)
	}
	return &prefixFS{fsys: fsys, a: a, ctx: ctx}
}

// prefixFS is a view of fsys limited to a grant's prefixes. It implements
// the interfaces the grep walker uses (StatFS, ReadDirFS, and ReadLinkFS
// for List, which reports links without following them). The grant is
// read from ctx at every step: a token file reload can narrow or widen it
// during a walk.
type prefixFS struct {
	fsys fs.FS
	a    *access
	ctx  context.Context
}

// grant is the grant in force; never nil (a walk of a token without
// prefixes is not limited, see searchFS).
func (p *prefixFS) grant() *Grant {
	if g := grantFrom(p.ctx); g != nil {
		return g
	}
	return &Grant{}
}

func (p *prefixFS) visible(op, name string) error {
	g := p.grant()
	if p.a.sees(g, name) {
		return nil
	}
	if g.leadsTo(name) {
		// A directory above a prefix: walkable, to reach the prefix.
		if fi, err := fs.Lstat(p.fsys, name); err == nil && fi.IsDir() {
			return nil
		}
	}
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

func (p *prefixFS) Open(name string) (fs.File, error) {
	if err := p.visible("open", name); err != nil {
		return nil, err
	}
	return p.fsys.Open(name)
}

func (p *prefixFS) Stat(name string) (fs.FileInfo, error) {
	if err := p.visible("stat", name); err != nil {
		return nil, err
	}
	return fs.Stat(p.fsys, name)
}

func (p *prefixFS) Lstat(name string) (fs.FileInfo, error) {
	if err := p.visible("lstat", name); err != nil {
		return nil, err
	}
	return fs.Lstat(p.fsys, name)
}

func (p *prefixFS) ReadLink(name string) (string, error) {
	if err := p.visible("readlink", name); err != nil {
		return "", err
	}
	return fs.ReadLink(p.fsys, name)
}

func (p *prefixFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := p.visible("readdir", name); err != nil {
		return nil, err
	}
	ents, err := fs.ReadDir(p.fsys, name)
	out := ents[:0]
	g := p.grant()
	for _, e := range ents {
		if g.leadsTo(path.Join(name, e.Name())) {
			out = append(out, e)
		}
	}
	return out, err
}
