package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/server"
)

func forWorkspace(ctx context.Context, names ...string) context.Context {
	for _, n := range names {
		ctx = metadata.AppendToOutgoingContext(ctx, server.WorkspaceMetadataKey, n)
	}
	return ctx
}

// A server with a workspace name serves calls that name it or none, and
// refuses, before anything is read or written, every call that names
// another: unary and streaming, with or without a valid token.
func TestWorkspaceNameGuardsAgainstMisroutedCalls(t *testing.T) {
	toks, err := server.ParseTokens([]byte(tokensYAML))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvConfig(t, server.GRPCConfig{Workspace: "alpha", Auth: server.NewAuthenticator(toks, nil), DefaultTimeout: 10 * time.Second}, nil)
	e.write("f.txt", "one\ntwo\n")
	rpc := e.c.RPC()
	ctx := withToken(e.ctx, writerToken)

	st, err := rpc.Status(ctx, &hashlinev1.StatusRequest{})
	if err != nil || st.GetWorkspace() != "alpha" {
		t.Fatalf("Status = %v, %v; want workspace alpha", st, err)
	}
	if _, err := rpc.Read(forWorkspace(ctx, "alpha"), &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatalf("Read naming the served workspace: %v", err)
	}
	if _, err := rpc.Read(ctx, &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Fatalf("Read naming no workspace: %v", err)
	}

	wrong := []struct {
		name string
		ctx  context.Context
	}{
		{"another workspace", forWorkspace(ctx, "beta")},
		{"another's token too", forWorkspace(withToken(e.ctx, "a-token-the-server-does-not-know"), "beta")},
		{"the served one and another", forWorkspace(ctx, "alpha", "beta")},
	}
	for _, w := range wrong {
		t.Run(w.name, func(t *testing.T) {
			_, err := rpc.Write(w.ctx, &hashlinev1.WriteRequest{Path: "f.txt", Content: "overwritten\n"})
			wantRefused(t, err, codes.FailedPrecondition, server.ReasonWrongWorkspace, map[string]string{"workspace": "beta", "served": "alpha"})
			if msg := err.Error(); !strings.Contains(msg, `serves workspace "alpha", not "beta"`) || !strings.Contains(msg, "nothing was read or written") {
				t.Errorf("message %q does not say what happened", msg)
			}
			wantRefused(t, grepErr(w.ctx, rpc, &hashlinev1.GrepRequest{Pattern: "one"}), codes.FailedPrecondition, server.ReasonWrongWorkspace, nil)
			if got := e.read("f.txt"); got != "one\ntwo\n" {
				t.Fatalf("f.txt = %q after a refused write", got)
			}
		})
	}
	if _, err := e.c.Read(forWorkspace(ctx, "beta"), &hashlinev1.ReadRequest{Path: "f.txt"}); !errors.Is(err, client.ErrWrongWorkspace) {
		t.Errorf("the Go client's error %v does not match ErrWrongWorkspace", err)
	}

	// Health checks carry no workspace and are never refused for one.
	hc := healthpb.NewHealthClient(e.conn)
	if r, err := hc.Check(forWorkspace(e.ctx, "beta"), &healthpb.HealthCheckRequest{}); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health check naming another workspace = %v, %v", r, err)
	}
}

// A name with path or host syntax, or an oversized one, is refused as
// malformed whether or not the server has a name; a server without one
// serves any well-formed name.
func TestWorkspaceMetadataMustBeAName(t *testing.T) {
	for _, served := range []string{"", "alpha"} {
		e := newEnvConfig(t, server.GRPCConfig{Workspace: served}, nil)
		e.write("f.txt", "x\n")
		rpc := e.c.RPC()
		for _, bad := range []string{"../alpha", "alpha.example.com", "alpha:7420", strings.Repeat("a", 64), "Alpha", ""} {
			_, err := rpc.Read(forWorkspace(e.ctx, bad), &hashlinev1.ReadRequest{Path: "f.txt"})
			wantRefused(t, err, codes.InvalidArgument, server.ReasonInvalidArgument, map[string]string{"field": server.WorkspaceMetadataKey})
		}
		st, err := rpc.Status(e.ctx, &hashlinev1.StatusRequest{})
		if err != nil || st.GetWorkspace() != served {
			t.Errorf("Status = %v, %v; want workspace %q", st, err, served)
		}
	}
	e := newEnvConfig(t, server.GRPCConfig{}, nil)
	e.write("f.txt", "x\n")
	if _, err := e.c.RPC().Read(forWorkspace(e.ctx, "any-name"), &hashlinev1.ReadRequest{Path: "f.txt"}); err != nil {
		t.Errorf("a server without a name refused a well-formed one: %v", err)
	}
}
