package server

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// InProcess returns a connection for clients in the same process as svc
// (the CLI's --local mode and the embedded MCP bridge). Unary FileService
// calls go straight to svc through the same unary interceptors that
// NewGRPCServer installs for cfg, so access checks, default deadlines,
// logging and panic recovery apply alike, but nothing is encoded and no
// transport is crossed. The request and the response are copied with
// proto.Merge, so caller and service never share a message (strings are
// immutable and are shared). Outgoing metadata (the agent id) arrives as
// incoming metadata. Streaming calls (Grep, Watch) and any other service go
// to fallback, a real connection to the same service.
func InProcess(svc *Service, cfg GRPCConfig, fallback grpc.ClientConnInterface) grpc.ClientConnInterface {
	unary, _ := chains(svc, cfg)
	c := &inProcess{svc: svc, fallback: fallback, intercept: chainUnary(unary),
		methods: map[string]grpc.MethodHandler{}}
	desc := hashlinev1.FileService_ServiceDesc
	for _, m := range desc.Methods {
		c.methods["/"+desc.ServiceName+"/"+m.MethodName] = m.Handler
	}
	return c
}

type inProcess struct {
	svc       *Service
	fallback  grpc.ClientConnInterface
	intercept grpc.UnaryServerInterceptor
	methods   map[string]grpc.MethodHandler
}

func (c *inProcess) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	h, ok := c.methods[method]
	if !ok {
		return c.fallback.Invoke(ctx, method, args, reply, opts...)
	}
	in, ok1 := args.(proto.Message)
	out, ok2 := reply.(proto.Message)
	if !ok1 || !ok2 {
		return fmt.Errorf("hashline: in-process %s: request and reply must be protobuf messages, not %T and %T", method, args, reply)
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	ctx = metadata.NewIncomingContext(ctx, md)
	dec := func(v any) error {
		proto.Merge(v.(proto.Message), in)
		return nil
	}
	resp, err := h(c.svc, ctx, dec, c.intercept)
	if err != nil {
		return err
	}
	proto.Reset(out)
	proto.Merge(out, resp.(proto.Message))
	return nil
}

func (c *inProcess) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.fallback.NewStream(ctx, desc, method, opts...)
}

// chainUnary runs interceptors outermost first, as grpc.ChainUnaryInterceptor
// does on a server.
func chainUnary(ics []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, final grpc.UnaryHandler) (any, error) {
		var call func(i int) grpc.UnaryHandler
		call = func(i int) grpc.UnaryHandler {
			if i == len(ics) {
				return final
			}
			return func(ctx context.Context, req any) (any, error) {
				return ics[i](ctx, req, info, call(i+1))
			}
		}
		return call(0)(ctx, req)
	}
}
