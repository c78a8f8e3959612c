package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// memory is s over the SDK's in-memory transport to mcp.New.
func (s *session) memory() *session {
	m := *s
	m.cs = s.memorySession()
	return &m
}

// TestMalformedEditsShowTheExpectedShape: the malformed arguments models
// send most (a misspelt or missing field, a wrong operation name, edits
// that are not an array of objects) are refused with a message that names
// what is wrong and shows the expected shape of the operation the model
// evidently meant; every bad item is named at once, and nothing is written.
func TestMalformedEditsShowTheExpectedShape(t *testing.T) {
	s := newSession(t, "embedded").memory()
	const text = "one\ntwo\nthree\n"
	s.write("a.txt", text)
	tl := tagged(t, s.ok("read_file", map[string]any{"path": "a.txt"}))
	r1, r3 := ref(tl[0]), ref(tl[2])
	const setLine = `Expected {"set_line": {"anchor": "LINE:HASH", "new_text": "..."}}`
	const replaceLines = `{"replace_lines": {"start_anchor": "LINE:HASH", "end_anchor": "LINE:HASH", "new_text": "..."}}`
	item := func(op string, fields map[string]any) map[string]any { return map[string]any{op: fields} }
	for _, tc := range []struct {
		name  string
		edits any
		want  []string
	}{
		{"a misspelt field of set_line", []any{item("set_line", map[string]any{"anchor": r1, "new_txt": "ONE"})},
			[]string{`edits[0].set_line: unknown key "new_txt" (did you mean new_text?); missing new_text.`, setLine}},
		{"replace_lines with start for start_anchor and no new_text", []any{item("replace_lines", map[string]any{"start": r1})},
			[]string{`edits[0].replace_lines: unknown key "start" (did you mean start_anchor?); missing start_anchor, end_anchor, new_text. Expected ` + replaceLines}},
		{"replace_lines without its end_anchor (a range's new lines over one line)", []any{item("replace_lines", map[string]any{"start_anchor": r1, "new_text": "x\ny\nz"})},
			[]string{`edits[0].replace_lines: missing end_anchor. Expected ` + replaceLines}},
		{"an operation name one letter off", []any{item("replace_line", map[string]any{"start_anchor": r1, "new_text": "x"})},
			[]string{`edits[0]: unknown operation "replace_line"; did you mean replace_lines? Expected ` + replaceLines}},
		{"an operation name in camel case", []any{item("setLine", map[string]any{"anchor": r1, "new_text": "x"})},
			[]string{`unknown operation "setLine"; did you mean set_line?`, setLine}},
		{"another tool's name for an operation", []any{item("str_replace", map[string]any{"old_text": "one", "new_text": "x"})},
			[]string{`unknown operation "str_replace"; did you mean replace? Expected {"replace": {"old_text": "...", "new_text": "...", "all": false}} (optional: all)`}},
		{"the fields of another operation", []any{item("set_line", map[string]any{"old_text": "one", "new_text": "x"})},
			[]string{"edits[0].set_line: set_line takes no old_text, which replace takes. Did you mean replace?", `Expected {"replace": {"old_text"`}},
		{"set_line given a range", []any{item("set_line", map[string]any{"anchor": r1, "end_anchor": r3, "new_text": "x"})},
			[]string{`end_anchor is "` + r3 + `" but anchor is "` + r1 + `", and set_line changes one line; for a range use replace_lines: ` + replaceLines}},
		// The schema refuses items and operations that are not objects; in
		// edits sent as a string it is not asked.
		{"an item that is a string", `["set_line ` + r1 + ` ONE"]`,
			[]string{"edits[0] is a string; each edit is an object holding one operation, e.g. {\"set_line\""}},
		{"an operation that is not an object", `[{"set_line": "` + r1 + `"}]`,
			[]string{"edits[0].set_line is a string, not an object; expected {\"set_line\""}},
		{"a field that is not a string", `[{"set_line": {"anchor": 1, "new_text": "x"}}]`,
			[]string{`edits[0].set_line: anchor must be a string like "LINE:HASH", not a number (1).`}},
		{"fields without their operation", []any{map[string]any{"anchor": r1, "new_text": "x"}},
			[]string{`edits[0] has the fields [anchor, new_text] but no operation around them; wrap them: {"set_line"`}},
		{"an empty item", []any{map[string]any{}}, []string{"edits[0] is empty; it must contain one of: set_line, replace_lines"}},
		{"a string that is not JSON", "set_line " + r1, []string{"edits is a string, not an array of edit objects; send [{\"set_line\""}},
		{"a string of broken JSON", `[{"set_line": {"anchor": "` + r1 + `"`, []string{"edits is a string, not an array of edit objects, and not valid JSON either"}},
		{"every bad item at once, the good one not applied", []any{
			item("set_line", map[string]any{"anchor": r1, "new_text": "ONE"}),
			item("insert_afer", map[string]any{"anchor": r1, "text": "x"}),
			item("delete", map[string]any{"start_anchor": r3, "end": r3}),
		}, []string{"edits[1]: unknown operation \"insert_afer\"; did you mean insert_after?", "\nedits[2].delete: unknown key \"end\" (did you mean end_anchor?)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.fail("edit_file", map[string]any{"path": "a.txt", "edits": tc.edits})
			for _, w := range append([]string{"Error editing a.txt: ", "Nothing was written."}, tc.want...) {
				if !strings.Contains(got, w) {
					t.Errorf("the error lacks %q:\n%s", w, got)
				}
			}
			if now := s.read("a.txt"); now != text {
				t.Errorf("the file changed to %q", now)
			}
		})
	}
}

