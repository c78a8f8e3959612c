package server_test

import (
	"strings"
	"testing"

	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// reflectedFiles asks the server's reflection service (v1, which grpcurl
// tries first; v1alpha is served from the same options) for the file
// defining symbol and returns the file descriptors it sends.
func reflectedFiles(t *testing.T, e *env, symbol string) []*descriptorpb.FileDescriptorProto {
	t.Helper()
	stream, err := reflectionv1.NewServerReflectionClient(e.conn).ServerReflectionInfo(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if m := resp.GetErrorResponse(); m != nil {
		t.Fatalf("reflection on %s: %s", symbol, m.GetErrorMessage())
	}
	var files []*descriptorpb.FileDescriptorProto
	for _, b := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		fd := new(descriptorpb.FileDescriptorProto)
		if err := proto.Unmarshal(b, fd); err != nil {
			t.Fatal(err)
		}
		files = append(files, fd)
	}
	return files
}

// leadingComments returns every leading comment of the files, joined.
func leadingComments(files []*descriptorpb.FileDescriptorProto, name string) string {
	var b strings.Builder
	for _, f := range files {
		if f.GetName() != name {
			continue
		}
		for _, loc := range f.GetSourceCodeInfo().GetLocation() {
			b.WriteString(loc.GetLeadingComments())
		}
	}
	return b.String()
}

// TestReflectionServesTheProtoComments: `grpcurl describe` shows what
// reflection sends, so the documentation of the API must travel with it.
func TestReflectionServesTheProtoComments(t *testing.T) {
	e := newEnv(t)
	t.Run("reflection sends the comment of FileService.Edit", func(t *testing.T) {
		files := reflectedFiles(t, e, "hashline.v1.FileService.Edit")
		docs := leadingComments(files, "hashline/v1/hashline.proto")
		if !strings.Contains(docs, "Edit applies a batch of reference-based edits atomically") {
			t.Errorf("hashline.proto as reflected has no comment on Edit; its comments: %.300q", docs)
		}
	})
	t.Run("services outside proto/ (health) are still reflected", func(t *testing.T) {
		files := reflectedFiles(t, e, "grpc.health.v1.Health")
		if len(files) == 0 || files[0].GetPackage() != "grpc.health.v1" {
			t.Errorf("health reflected as %v", files)
		}
	})
}
