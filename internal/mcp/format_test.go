package mcp

import "testing"

func TestFenceIsLongerThanAnyFenceInTheText(t *testing.T) {
	for _, tc := range []struct{ info, text, want string }{
		{"", "1:ab|x", "```\n1:ab|x\n```"},
		{"diff", "+a", "```diff\n+a\n```"},
		{"", "1:ab|```go", "````\n1:ab|```go\n````"},
		{"", "1:ab|````\n2:cd|```", "`````\n1:ab|````\n2:cd|```\n`````"},
	} {
		if got := fence(tc.info, tc.text); got != tc.want {
			t.Errorf("fence(%q, %q) = %q, want %q", tc.info, tc.text, got, tc.want)
		}
	}
}
