package server_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// A retry of a Delete, Move or Apply that succeeded (same request_id, same
// request) gets the first outcome again, and changes nothing a second time:
// not a NOT_FOUND for the file the first call deleted or moved away.
func TestChangeRetriesReplayTheFirstOutcome(t *testing.T) {
	e, _ := intentEnv(t)
	e.write("a.txt", "a\n")
	e.write("b.txt", "b\n")
	e.write("c.txt", "c\n")
	calls := []struct {
		name string
		call func() (proto.Message, error)
	}{
		{"a Delete", func() (proto.Message, error) {
			return e.c.Delete(e.ctx, &hashlinev1.DeleteRequest{Path: "a.txt", RequestId: "r-delete"})
		}},
		{"a Move", func() (proto.Message, error) {
			return e.c.Move(e.ctx, &hashlinev1.MoveRequest{From: "b.txt", To: "moved/b.txt", RequestId: "r-move"})
		}},
		{"an Apply", func() (proto.Message, error) {
			return e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{RequestId: "r-apply", Changes: []*hashlinev1.Change{
				moveChange("c.txt", "moved/c.txt"), writeChange("new.txt", "n\n"),
			}})
		}},
	}
	for _, c := range calls {
		t.Run(c.name+" retried is answered as the first time", func(t *testing.T) {
			first, err := c.call()
			if err != nil {
				t.Fatal(err)
			}
			before := e.snapshot()
			again, err := c.call()
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if !proto.Equal(first, again) {
				t.Errorf("retry answered %v, first %v", again, first)
			}
			e.assertUnchanged(before)
		})
	}
}
