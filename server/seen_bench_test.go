package server_test

import (
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/workspace"
)

// BenchmarkEditLargeFileAfterRead: one-line edits, each inserting a line,
// of a 100,000-line file the agent read: what remembering the lines it was
// shown costs an edit (the lines its reply moved are carried to their new
// numbers, which diffs the two versions).
func BenchmarkEditLargeFileAfterRead(b *testing.B) {
	e := newEnvWS(b, []workspace.Option{workspace.WithFsync(false), workspace.WithMaxFileBytes(64 << 20)}, engine.WithReadLimit(200_000), engine.WithReadByteBudget(64<<20))
	content := joinLines(numbered(100_000))
	e.write("big.txt", content)
	if _, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "big.txt", Limit: 100_000}); err != nil {
		b.Fatal(err)
	}
	ref := tag(content, 50_000)
	for i := 0; b.Loop(); i++ {
		resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "big.txt", Context: new(int32),
			Edits: []*hashlinev1.FileEdit{client.InsertAfter(ref, strings.Repeat("x", i%7+1))}})
		if err != nil {
			b.Fatal(err)
		}
		ref = client.Ref(resp.GetWindows()[0].GetLines()[0])
	}
}
