package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// recording passes calls on and keeps the Edit and Write requests.
type recording struct {
	grpc.ClientConnInterface
	ids *[]string
}

func (r recording) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	switch req := args.(type) {
	case *hashlinev1.EditRequest:
		*r.ids = append(*r.ids, req.GetRequestId())
	case *hashlinev1.WriteRequest:
		*r.ids = append(*r.ids, req.GetRequestId())
	}
	return r.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

// An in-process call cannot lose its reply: the engine's client sends
// Edit and Write without a request_id of its own, so the service keeps no
// outcome for them, while a request_id the caller sets is still honoured
// (a repeat gets the first outcome instead of a stale-ref refusal).
func TestInProcessCallsCarryOnlyTheCallersRequestID(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := Start(Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var ids []string
	e.calls.conn = recording{ClientConnInterface: e.calls.conn, ids: &ids}
	ctx := context.Background()
	r, err := e.Client.Read(ctx, &hashlinev1.ReadRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.Write(ctx, &hashlinev1.WriteRequest{Path: "b.txt", Content: "x\n"}); err != nil {
		t.Fatal(err)
	}
	edit := &hashlinev1.EditRequest{Path: "a.txt", RequestId: "k1", Edits: []*hashlinev1.FileEdit{
		client.Replace(client.Ref(r.GetLines()[1]), "", "TWO"),
	}}
	first, err := e.Client.Edit(ctx, edit)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Client.Edit(ctx, edit)
	if err != nil {
		t.Fatalf("the repeat of an edit under its request_id was not answered with the first outcome: %v", err)
	}
	if again.GetVersion() != first.GetVersion() {
		t.Errorf("repeat answered version %s, the first %s", again.GetVersion(), first.GetVersion())
	}
	if want := []string{"", "k1", "k1"}; len(ids) != len(want) || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
		t.Errorf("request_ids sent = %q, want %q", ids, want)
	}
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	if err != nil || string(got) != "one\nTWO\n" {
		t.Fatalf("a.txt = %q, %v; want %q", got, err, "one\nTWO\n")
	}
}
