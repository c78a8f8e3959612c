package server

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/wire"
)

// ReasonWrongWorkspace refuses a call whose x-hashline-workspace names a
// workspace other than the server's.
const ReasonWrongWorkspace = hashlinev1.ErrorReason_ERROR_REASON_WRONG_WORKSPACE

// WorkspaceMetadataKey is the request metadata naming the workspace a call
// is meant for (wire.WorkspaceMetadataKey).
const WorkspaceMetadataKey = wire.WorkspaceMetadataKey

// checkWorkspace checks the x-hashline-workspace metadata of a FileService
// call against served, the server's workspace name ("" when it has none).
// A call without the metadata is served: a server serves one workspace, and
// a caller that names none means whatever it reached (a router that routes
// by host sets the metadata itself, see deploy/nginx). A malformed name is
// refused whatever the server's name, so that a client's mistake shows
// before it meets a named server. Every value the call carries must name
// served: a router's value and a caller's that disagree are refused, not
// resolved in either's favour.
func checkWorkspace(ctx context.Context, served string) error {
	vals := metadata.ValueFromIncomingContext(ctx, WorkspaceMetadataKey)
	for _, v := range vals {
		if err := wire.CheckWorkspaceName(v); err != nil {
			return newStatus(ReasonInvalidArgument, fmt.Sprintf("%s metadata: %v", WorkspaceMetadataKey, err), map[string]string{"field": WorkspaceMetadataKey})
		}
	}
	if served == "" {
		return nil
	}
	for _, v := range vals {
		if v != served {
			return newStatus(ReasonWrongWorkspace, fmt.Sprintf("this server serves workspace %q, not %q: the call was routed to the wrong server, and nothing was read or written. Check the router's route for workspace %q, or connect to that workspace's own server.", served, v, v),
				map[string]string{"workspace": v, "served": served})
		}
	}
	return nil
}

func workspaceUnary(served string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if isFileService(info.FullMethod) {
			if err := checkWorkspace(ctx, served); err != nil {
				return nil, err
			}
		}
		return handler(ctx, req)
	}
}

func workspaceStream(served string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if isFileService(info.FullMethod) {
			if err := checkWorkspace(ss.Context(), served); err != nil {
				return err
			}
		}
		return handler(srv, ss)
	}
}
