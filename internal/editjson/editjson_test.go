package editjson

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// vocab is a small vocabulary with every feature: a one-line operation with
// a range operation, aliases, near names and a bool field.
var vocab = &Vocabulary{Ops: []Op{
	{Name: "set_line", Line: "anchor", Range: "replace_lines", Near: []string{"edit_line"}, Fields: []Field{
		{Name: "anchor", Required: true, Example: `"LINE:HASH"`, Near: []string{"line"}},
		{Name: "new_text", Required: true, Example: `"..."`, Near: []string{"content"}},
	}},
	{Name: "replace_lines", Fields: []Field{
		{Name: "start_anchor", Required: true, Example: `"LINE:HASH"`},
		{Name: "end_anchor", Example: `"LINE:HASH"`},
		{Name: "new_text", Required: true, Example: `"..."`},
	}},
	{Name: "insertAfter", Aliases: []string{"insert_after"}, Line: "anchor", Fields: []Field{
		{Name: "anchor", Required: true, Example: `"LINE:HASH"`},
		{Name: "text", Required: true, Example: `"..."`},
	}},
	{Name: "replaceText", Aliases: []string{"replace_text"}, Near: []string{"str_replace"}, Fields: []Field{
		{Name: "oldText", Aliases: []string{"old_text"}, Required: true, Example: `"..."`},
		{Name: "newText", Aliases: []string{"new_text"}, Required: true, Example: `"..."`},
		{Name: "all", Kind: Bool, Example: "false"},
	}},
}}

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		items    []Item
		warnings []string // substrings, one per warning
		problems []string // substrings, one per problem
	}{
		{name: "an array of good items", in: `[{"set_line": {"anchor": "1:ab", "new_text": "x"}}, {"replace_text": {"old_text": "a", "newText": "b", "all": true}}]`,
			items: []Item{{Op: "set_line", Values: map[string]any{"anchor": "1:ab", "new_text": "x"}}, {Op: "replaceText", Values: map[string]any{"oldText": "a", "newText": "b", "all": true}}}},
		{name: "an empty array is no items and no error", in: `[]`},
		{name: "an optional field sent as null is absent", in: `[{"replace_lines": {"start_anchor": "1:ab", "end_anchor": null, "new_text": "x"}}]`,
			items: []Item{{Op: "replace_lines", Values: map[string]any{"start_anchor": "1:ab", "new_text": "x"}}}},
		{name: "one object is a batch of one, with a warning", in: `{"insertAfter": {"anchor": "1:ab", "text": "x"}}`,
			items: []Item{{Op: "insertAfter", Values: map[string]any{"anchor": "1:ab", "text": "x"}}}, warnings: []string{"edits was one edit object"}},
		{name: "a string holding an array is decoded, with a warning", in: `"[{\"insertAfter\": {\"anchor\": \"1:ab\", \"text\": \"x\"}}]"`,
			items: []Item{{Op: "insertAfter", Values: map[string]any{"anchor": "1:ab", "text": "x"}}}, warnings: []string{"a string holding JSON"}},
		{name: "an end naming the anchor's line is ignored, with a warning", in: `[{"set_line": {"anchor": "2:ab", "end_anchor": " 2:AB|two", "new_text": "x"}}]`,
			items: []Item{{Op: "set_line", Values: map[string]any{"anchor": "2:ab", "new_text": "x"}}}, warnings: []string{"end_anchor names the same line as anchor, so it was ignored"}},
		{name: "a start and an end naming one line are the anchor, with a warning", in: `[{"set_line": {"start": "2:ab", "end": "2:ab", "new_text": "x"}}]`,
			items: []Item{{Op: "set_line", Values: map[string]any{"anchor": "2:ab", "new_text": "x"}}}, warnings: []string{"end and start name one line, taken as anchor"}},
		{name: "an end naming another line asks for the range operation", in: `[{"set_line": {"anchor": "2:ab", "end": "4:cd", "new_text": "x"}}]`,
			problems: []string{`edits[0].set_line: end is "4:cd" but anchor is "2:ab", and set_line changes one line; for a range use replace_lines: {"replace_lines"`}},
		{name: "a start alone in set_line is replace_lines' field", in: `[{"set_line": {"start_anchor": "2:ab", "new_text": "x"}}]`,
			problems: []string{`set_line takes no start_anchor, which replace_lines takes. Did you mean replace_lines? Expected {"replace_lines"`}},
		{name: "a start alone is a misspelt anchor", in: `[{"insertAfter": {"start": "2:ab", "text": "x"}}]`,
			problems: []string{`unknown key "start"; missing anchor.`}},
		{name: "a near name of a field is suggested", in: `[{"set_line": {"line": "2:ab", "content": "x"}}]`,
			problems: []string{`unknown key "content" (did you mean new_text?); unknown key "line" (did you mean anchor?); missing anchor, new_text.`}},
		{name: "a near name of an operation is suggested", in: `[{"str_replace": {"old_text": "a", "new_text": "b"}}]`,
			problems: []string{`unknown operation "str_replace"; did you mean replaceText? Expected {"replaceText": {"oldText": "...", "newText": "...", "all": false}} (optional: all)`}},
		{name: "a name contained in two operations suggests the closer", in: `[{"replace": {"x": 1}}]`,
			problems: []string{`unknown operation "replace"; did you mean replaceText?`}},
		{name: "a name like none is listed against all", in: `[{"frobnicate": {}}]`,
			problems: []string{"edits[0] must contain one of: set_line, replace_lines, insertAfter, replaceText; got keys [frobnicate]"}},
		{name: "fields without an operation fitting two name both", in: `[{"anchor": "1:ab"}]`,
			problems: []string{`edits[0] has the fields [anchor] but no operation around them; wrap them: {"set_line": {"anchor": "LINE:HASH", "new_text": "..."}} or {"insertAfter"`}},
		{name: "a bool of the wrong type", in: `[{"replaceText": {"oldText": "a", "newText": "b", "all": "yes"}}]`,
			problems: []string{"all must be true or false, not a string"}},
		{name: "two operations in one item", in: `[{"replaceText": {}, "set_line": {}}]`,
			problems: []string{"edits[0] has 2 operations (set_line, replaceText); put each in its own item"}},
		{name: "a field beside its operation", in: `[{"set_line": {"anchor": "1:ab"}, "new_text": "x"}]`,
			problems: []string{"edits[0] has set_line and unknown keys [new_text]; an item holds exactly one of: set_line, replace_lines, insertAfter, replaceText, and nothing else. An operation's fields go inside its object"}},
		{name: "a misspelt operation beside a good one", in: `[{"set_line": {"anchor": "1:ab", "new_text": "x"}, "insert_afer": {}}]`,
			problems: []string{"edits[0] has set_line and unknown keys [insert_afer]; an item holds exactly one of: set_line, replace_lines, insertAfter, replaceText, and nothing else. Did you mean insertAfter? Put each operation in its own item."}},
		{name: "every bad item is named", in: `[{"set_line": {"anchor": "1:ab", "new_text": "x"}}, 7, null, ["a"]]`,
			problems: []string{"edits[1] is a number (7)", "edits[2] is null", "edits[3] is an array"}},
		{name: "a number", in: `5`, problems: []string{"edits is a number (5), not an array of edit objects; send [{\"set_line\""}},
		{name: "null", in: `null`, problems: []string{"edits is null"}},
		{name: "a string of plain words", in: `"set_line 1:ab x"`, problems: []string{"edits is a string, not an array"}},
		{name: "a string of broken JSON", in: `"[{\"set_line\": "`, problems: []string{"not valid JSON either"}},
		{name: "a string holding a string", in: `"\"[]\""`, problems: []string{"edits is a string, not an array"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, warnings, err := vocab.Decode(decodeJSON(t, tc.in))
			if len(tc.problems) > 0 {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("want an *Error, got %v (items %v)", err, items)
				}
				if len(e.Problems) != len(tc.problems) {
					t.Errorf("%d problems, want %d:\n%v", len(e.Problems), len(tc.problems), err)
				}
				for i, p := range tc.problems {
					if i < len(e.Problems) && !strings.Contains(e.Problems[i], p) {
						t.Errorf("problem %d lacks %q:\n%s", i, p, e.Problems[i])
					}
				}
				if items != nil || warnings != nil {
					t.Errorf("a refused batch returned items %v and warnings %v", items, warnings)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(items, tc.items, func(a, b Item) bool { return a.Op == b.Op && maps.Equal(a.Values, b.Values) }) {
				t.Errorf("items %v, want %v", items, tc.items)
			}
			if len(warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d lacks %q: %s", i, w, warnings[i])
				}
			}
		})
	}
}

func TestLikeness(t *testing.T) {
	for _, tc := range []struct {
		key, name string
		alike     bool
	}{
		{"setLine", "set_line", true},
		{"SET-LINE", "set_line", true},
		{"replace_line", "replace_lines", true},
		{"insert", "insert_after", true},
		{"apend", "append", true},
		{"delet", "delete", true},
		{"to", "do", false}, // too short for two edits to mean anything
		{"frobnicate", "replace", false},
		{"end", "anchor", false},
	} {
		if got := likeness(tc.key, tc.name) > 0; got != tc.alike {
			t.Errorf("likeness(%q, %q) > 0 = %v, want %v", tc.key, tc.name, got, tc.alike)
		}
	}
	if likeness("replace_line", "replace_lines") <= likeness("replace_line", "replace") {
		t.Error("replace_line should be more like replace_lines than replace")
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"insertafer", "insertafter", 1}, {"abc", "abc", 0}} {
		if got := Distance(tc.a, tc.b); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
