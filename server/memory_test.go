package server_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/engine"
)

// allocated returns the bytes the process allocated while call ran (every
// goroutine's: the server runs in this process).
func allocated(call func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	call()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// bigText is n bytes of text in lines.
func bigText(n int) string {
	line := strings.Repeat("x", 63) + "\n"
	return strings.Repeat(line, n/len(line))
}

// TestOversizeCallsAreRefusedBeforeTheirFilesAreRead checks that the size
// of a change set, and the memory a call will hold, are known from the
// files' metadata and checked before anything is read: the refused call
// allocates a small fraction of the files it names, and the disk is as it
// was.
func TestOversizeCallsAreRefusedBeforeTheirFilesAreRead(t *testing.T) {
	const fileBytes = 8 << 20
	appendTo := func(p string) *hashlinev1.Change {
		return &hashlinev1.Change{Change: &hashlinev1.Change_Edit{Edit: &hashlinev1.EditRequest{Path: p, Edits: []*hashlinev1.FileEdit{client.Append("more")}}}}
	}
	tests := []struct {
		name string
		opts []engine.Option
		call func(e *env) error
		says string
	}{
		{"a change set whose files are over the set limit", []engine.Option{engine.WithMaxSetBytes(fileBytes)},
			func(e *env) error {
				_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{appendTo("a.txt"), appendTo("b.txt")}})
				return err
			}, "limit for one set"},
		{"a change set larger than the whole memory budget", []engine.Option{engine.WithMemoryBudget(fileBytes)},
			func(e *env) error {
				_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{Changes: []*hashlinev1.Change{appendTo("a.txt"), appendTo("b.txt")}})
				return err
			}, "--memory-budget"},
		{"an Edit larger than the whole memory budget", []engine.Option{engine.WithMemoryBudget(fileBytes)},
			func(e *env) error {
				_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "a.txt", Edits: []*hashlinev1.FileEdit{client.Append("more")}})
				return err
			}, "--memory-budget"},
		{"a Read larger than the whole memory budget", []engine.Option{engine.WithMemoryBudget(fileBytes)},
			func(e *env) error {
				_, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "a.txt"})
				return err
			}, "--memory-budget"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts...)
			text := bigText(fileBytes)
			e.write("a.txt", text)
			e.write("b.txt", text)
			// The connection's buffers are allocated by its first call.
			e.seed("small.txt", "x\n")
			before := e.snapshot()
			var err error
			n := allocated(func() { err = tt.call(e) })
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Reason != "TOO_LARGE" || !strings.Contains(ce.Message, tt.says) {
				t.Fatalf("err = %v, want TOO_LARGE saying %q", err, tt.says)
			}
			if n > fileBytes/8 {
				t.Errorf("the refused call allocated %d bytes: its files (%d bytes each) were read before it was refused", n, fileBytes)
			}
			e.assertUnchanged(before)
		})
	}
}
