package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/server"
)

// directStream is the stream of a Grep or Watch called in process, with no
// gRPC server: it carries the call's context and keeps what is sent.
type directStream[T any] struct {
	grpc.ServerStream // nil: calls other than these would panic
	ctx               context.Context
	sent              []*T
}

func (s *directStream[T]) Context() context.Context     { return s.ctx }
func (s *directStream[T]) Send(m *T) error              { s.sent = append(s.sent, m); return nil }
func (s *directStream[T]) SetHeader(metadata.MD) error  { return nil }
func (s *directStream[T]) SendHeader(metadata.MD) error { return nil }
func (s *directStream[T]) SetTrailer(metadata.MD)       {}

// pathCall is one call naming path, made either in process on the
// Service (svc non-nil: no interceptor runs) or over gRPC (fc).
type pathCall func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, path string) error

// The paths no caller may name (the workspace's temp files, paths over the
// length and depth limits) are refused by the service itself, so a Service
// used without the gRPC server's interceptors refuses them exactly as the
// server does: same code, reason and message, and nothing on disk changes.
func TestPathRulesHoldWithoutInterceptors(t *testing.T) {
	t.Parallel()
	const temp = ".hashline-ABCDEFGHIJKLMNOPQRSTUVWXYZ.tmp"
	paths := []struct {
		name string
		path string
	}{
		{"a temp file's name", temp},
		{"a temp file's name in a directory", "src/.hashline-234567ABCDEFGHIJKLMNOPQRST.tmp"},
		{"a path over the length limit", strings.Repeat(strings.Repeat("a", 250)+"/", server.MaxPathBytes/251+1) + "f"},
		{"a path over the depth limit", strings.Repeat("d/", server.MaxPathDepth) + "f"},
	}
	agent := func(ctx context.Context) context.Context {
		return metadata.NewIncomingContext(ctx, metadata.Pairs(client.AgentMetadataKey, "direct"))
	}
	apply := func(mk func(p string) *hashlinev1.Change) pathCall {
		return func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			req := &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{mk(p)}}
			if svc != nil {
				_, err := svc.Apply(agent(ctx), req)
				return err
			}
			_, err := fc.Apply(ctx, req)
			return err
		}
	}
	editOf := func(p string) *hashlinev1.EditRequest {
		return &hashlinev1.EditRequest{Path: p, Edits: []*hashlinev1.FileEdit{client.Append("pwned")}}
	}
	writeOf := func(p string) *hashlinev1.WriteRequest {
		return &hashlinev1.WriteRequest{Path: p, Content: "pwned\n"}
	}
	calls := []struct {
		name string
		call pathCall
	}{
		{"Read", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			req := &hashlinev1.ReadRequest{Path: p}
			if svc != nil {
				_, err := svc.Read(agent(ctx), req)
				return err
			}
			_, err := fc.Read(ctx, req)
			return err
		}},
		{"Edit", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			if svc != nil {
				_, err := svc.Edit(agent(ctx), editOf(p))
				return err
			}
			_, err := fc.Edit(ctx, editOf(p))
			return err
		}},
		{"Write", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			if svc != nil {
				_, err := svc.Write(agent(ctx), writeOf(p))
				return err
			}
			_, err := fc.Write(ctx, writeOf(p))
			return err
		}},
		{"Delete", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			req := &hashlinev1.DeleteRequest{Path: p}
			if svc != nil {
				_, err := svc.Delete(agent(ctx), req)
				return err
			}
			_, err := fc.Delete(ctx, req)
			return err
		}},
		{"Move from", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			req := &hashlinev1.MoveRequest{From: p, To: "moved.txt"}
			if svc != nil {
				_, err := svc.Move(agent(ctx), req)
				return err
			}
			_, err := fc.Move(ctx, req)
			return err
		}},
		{"Move to", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			req := &hashlinev1.MoveRequest{From: "f.txt", To: p, Overwrite: true}
			if svc != nil {
				_, err := svc.Move(agent(ctx), req)
				return err
			}
			_, err := fc.Move(ctx, req)
			return err
		}},
		{"List", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			req := &hashlinev1.ListRequest{Path: p}
			if svc != nil {
				_, err := svc.List(agent(ctx), req)
				return err
			}
			_, err := fc.List(ctx, req)
			return err
		}},
		{"Grep", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			req := &hashlinev1.GrepRequest{Pattern: "x", Path: p, Hidden: true}
			if svc != nil {
				return svc.Grep(req, &directStream[hashlinev1.GrepResponse]{ctx: agent(ctx)})
			}
			st, err := fc.Grep(ctx, req)
			if err != nil {
				return err
			}
			for {
				if _, err := st.Recv(); err != nil {
					return err
				}
			}
		}},
		{"Watch", func(ctx context.Context, svc *server.Service, fc hashlinev1.FileServiceClient, p string) error {
			// A watch that is not refused runs until its context ends:
			// the short deadline turns that into a wrong code.
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			req := &hashlinev1.WatchRequest{Path: p}
			if svc != nil {
				return svc.Watch(req, &directStream[hashlinev1.WatchResponse]{ctx: agent(ctx)})
			}
			st, err := fc.Watch(ctx, req)
			if err != nil {
				return err
			}
			for {
				if _, err := st.Recv(); err != nil {
					return err
				}
			}
		}},
		{"Apply edit", apply(func(p string) *hashlinev1.Change {
			return &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: editOf(p)}}
		})},
		{"Apply write", apply(func(p string) *hashlinev1.Change {
			return &hashlinev1.Change{Change: &hashlinev1.Change_Write{Write: writeOf(p)}}
		})},
		{"Apply delete", apply(func(p string) *hashlinev1.Change {
			return &hashlinev1.Change{Change: &hashlinev1.Change_Delete{Delete: &hashlinev1.DeleteRequest{Path: p}}}
		})},
		{"Apply move from", apply(func(p string) *hashlinev1.Change {
			return &hashlinev1.Change{Change: &hashlinev1.Change_Move{Move: &hashlinev1.MoveRequest{From: p, To: "moved.txt"}}}
		})},
		{"Apply move to", apply(func(p string) *hashlinev1.Change {
			return &hashlinev1.Change{Change: &hashlinev1.Change_Move{Move: &hashlinev1.MoveRequest{From: "f.txt", To: p, Overwrite: true}}}
		})},
	}
	for _, c := range calls {
		for _, p := range paths {
			t.Run(c.name+" of "+p.name+" is refused in process as over gRPC", func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				e.write("f.txt", "x\n")
				e.write(temp, "x\n")
				e.write("src/.hashline-234567ABCDEFGHIJKLMNOPQRST.tmp", "x\n")
				before := e.snapshot()
				fc := hashlinev1.NewFileServiceClient(e.conn)
				ctx := metadata.AppendToOutgoingContext(e.ctx, client.AgentMetadataKey, "direct")
				overGRPC := c.call(ctx, nil, fc, p.path)
				direct := c.call(e.ctx, e.svc, nil, p.path)
				for _, r := range []struct {
					how string
					err error
				}{{"over gRPC", overGRPC}, {"in process", direct}} {
					if got := status.Code(r.err); got != codes.InvalidArgument {
						t.Errorf("%s: code %v (%v), want InvalidArgument", r.how, got, r.err)
					}
					if got := reasonOf(r.err); got != hashlinev1.ErrorReason_ERROR_REASON_INVALID_PATH {
						t.Errorf("%s: reason %v (%v), want INVALID_PATH", r.how, got, r.err)
					}
				}
				if g, d := status.Convert(overGRPC).Message(), status.Convert(direct).Message(); g != d {
					t.Errorf("messages differ:\nover gRPC  %q\nin process %q", g, d)
				}
				e.assertUnchanged(before)
			})
		}
	}
}
