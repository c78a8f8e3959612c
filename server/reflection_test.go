package server_test

import (
	"strings"
	"testing"

	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// reflectedFiles asks the server's reflection service (v1 or v1alpha) for
// the file defining symbol and returns the file descriptors it sends.
func reflectedFiles(t *testing.T, e *env, v1 bool, symbol string) []*descriptorpb.FileDescriptorProto {
	t.Helper()
	var raw [][]byte
	if v1 {
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
			t.Fatalf("reflection v1 on %s: %s", symbol, m.GetErrorMessage())
		}
		raw = resp.GetFileDescriptorResponse().GetFileDescriptorProto()
	} else {
		stream, err := reflectionv1alpha.NewServerReflectionClient(e.conn).ServerReflectionInfo(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&reflectionv1alpha.ServerReflectionRequest{MessageRequest: &reflectionv1alpha.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: symbol}}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m := resp.GetErrorResponse(); m != nil {
			t.Fatalf("reflection v1alpha on %s: %s", symbol, m.GetErrorMessage())
		}
		raw = resp.GetFileDescriptorResponse().GetFileDescriptorProto()
	}
	var files []*descriptorpb.FileDescriptorProto
	for _, b := range raw {
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
	for _, tc := range []struct {
		name string
		v1   bool
	}{
		{"reflection v1 sends the comment of FileService.Edit", true},
		{"reflection v1alpha (grpcurl's fallback) sends it too", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := reflectedFiles(t, e, tc.v1, "hashline.v1.FileService.Edit")
			docs := leadingComments(files, "hashline/v1/hashline.proto")
			if !strings.Contains(docs, "Edit applies a batch of reference-based edits atomically") {
				t.Errorf("hashline.proto as reflected has no comment on Edit; its comments: %.300q", docs)
			}
		})
	}
	t.Run("services outside proto/ (health) are still reflected", func(t *testing.T) {
		files := reflectedFiles(t, e, true, "grpc.health.v1.Health")
		if len(files) == 0 || files[0].GetPackage() != "grpc.health.v1" {
			t.Errorf("health reflected as %v", files)
		}
	})
}