// TestUnambiguousEditShapesAreAcceptedWithAWarning: one edit object where
// an array is expected, an array sent as a JSON string, and an end that
// names the same line as set_line's anchor are taken as meant, each with a
// warning that shows the right shape.
func TestUnambiguousEditShapesAreAcceptedWithAWarning(t *testing.T) {
	s := newSession(t, "embedded").memory()
	const text = "one\ntwo\nthree\n"
	setLine := func(fields map[string]any) map[string]any { return map[string]any{"set_line": fields} }
	asJSON := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	const (
		single = `edits was one edit object, not an array; it was taken as a batch of that one edit: send "edits": [{...}]`
		str    = `edits was sent as a string holding JSON; it was decoded, but send the array itself`
	)
	for _, tc := range []struct {
		name  string
		edits func(r2 string) any
		want  []string
	}{
		{"one edit object in place of an array", func(r2 string) any { return setLine(map[string]any{"anchor": r2, "new_text": "TWO"}) }, []string{single}},
		{"an array sent as a JSON string", func(r2 string) any { return asJSON([]any{setLine(map[string]any{"anchor": r2, "new_text": "TWO"})}) }, []string{str}},
		{"one edit object sent as a JSON string", func(r2 string) any { return asJSON(setLine(map[string]any{"anchor": r2, "new_text": "TWO"})) }, []string{str, single}},
		{"an end equal to set_line's anchor", func(r2 string) any {
			return []any{setLine(map[string]any{"anchor": r2, "end_anchor": r2, "new_text": "TWO"})}
		}, []string{`edits[0].set_line: end_anchor names the same line as anchor, so it was ignored; set_line takes {"set_line": {"anchor": "LINE:HASH", "new_text": "..."}}`}},
		{"a start and an end naming one line, without an anchor", func(r2 string) any {
			return []any{setLine(map[string]any{"start_anchor": r2, "end_anchor": " " + strings.ToUpper(r2) + " ", "new_text": "TWO"})}
		}, []string{"edits[0].set_line: end_anchor and start_anchor name one line, taken as anchor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.write("a.txt", text)
			r2 := ref(tagged(t, s.ok("read_file", map[string]any{"path": "a.txt"}))[1])
			got := s.ok("edit_file", map[string]any{"path": "a.txt", "edits": tc.edits(r2)})
			for _, w := range append([]string{"Updated a.txt", "Warnings:\n- "}, tc.want...) {
				if !strings.Contains(got, w) {
					t.Errorf("the result lacks %q:\n%s", w, got)
				}
			}
			if now := s.read("a.txt"); now != "one\nTWO\nthree\n" {
				t.Errorf("the file is %q", now)
			}
		})
	}
	t.Run("a warning is kept when the edit then fails", func(t *testing.T) {
		s.write("a.txt", text)
		s.ok("read_file", map[string]any{"path": "a.txt"})
		got := s.fail("edit_file", map[string]any{"path": "a.txt", "edits": asJSON([]any{setLine(map[string]any{"anchor": "2:00", "new_text": "TWO"})})})
		if !strings.Contains(got, "line 2 is 2:f4, not 2:00: the reference does not match the line as you read it") || !strings.Contains(got, "Also, about the arguments:\n- "+str) {
			t.Errorf("want the stale view and the warning:\n%s", got)
		}
		if now := s.read("a.txt"); now != text {
			t.Errorf("the file changed to %q", now)
		}
	})
}

// TestEditFileNoChange: a no-op over MCP shows the lines as they are and
// says where the text stands; sent again, it is called a repeat.
func TestEditFileNoChange(t *testing.T) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			s := newSession(t, b)
			const text = "a()\nb()\na()\n"
			s.write("f.go", text)
			tl := tagged(t, s.ok("read_file", map[string]any{"path": "f.go"}))
			args := map[string]any{"path": "f.go", "edits": []any{map[string]any{"set_line": map[string]any{"anchor": ref(tl[0]), "new_text": "a()"}}}}
			first := s.fail("edit_file", args)
			for _, w := range []string{"(NO_CHANGE)", "line 1 already holds the text you sent", "It also stands at line 3 (2 lines below)", "\n    " + tl[0]} {
				if !strings.Contains(first, w) {
					t.Errorf("the first refusal lacks %q:\n%s", w, first)
				}
			}
			if strings.Contains(first, "already refused") {
				t.Errorf("the first refusal calls itself a repeat:\n%s", first)
			}
			again := s.fail("edit_file", args)
			for _, w := range []string{"(NO_CHANGE)", "this exact edit was already refused (once before): the file already contains it", "Stop sending it", "\n    " + tl[0]} {
				if !strings.Contains(again, w) {
					t.Errorf("the repeat lacks %q:\n%s", w, again)
				}
			}
			if now := s.read("f.go"); now != text {
				t.Errorf("the file changed to %q", now)
			}
		})
	}
}
