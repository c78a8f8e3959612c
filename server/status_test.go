package server_test

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/hashline/hashline/client"
	"github.com/hashline/hashline/internal/buildinfo"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/server"
)

func TestStatusDescribesTheServer(t *testing.T) {
	h, err := hashline.NewHasher(4)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name        string
		opts        []engine.Option
		hashLen     int32
		requireRead bool
	}{
		{"the defaults are reported as they are", nil, int32(hashline.DefaultHashLen), true},
		{"a longer hash and no read requirement are reported", []engine.Option{engine.WithHasher(h), engine.WithRequireRead(false)}, 4, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts...)
			st, err := e.c.Status(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.GetRoot() != e.root {
				t.Errorf("root = %q, want %q", st.GetRoot(), e.root)
			}
			if st.GetVersion() != buildinfo.Version() || st.GetHashLen() != tt.hashLen || st.GetRequireRead() != tt.requireRead {
				t.Errorf("Status = %v, want version %q, hash_len %d, require_read %t", st, buildinfo.Version(), tt.hashLen, tt.requireRead)
			}
		})
	}
}

// TestStatusNeedsAToken: with tokens, Status is refused without one and
// answered for every kind of grant (read-only and path-limited included:
// it names no file).
func TestStatusNeedsAToken(t *testing.T) {
	e := newAuthEnv(t, server.GRPCConfig{})
	for _, tt := range []struct {
		name  string
		token string
		code  codes.Code
	}{
		{"a caller without a token is refused", "", codes.Unauthenticated},
		{"a caller with a wrong token is refused", "wrong-token-0123456789", codes.Unauthenticated},
		{"a writer is answered", writerToken, codes.OK},
		{"a read-only token is answered", readerToken, codes.OK},
		{"a token limited to paths is answered", scopedToken, codes.OK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := e.ctx
			if tt.token != "" {
				ctx = withToken(ctx, tt.token)
			}
			st, err := e.c.Status(ctx)
			if tt.code == codes.OK {
				if err != nil || st.GetRoot() != e.root {
					t.Fatalf("Status = %v, %v; want the root %s", st, err, e.root)
				}
				return
			}
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Code != tt.code {
				t.Fatalf("Status err = %v, want %v", err, tt.code)
			}
			if st != nil {
				t.Errorf("a refused caller got %v", st)
			}
		})
	}
}
