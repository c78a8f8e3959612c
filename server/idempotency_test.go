package server_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/server"
)

// plainClient is an agent's client that sends requests exactly as given:
// no retries, so no request_id of its own.
func (e *env) plainClient(agent string) *client.Client {
	return client.New(e.conn, client.WithAgentID(agent), client.WithRetry(client.RetryPolicy{}))
}

func appendEdit(id, text string) *hashlinev1.EditRequest {
	return &hashlinev1.EditRequest{Path: "log.txt", Edits: []*hashlinev1.FileEdit{client.Append(text)}, RequestId: id}
}

func TestRequestIDAppliesOnce(t *testing.T) {
	t.Run("an append sent twice with one request_id is applied once and answered alike", func(t *testing.T) {
		e := newEnv(t)
		e.write("log.txt", "start\n")
		a := e.plainClient("a")
		first, err := a.Edit(e.ctx, appendEdit("k1", "one"))
		if err != nil {
			t.Fatal(err)
		}
		second, err := a.Edit(e.ctx, appendEdit("k1", "one"))
		if err != nil {
			t.Fatal(err)
		}
		if got := e.read("log.txt"); got != "start\none\n" {
			t.Fatalf("disk holds %q, want one append", got)
		}
		if !proto.Equal(first, second) {
			t.Errorf("the retry's response differs from the first:\n%v\n%v", first, second)
		}
	})
	t.Run("a Write retried after another agent's write returns the first outcome and keeps the other write", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.plainClient("a"), e.plainClient("b")
		req := &hashlinev1.WriteRequest{Path: "f.txt", Content: "mine\n", Mode: hashlinev1.WriteMode_WRITE_MODE_CREATE, RequestId: "k1"}
		first, err := a.Write(e.ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Write(e.ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "theirs\n"}); err != nil {
			t.Fatal(err)
		}
		again, err := a.Write(e.ctx, req)
		if err != nil {
			t.Fatalf("the retry of a create that succeeded: %v (it must not answer ALREADY_EXISTS)", err)
		}
		if !proto.Equal(first, again) || !again.GetCreated() {
			t.Errorf("retry answered %v, want the first response %v", again, first)
		}
		if got := e.read("f.txt"); got != "theirs\n" {
			t.Errorf("disk holds %q: the retry wrote again over the other agent's write", got)
		}
	})
	t.Run("two agents with the same request_id are independent", func(t *testing.T) {
		e := newEnv(t)
		e.write("log.txt", "start\n")
		for _, agent := range []string{"a", "b"} {
			if _, err := e.plainClient(agent).Edit(e.ctx, appendEdit("shared", "line")); err != nil {
				t.Fatalf("agent %s: %v", agent, err)
			}
		}
		if got := e.read("log.txt"); got != "start\nline\nline\n" {
			t.Fatalf("disk holds %q, want both agents' appends", got)
		}
	})
	t.Run("a refusal is answered again as it was, even once the request would pass", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.plainClient("a"), e.plainClient("b")
		v1, err := a.Write(e.ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "one\n"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Write(e.ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "two\n"}); err != nil {
			t.Fatal(err)
		}
		cas := &hashlinev1.WriteRequest{Path: "f.txt", Content: "three\n", ExpectedVersion: v1.GetVersion(), RequestId: "k1"}
		_, err1 := a.Write(e.ctx, cas)
		if reasonOf(err1) != server.ReasonVersionMismatch {
			t.Fatalf("first: %v, want VERSION_MISMATCH", err1)
		}
		// The file is back at v1: the same request, run again, would write.
		if _, err := b.Write(e.ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "one\n"}); err != nil {
			t.Fatal(err)
		}
		_, err2 := a.Write(e.ctx, cas)
		if reasonOf(err2) != server.ReasonVersionMismatch || status.Convert(err1).Message() != status.Convert(err2).Message() {
			t.Fatalf("retry: %v; want the first answer again: %v", err2, err1)
		}
		if got := e.read("f.txt"); got != "one\n" {
			t.Errorf("disk holds %q: the retry ran", got)
		}
	})
	t.Run("with the table turned off a retry applies again", func(t *testing.T) {
		e := newEnv(t, engine.WithRequestIDTTL(0))
		e.write("log.txt", "")
		a := e.plainClient("a")
		for range 2 {
			if _, err := a.Edit(e.ctx, appendEdit("k1", "one")); err != nil {
				t.Fatal(err)
			}
		}
		if got := e.read("log.txt"); got != "one\none\n" {
			t.Fatalf("disk holds %q", got)
		}
	})
}

func TestRequestIDRefusals(t *testing.T) {
	long := strings.Repeat("k", engine.MaxRequestIDBytes+1)
	cases := []struct {
		name   string
		first  func(c *client.Client, e *env) error // may be nil
		second func(c *client.Client, e *env) error
		reason hashlinev1.ErrorReason
	}{
		{
			name:   "the same request_id with another edit is refused",
			first:  func(c *client.Client, e *env) error { _, err := c.Edit(e.ctx, appendEdit("k1", "one")); return err },
			second: func(c *client.Client, e *env) error { _, err := c.Edit(e.ctx, appendEdit("k1", "two")); return err },
			reason: server.ReasonRequestIDReused,
		},
		{
			name:  "an Edit's request_id cannot be reused for a Write",
			first: func(c *client.Client, e *env) error { _, err := c.Edit(e.ctx, appendEdit("k1", "one")); return err },
			second: func(c *client.Client, e *env) error {
				_, err := c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "log.txt", Content: "x", RequestId: "k1"})
				return err
			},
			reason: server.ReasonRequestIDReused,
		},
		{
			name:   "an Edit's request_id over the length bound is refused",
			second: func(c *client.Client, e *env) error { _, err := c.Edit(e.ctx, appendEdit(long, "one")); return err },
			reason: server.ReasonInvalidArgument,
		},
		{
			name: "a Write's request_id over the length bound is refused",
			second: func(c *client.Client, e *env) error {
				_, err := c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "log.txt", Content: "x", RequestId: long})
				return err
			},
			reason: server.ReasonInvalidArgument,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("log.txt", "start\n")
			c := e.plainClient("a")
			if tc.first != nil {
				if err := tc.first(c, e); err != nil {
					t.Fatal(err)
				}
			}
			before := e.snapshot()
			err := tc.second(c, e)
			if status.Code(err) != codes.InvalidArgument || reasonOf(err) != tc.reason {
				t.Fatalf("err = %v, want INVALID_ARGUMENT %s", err, tc.reason)
			}
			if !strings.Contains(status.Convert(err).Message(), "request_id") {
				t.Errorf("the message does not name request_id: %s", status.Convert(err).Message())
			}
			e.assertUnchanged(before)
		})
	}
}

func TestRequestIDDryRunIsNotRemembered(t *testing.T) {
	e := newEnv(t)
	e.write("log.txt", "start\n")
	a := e.plainClient("a")
	dry := appendEdit("k1", "one")
	dry.DryRun = true
	if _, err := a.Edit(e.ctx, dry); err != nil {
		t.Fatal(err)
	}
	resp, err := a.Edit(e.ctx, appendEdit("k1", "one"))
	if err != nil {
		t.Fatalf("the real edit after a dry run with its key: %v", err)
	}
	if resp.GetDryRun() {
		t.Fatal("the real edit was answered with the dry run's response")
	}
	if got := e.read("log.txt"); got != "start\none\n" {
		t.Fatalf("disk holds %q, want the append", got)
	}
}
