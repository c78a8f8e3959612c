package client

import (
	"context"
	"errors"
	"net"
	"testing"

	"google.golang.org/grpc/codes"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// TestNotSent checks that a change refused before it left the client
// (nothing listening) says so, and one cut off after the server got it
// does not.
func TestNotSent(t *testing.T) {
	ctx := context.Background()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := lis.Addr().String()
	lis.Close() // nothing listens there now
	svc, cutAddr := serveCut(t, "127.0.0.1:0")
	for _, tc := range []struct {
		name        string
		addr        string
		cut         bool
		wantNotSent bool
	}{
		{"a refused connection sent nothing", refused, false, true},
		{"a connection cut after the request arrived may have applied it", cutAddr, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(tc.addr, WithRetry(RetryPolicy{}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			svc.cut.Store(tc.cut)
			for name, call := range map[string]func() error{
				"Edit": func() error {
					_, err := c.Edit(ctx, &hashlinev1.EditRequest{Path: "a", Edits: []*hashlinev1.FileEdit{Append("x")}})
					return err
				},
				"Delete": func() error {
					_, err := c.Delete(ctx, &hashlinev1.DeleteRequest{Path: "a"})
					return err
				},
			} {
				if tc.cut && name != "Edit" {
					continue // cutService implements Edit, Write and Read only
				}
				svc.cut.Store(tc.cut)
				err := call()
				var e *Error
				if !errors.As(err, &e) || e.Code != codes.Unavailable {
					t.Fatalf("%s: got %v, want UNAVAILABLE", name, err)
				}
				if e.NotSent != tc.wantNotSent {
					t.Errorf("%s: NotSent = %v, want %v (%v)", name, e.NotSent, tc.wantNotSent, err)
				}
			}
		})
	}
}
