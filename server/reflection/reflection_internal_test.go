package reflection

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/hashline/hashline/gen/go/hashline/v1" // registers the compiled-in descriptors
)

// TestReflectionDescriptorsMatchTheCompiledOnes: the documented set served
// by reflection must describe exactly the messages the server speaks, or
// grpcurl would encode requests the server decodes differently. Stripped
// of their comments and file options, both must be equal (`make generate`
// rebuilds both).
func TestReflectionDescriptorsMatchTheCompiledOnes(t *testing.T) {
	files, err := reflectionFiles()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		compiled, err := protoregistry.GlobalFiles.FindFileByPath(fd.Path())
		if err != nil {
			t.Errorf("%s is in server/reflection/descriptors.binpb but not compiled in: run make generate", fd.Path())
			return true
		}
		n++
		docs, bin := protodesc.ToFileDescriptorProto(fd), protodesc.ToFileDescriptorProto(compiled)
		if docs.GetSourceCodeInfo() == nil && fd.Package() == "hashline.v1" {
			t.Errorf("%s has no source info in server/reflection/descriptors.binpb", fd.Path())
		}
		// buf generate's managed mode adds language options (java_package,
		// ...) to the compiled-in files that buf build does not: they name
		// generated code, not anything on the wire.
		docs.SourceCodeInfo, bin.SourceCodeInfo = nil, nil
		docs.Options, bin.Options = nil, nil
		if !proto.Equal(docs, bin) {
			t.Errorf("%s differs from the compiled-in descriptor: run make generate", fd.Path())
		}
		return true
	})
	if n < 2 {
		t.Errorf("only %d files in the documented set", n)
	}
}
