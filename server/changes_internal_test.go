package server

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hashline/hashline/internal/engine"
	"github.com/hashline/hashline/internal/hashline"
	"github.com/hashline/hashline/internal/versions"
)

// everyField is an Edit result that sets every field of EditResponse and
// of the messages in it, with values whose encodings take more than one
// byte (long strings, large and negative numbers), and empty elements of
// every repeated field.
func everyField() *engine.EditResult {
	lines := []hashline.TaggedLine{
		{Number: 7, Hash: "3f", Content: "x := 1"},
		{Number: 1 << 20, Hash: "a0", Content: strings.Repeat("é", 100)},
		{},
	}
	return &engine.EditResult{
		Path:             "dir/file.go",
		Version:          "v2-" + strings.Repeat("0", 32),
		Diff:             strings.Repeat("-a\n+b\n", 40),
		TaggedDiff:       "+7:3f|x := 1",
		Windows:          []hashline.Window{{Start: 6, End: 300, Lines: lines}, {Start: -1}, {}},
		Replaced:         lines,
		Warnings:         []string{"a warning", ""},
		Lines:            lines,
		TotalLines:       70_000,
		DryRun:           true,
		RebasedFrom:      "v2-" + strings.Repeat("1", 32),
		Moved:            []versions.Move{{Ref: "3:ab", From: 3, To: 500}, {}},
		Repairs:          []hashline.Repair{{Kind: hashline.RepairPrefixStripped, EditIndex: 2, Line: -4, Detail: "stripped"}, {}},
		Shifts:           []hashline.Shift{{From: 10, To: 20, By: -3}, {}},
		Diagnostics:      []engine.Diagnostic{{Line: lines[1], Column: 300, Message: "expected '}', found 'EOF'", Checker: "go/parser"}, {}, {Message: "exited with status 1: bad", Checker: "ruff check", Source: engine.SourceCheck}},
		SyntaxNotChecked: "the parser ran out of time",
	}
}

// TestResponseSizesAreTheEncodedSizes checks that the sizes the engine's
// response limit is checked against, counted from the engine's results,
// are the sizes of the responses sent, and that the result it counts them
// on sets every field the responses have (a field added to a response must
// be counted too).
func TestResponseSizesAreTheEncodedSizes(t *testing.T) {
	t.Parallel()
	edits := []*engine.EditResult{{}, {Path: "a"}, everyField()}
	for i, r := range edits {
		if got, want := responseSize(r), proto.Size(editResponse(r)); got != want {
			t.Errorf("edit %d: counted %d bytes, encoded %d", i, got, want)
		}
	}
	sets := []*engine.ApplyResult{
		{},
		{DryRun: true, ChangeSet: "set", Results: []engine.ChangeResult{
			everyField(), &engine.EditResult{},
			&engine.WriteResult{Path: "w", Version: "v", TotalLines: 3, Created: true,
				Diagnostics:      []engine.Diagnostic{{Line: hashline.TaggedLine{Number: 2, Hash: "ab", Content: "{"}, Column: 1, Message: "m", Checker: "balance"}},
				SyntaxNotChecked: "n", Warnings: []string{"formatted", ""}}, &engine.WriteResult{},
			&engine.DeleteResult{Path: "d", Version: "v", Directory: true}, &engine.DeleteResult{},
			&engine.MoveResult{From: "a", To: "b", Version: "v", ReplacedVersion: "r"}, &engine.MoveResult{},
		}},
	}
	for i, r := range sets {
		if got, want := responseSize(r), proto.Size(applyResponse(r)); got != want {
			t.Errorf("set %d: counted %d bytes, encoded %d", i, got, want)
		}
	}
	everySet(t, editResponse(everyField()).ProtoReflect())
	everySet(t, applyResponse(sets[1]).ProtoReflect())
}

// everySet fails for every field of m, or of a message in it, that is not
// set in any of its occurrences.
func everySet(t *testing.T, m protoreflect.Message) {
	t.Helper()
	set := map[protoreflect.FullName]bool{}
	all := map[protoreflect.FullName]bool{}
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		fields := m.Descriptor().Fields()
		for i := range fields.Len() {
			all[fields.Get(i).FullName()] = true
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			set[fd.FullName()] = true
			switch {
			case fd.IsList() && fd.Message() != nil:
				for j := range v.List().Len() {
					walk(v.List().Get(j).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(m)
	for name := range all {
		if !set[name] {
			t.Errorf("field %s is not set by the test's results: set it, and count it in responseSize", name)
		}
	}
}
