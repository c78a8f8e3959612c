// Package server is the gRPC face of the engine: it implements the
// hashline.v1.FileService service by translating each request to the
// engine's operation (internal/engine, where every rule lives) and each
// error to a gRPC status in one place (errors.go), and it holds the
// interceptors that are about the transport and the caller: tokens and
// path grants, rate and stream limits, logging and metrics.
package server

import (
	"context"

	"google.golang.org/grpc"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/workspace"
)

// Service is the FileService implementation over one engine.
type Service struct {
	hashlinev1.UnimplementedFileServiceServer

	e *engine.Engine
	// workspace is the name Status reports (GRPCConfig.Workspace).
	workspace string
}

// New returns a Service over a new engine of ws, whose responses it
// measures against the response limit by their encoded size.
func New(ws *workspace.Workspace, opts ...engine.Option) *Service {
	return NewService(engine.New(ws, append(EngineOptions(), opts...)...))
}

// EngineOptions are the options an engine served by this face needs: the
// measure of its results as this face sends them, which the response limit
// is checked against before anything is written.
func EngineOptions() []engine.Option {
	return []engine.Option{engine.WithResponseSize(responseSize)}
}

// NewService returns a Service that serves e, an engine made with
// EngineOptions among its options (New does that, and so does hashlined's
// engine.Open); an engine made without them checks no response size.
func NewService(e *engine.Engine) *Service {
	return &Service{e: e}
}

// Engine is the engine the service serves.
func (s *Service) Engine() *engine.Engine { return s.e }

// Register adds the service to a gRPC server.
func (s *Service) Register(r grpc.ServiceRegistrar) {
	hashlinev1.RegisterFileServiceServer(r, s)
}

// call is ctx naming the calling agent to the engine.
func call(ctx context.Context) context.Context {
	return engine.WithAgent(ctx, AgentID(ctx))
}

// change is call for a call that changes files: the request_id it
// carries goes into the change history with its change.
func change(ctx context.Context, req interface{ GetRequestId() string }) context.Context {
	return engine.WithRequestID(call(ctx), req.GetRequestId())
}

// Read returns a page of a file as tagged lines.
func (s *Service) Read(ctx context.Context, req *hashlinev1.ReadRequest) (*hashlinev1.ReadResponse, error) {
	res, err := s.e.Read(call(ctx), readRequest(req))
	if err != nil {
		return nil, toStatus(err)
	}
	return readResponse(res), nil
}

// Edit checks every reference of the batch against the file, rebases it
// when it was made against an older version, and writes the file once. A
// request_id makes a retry return the first call's outcome.
func (s *Service) Edit(ctx context.Context, req *hashlinev1.EditRequest) (*hashlinev1.EditResponse, error) {
	ctx = change(ctx, req)
	return once(ctx, s, req, req.GetRequestId(), req.GetDryRun(), func() (*hashlinev1.EditResponse, error) {
		r, err := s.e.Edit(ctx, editRequest(req))
		return answer(r, err, editResponse)
	})
}

// Write creates or overwrites a whole file, atomically and durably.
func (s *Service) Write(ctx context.Context, req *hashlinev1.WriteRequest) (*hashlinev1.WriteResponse, error) {
	ctx = change(ctx, req)
	return once(ctx, s, req, req.GetRequestId(), false, func() (*hashlinev1.WriteResponse, error) {
		r, err := s.e.Write(ctx, writeRequest(req))
		return answer(r, err, writeResponse)
	})
}

// Delete removes a file or an empty directory.
func (s *Service) Delete(ctx context.Context, req *hashlinev1.DeleteRequest) (*hashlinev1.DeleteResponse, error) {
	ctx = change(ctx, req)
	return once(ctx, s, req, req.GetRequestId(), false, func() (*hashlinev1.DeleteResponse, error) {
		r, err := s.e.Delete(ctx, deleteRequest(req))
		return answer(r, err, deleteResponse)
	})
}

// Move renames a file inside the workspace; its history moves with it.
func (s *Service) Move(ctx context.Context, req *hashlinev1.MoveRequest) (*hashlinev1.MoveResponse, error) {
	ctx = change(ctx, req)
	return once(ctx, s, req, req.GetRequestId(), false, func() (*hashlinev1.MoveResponse, error) {
		r, err := s.e.Move(ctx, moveRequest(req))
		return answer(r, err, moveResponse)
	})
}

// Apply makes a change set all or nothing.
func (s *Service) Apply(ctx context.Context, req *hashlinev1.ApplyRequest) (*hashlinev1.ApplyResponse, error) {
	ctx = change(ctx, req)
	return once(ctx, s, req, req.GetRequestId(), req.GetDryRun(), func() (*hashlinev1.ApplyResponse, error) {
		r, err := s.e.Apply(ctx, applyRequest(req))
		return answer(r, err, applyResponse)
	})
}

// List returns a page of a directory's entries, those the caller's token
// may see.
func (s *Service) List(ctx context.Context, req *hashlinev1.ListRequest) (*hashlinev1.ListResponse, error) {
	res, err := s.e.List(call(ctx), s.searchFS(ctx), listRequest(req))
	if err != nil {
		return nil, toStatus(err)
	}
	return listResponse(res), nil
}

// Grep streams the matching lines of every file under the request's path
// that the caller's token may see, one message per file in path order,
// then a summary.
func (s *Service) Grep(req *hashlinev1.GrepRequest, stream hashlinev1.FileService_GrepServer) error {
	ctx := stream.Context()
	sum, err := s.e.Grep(call(ctx), s.searchFS(ctx), grepRequest(req), func(f engine.GrepFile) error {
		return stream.Send(grepFileResponse(f))
	})
	if err != nil {
		return toStatus(err)
	}
	return toStatus(stream.Send(grepSummaryResponse(sum)))
}

// Status describes the server.
func (s *Service) Status(ctx context.Context, _ *hashlinev1.StatusRequest) (*hashlinev1.StatusResponse, error) {
	res, err := s.e.Status(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	r := statusResponse(res)
	r.Workspace = s.workspace
	return r, nil
}

// History lists the committed changes of a file, a directory or the
// workspace, newest first, those the caller's token may see.
func (s *Service) History(ctx context.Context, req *hashlinev1.HistoryRequest) (*hashlinev1.HistoryResponse, error) {
	res, err := s.e.History(call(ctx), historyRequest(ctx, req))
	if err != nil {
		return nil, toStatus(err)
	}
	return historyResponse(res), nil
}

// Blame returns a page of a file's lines, each with the change that last
// wrote it.
func (s *Service) Blame(ctx context.Context, req *hashlinev1.BlameRequest) (*hashlinev1.BlameResponse, error) {
	res, err := s.e.Blame(call(ctx), blameRequest(req))
	if err != nil {
		return nil, toStatus(err)
	}
	return blameResponse(res), nil
}
