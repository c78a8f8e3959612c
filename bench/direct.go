package main

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/workspace"
	hlserver "github.com/hashline/hashline/server"
)

// direct is the service in this process with no transport and no
// interceptors: a client's unary calls go straight to its methods, so that
// an Edit's time here is the service's own, which the gRPC Edit and its
// steps are measured against.
type direct struct {
	Client *client.Client
	ws     *workspace.Workspace
}

func startDirect(root string, opts ...client.Option) (*direct, error) {
	return startDirectWith(root, nil, nil, opts...)
}

// startDirectWith is startDirect with options of the workspace and the
// engine (a change history, say).
func startDirectWith(root string, wsOpts []workspace.Option, engineOpts []engine.Option, opts ...client.Option) (*direct, error) {
	ws, err := workspace.Open(root, wsOpts...)
	if err != nil {
		return nil, err
	}
	conn := &directConn{svc: hlserver.New(ws, append([]engine.Option{engine.WithRequireRead(false)}, engineOpts...)...), methods: map[string]grpc.MethodHandler{}}
	desc := hashlinev1.FileService_ServiceDesc
	for _, m := range desc.Methods {
		conn.methods["/"+desc.ServiceName+"/"+m.MethodName] = m.Handler
	}
	return &direct{Client: client.New(conn, append([]client.Option{client.WithRetry(client.RetryPolicy{})}, opts...)...), ws: ws}, nil
}

func (d *direct) Close() error { return d.ws.Close() }

type directConn struct {
	svc     *hlserver.Service
	methods map[string]grpc.MethodHandler
}

func (c *directConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	h, ok := c.methods[method]
	if !ok {
		return fmt.Errorf("bench: %s is not a unary FileService method", method)
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	resp, err := h(c.svc, metadata.NewIncomingContext(ctx, md), func(v any) error {
		proto.Merge(v.(proto.Message), args.(proto.Message))
		return nil
	}, nil)
	if err != nil {
		return err
	}
	proto.Reset(reply.(proto.Message))
	proto.Merge(reply.(proto.Message), resp.(proto.Message))
	return nil
}

func (c *directConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, fmt.Errorf("bench: no streams in process")
}
