package engine

import (
	"testing"
	"time"

	"github.com/hashline/hashline/internal/syntax"
	"github.com/hashline/hashline/internal/workspace"
)

// TestEachEngineKeepsASyntaxCache: an engine's syntax checks share one
// cache of whole-file parses (internal/syntax.Cache), its own, kept when
// WithSyntaxOptions sets only bounds.
func TestEachEngineKeepsASyntaxCache(t *testing.T) {
	ws, err := workspace.Open(t.TempDir(), workspace.WithFsync(false))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	a, b := New(ws), New(ws, WithSyntaxOptions(syntax.Options{Timeout: time.Second}))
	if a.opts.syntaxOptions.Cache == nil || b.opts.syntaxOptions.Cache == nil {
		t.Fatal("an engine without a syntax cache")
	}
	if a.opts.syntaxOptions.Cache == b.opts.syntaxOptions.Cache {
		t.Error("two engines share a syntax cache")
	}
	if b.opts.syntaxOptions.Timeout != time.Second {
		t.Error("WithSyntaxOptions's bounds were lost")
	}
	own := syntax.NewCache(1)
	if c := New(ws, WithSyntaxOptions(syntax.Options{Cache: own})); c.opts.syntaxOptions.Cache != own {
		t.Error("WithSyntaxOptions's own cache was replaced")
	}
}
