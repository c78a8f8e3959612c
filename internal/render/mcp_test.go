package render

import (
	"strings"
	"testing"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

func TestFenceIsLongerThanAnyFenceInTheText(t *testing.T) {
	for _, tc := range []struct{ info, text, want string }{
		{"", "1:ab|x", "```\n1:ab|x\n```"},
		{"diff", "+a", "```diff\n+a\n```"},
		{"", "1:ab|```go", "````\n1:ab|```go\n````"},
		{"", "1:ab|````\n2:cd|```", "`````\n1:ab|````\n2:cd|```\n`````"},
	} {
		if got := Fence(tc.info, tc.text); got != tc.want {
			t.Errorf("Fence(%q, %q) = %q, want %q", tc.info, tc.text, got, tc.want)
		}
	}
}

// TestMCPEdit: the reply is the header with the shifts, then the tagged
// diff alone; from a server without tagged_diff it falls back to the
// unified diff and windows, and then claims nothing about other lines.
func TestMCPEdit(t *testing.T) {
	diff := "--- a/f\n+++ b/f\n@@ -2 +2,2 @@\n-b\n+B\n+C\n"
	win := []*hashlinev1.Window{{Start: 1, End: 4, Text: "1:aa|a\n2:bb|B\n3:cc|C\n4:dd|d"}}
	for _, tc := range []struct {
		name string
		resp *hashlinev1.EditResponse
		want string
	}{
		{"a tagged diff replaces diff and windows", &hashlinev1.EditResponse{
			Path: "f", TotalLines: 4, Diff: diff, Windows: win,
			TaggedDiff: " 1:aa|a\n-b\n+2:bb|B\n+3:cc|C\n 4:dd|d",
			Shifts:     []*hashlinev1.LineShift{{From: 3, To: 3, By: 1}},
		}, "Updated f (4 lines). Lines after 2 moved down 1.\n```diff\n 1:aa|a\n-b\n+2:bb|B\n+3:cc|C\n 4:dd|d\n```"},
		{"rebase and warnings come before the diff", &hashlinev1.EditResponse{
			Path: "f", TotalLines: 1, TaggedDiff: "-a\n+1:bb|b", RebasedFrom: "v1",
			Moved: []*hashlinev1.MovedRef{{Ref: "3:aa", From: 3, To: 1}}, Warnings: []string{"w"},
		}, "Updated f (1 line). Line numbers unchanged by this edit.\nThe file had changed since you read it; your refs were rebased onto the current version:\n\t3:aa is now line 1\nWarnings:\n- w\n```diff\n-a\n+1:bb|b\n```"},
		{"an older server's response shows its diff and windows", &hashlinev1.EditResponse{
			Path: "f", TotalLines: 4, Diff: diff, Windows: win,
		}, "Updated f (4 lines).\n```diff\n" + strings.TrimSuffix(diff, "\n") + "\n```\nFresh refs around the changes:\n```\n1:aa|a\n2:bb|B\n3:cc|C\n4:dd|d\n```"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Edit(tc.resp, Options{Face: MCP}); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
