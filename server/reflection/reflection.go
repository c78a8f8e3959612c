// Package reflection registers gRPC server reflection with descriptors
// that keep the .proto comments, so that `grpcurl describe` shows the API's
// documentation. It is a package of its own so that only hashlined links
// it (and protodesc): programs that run the server in-process (the CLI's
// --local, its MCP bridge) need no reflection and would pay for those
// packages' initialisation on every start.
package reflection

import (
	_ "embed"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	grpcreflection "google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Register registers the reflection service, v1 and v1alpha (grpcurl's
// fallback), on gs, as grpc's reflection.Register does but answering from
// the documented descriptors.
func Register(gs *grpc.Server) {
	opts := grpcreflection.ServerOptions{Services: gs, DescriptorResolver: documentedResolver{}}
	reflectionv1.RegisterServerReflectionServer(gs, grpcreflection.NewServerV1(opts))
	reflectionv1alpha.RegisterServerReflectionServer(gs, grpcreflection.NewServer(opts))
}

// descriptorsWithDocs is proto/ built by buf with source info (`make
// generate` writes it, `make checkgenerate` checks it is current). The
// descriptors compiled into gen/go have their comments stripped, so
// reflection served from them gives `grpcurl describe` no documentation;
// served from this set, it shows every comment of the .proto files.
//
//go:embed descriptors.binpb
var descriptorsWithDocs []byte

// reflectionFiles decodes descriptorsWithDocs once, when the first
// reflection call asks for a descriptor, rather than at package init or
// when a server registers reflection: the decoded set, comments and all,
// is a large part of an idle server's heap, and most servers are never
// asked.
var reflectionFiles = sync.OnceValues(func() (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(descriptorsWithDocs, &set); err != nil {
		return nil, fmt.Errorf("reflection descriptors: %w", err)
	}
	// The set holds our files alone, each after those it imports; their
	// imports from elsewhere (descriptor.proto) resolve to the compiled-in
	// descriptors.
	files := new(protoregistry.Files)
	deps := chainResolver{files, protoregistry.GlobalFiles}
	for _, fdp := range set.GetFile() {
		fd, err := protodesc.NewFile(fdp, deps)
		if err != nil {
			return nil, fmt.Errorf("reflection descriptors: %w", err)
		}
		if err := files.RegisterFile(fd); err != nil {
			return nil, fmt.Errorf("reflection descriptors: %w", err)
		}
	}
	return files, nil
})

// chainResolver finds a file or descriptor in the first registry that has
// it.
type chainResolver []*protoregistry.Files

func (c chainResolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	for _, r := range c {
		if fd, err := r.FindFileByPath(path); err == nil {
			return fd, nil
		}
	}
	return nil, protoregistry.NotFound
}

func (c chainResolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	for _, r := range c {
		if d, err := r.FindDescriptorByName(name); err == nil {
			return d, nil
		}
	}
	return nil, protoregistry.NotFound
}

// documentedResolver answers reflection from the documented descriptors
// first and from the compiled-in registry for everything else (health,
// reflection itself). A file of the set that failed to load falls back to
// the compiled-in registry too: reflection without comments beats none.
type documentedResolver struct{}

func (documentedResolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if docs, _ := reflectionFiles(); docs != nil {
		if fd, err := docs.FindFileByPath(path); err == nil {
			return fd, nil
		}
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

func (documentedResolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if docs, _ := reflectionFiles(); docs != nil {
		if d, err := docs.FindDescriptorByName(name); err == nil {
			return d, nil
		}
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}
