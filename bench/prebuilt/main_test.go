package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
	"github.com/hashline/hashline/server"
)

// The prebuilt response is the service's own text-only Read of the file,
// field for field, so that timing it times the transport of the same bytes;
// and it is built once: a changed file gets the first response again.
func TestPrebuiltIsTheServicesResponseBuiltOnce(t *testing.T) {
	dir := t.TempDir()
	var text []byte
	for i := range 500 {
		text = fmt.Appendf(text, "\tv%06d := f(%d) // note\n", i, i%997)
	}
	if err := os.WriteFile(filepath.Join(dir, "r.go"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ctx := context.Background()
	want, err := server.New(ws).Read(ctx, &hashlinev1.ReadRequest{Path: "r.go", OmitLines: true})
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	p := newPrebuilt(root)
	got, err := p.Read(ctx, &hashlinev1.ReadRequest{Path: "r.go", OmitLines: true})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Errorf("prebuilt response differs from the service's:\n got %v\nwant %v", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "r.go"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, err := p.Read(ctx, &hashlinev1.ReadRequest{Path: "r.go", OmitLines: true}); err != nil || again != got {
		t.Errorf("second Read: %p, %v; want the first response %p", again, err, got)
	}
	if _, err := p.Read(ctx, &hashlinev1.ReadRequest{Path: "r.go"}); err == nil {
		t.Error("a Read with lines was answered; prebuilt only has the text-only response")
	}
	if _, err := p.Read(ctx, &hashlinev1.ReadRequest{Path: "../outside", OmitLines: true}); err == nil {
		t.Error("a path out of the root was read")
	}
}
