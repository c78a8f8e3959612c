package server

import (
	_ "embed"
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// descriptorsWithDocs is proto/ built by buf with source info (`make
// generate` writes it, `make checkgenerate` checks it is current). The
// descriptors compiled into gen/go have their comments stripped, so
// reflection served from them gives `grpcurl describe` no documentation;
// served from this set, it shows every comment of the .proto files.
//
//go:embed reflection/descriptors.binpb
var descriptorsWithDocs []byte

// reflectionFiles decodes descriptorsWithDocs once, when the first server
// is built, rather than at package init: the CLI links this package for
// --local and must not pay for it on every start.
var reflectionFiles = sync.OnceValues(func() (*protoregistry.Files, error) {
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(descriptorsWithDocs, &set); err != nil {
		return nil, fmt.Errorf("reflection descriptors: %w", err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("reflection descriptors: %w", err)
	}
	return files, nil
})

// documentedResolver answers reflection from the documented descriptors
// first and from the compiled-in registry for everything else (health,
// reflection itself). A file of the set that failed to load falls back to
// the compiled-in registry too: reflection without comments beats none.
type documentedResolver struct{ docs *protoregistry.Files }

func (r documentedResolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if r.docs != nil {
		if fd, err := r.docs.FindFileByPath(path); err == nil {
			return fd, nil
		}
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

func (r documentedResolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if r.docs != nil {
		if d, err := r.docs.FindDescriptorByName(name); err == nil {
			return d, nil
		}
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}

// reflectionResolver is the DescriptorResolver of the reflection service.
func reflectionResolver() documentedResolver {
	files, _ := reflectionFiles()
	return documentedResolver{docs: files}
}
