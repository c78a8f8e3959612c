package main

import (
	"strings"
	"testing"
)

// A change set JSON that parseApplyJSON refuses is refused with the fix:
// a change's unknown field names the fields its kind has, an unknown mode
// the modes there are, and a kind spelled with capitals the kind meant.
func TestApplyJSONRefusalsShowTheFix(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"a move with other tools' field names", `[{"move": {"source": "a.go", "destination": "b.go"}}]`,
			[]string{`unknown field "destination"`, "a move has from, to, expectedVersion, overwrite"}},
		{"a write's content named text", `[{"write": {"path": "a.go", "text": "x"}}]`,
			[]string{`unknown field "text"`, "a write has path, content, mode, expectedVersion"}},
		{"a recursive delete", `[{"delete": {"path": "d", "recursive": true}}]`,
			[]string{`unknown field "recursive"`, "a delete has path, expectedVersion"}},
		{"a write mode in lower case", `[{"write": {"path": "a.go", "content": "x", "mode": "create"}}]`,
			[]string{"mode", `"WRITE_MODE_CREATE"`, `"WRITE_MODE_REPLACE"`}},
		{"an edit with an unknown field", `[{"edit": {"path": "a.go", "edits": [], "file": "b.go"}}]`,
			[]string{`unknown field "file"`, "an edit has path, edits, baseVersion"}},
		{"a kind in capitals", `[{"Edit": {"path": "a.go", "edits": []}}]`,
			[]string{`did you mean "edit"?`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _, msg := parseApplyJSON(tc.in)
			if req != nil || msg == "" {
				t.Fatalf("accepted: %v", req)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the refusal lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}
