package server_test

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
)

// TestEditResponseLimitIsExact: the new version is hashed during the write,
// yet the response limit still counts it exactly: a limit equal to the
// response's size passes and one byte less refuses the edit, unwritten.
func TestEditResponseLimitIsExact(t *testing.T) {
	edit := func(dryRun bool) *hashlinev1.EditRequest {
		return &hashlinev1.EditRequest{Path: "f.go", DryRun: dryRun,
			Edits: []*hashlinev1.FileEdit{client.Replace(tag(goFile, 4), "", "\tprintln(\"bye\")")}}
	}
	// The size of the real response: a dry run's, less its dryRun field.
	e := newEnv(t)
	e.seed("f.go", goFile)
	dry, err := e.c.Edit(e.ctx, edit(true))
	if err != nil {
		t.Fatal(err)
	}
	dry.DryRun = false
	size := proto.Size(dry)
	for _, tt := range []struct {
		limit int
		ok    bool
	}{{size, true}, {size - 1, false}} {
		e := newEnv(t, engine.WithMaxResponseBytes(tt.limit))
		e.seed("f.go", goFile)
		resp, err := e.c.Edit(e.ctx, edit(false))
		switch {
		case tt.ok && err != nil:
			t.Errorf("limit %d (the response's size): %v", tt.limit, err)
		case tt.ok && resp.GetVersion() != dry.GetVersion():
			t.Errorf("limit %d: version %s, the dry run said %s", tt.limit, resp.GetVersion(), dry.GetVersion())
		case !tt.ok && !errors.Is(err, client.ErrTooLarge):
			t.Errorf("limit %d (one byte short): err = %v, want too large", tt.limit, err)
		case !tt.ok && e.read("f.go") != goFile:
			t.Errorf("limit %d: the refused edit changed the file", tt.limit)
		}
	}
}
