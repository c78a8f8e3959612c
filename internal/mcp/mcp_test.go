package mcp_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/internal/mcp"
)

func TestToolsFollowThePublishedShapes(t *testing.T) {
	s := newSession(t, "embedded")
	want := map[string][]string{
		"read_file":      {"path", "offset", "limit", "plain"},
		"edit_file":      {"path", "edits", "strict", "files", "dry_run", "strict_syntax"},
		"write_file":     {"path", "content", "strict_syntax"},
		"grep":           {"pattern", "path", "glob", "type", "i", "pre", "post", "limit"},
		"list_directory": {"path", "recursive", "glob", "hidden", "page_token"},
		"delete_file":    {"path"},
		"move_file":      {"from", "to", "overwrite"},
		"undo":           {"change_id"},
	}
	var items map[string]any
	for tool, err := range s.cs.Tools(s.ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		props, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		delete(want, tool.Name)
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		var schema struct {
			Properties map[string]map[string]any `json:"properties"`
			Required   []string                  `json:"required"`
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range props {
			if _, ok := schema.Properties[p]; !ok {
				t.Errorf("%s: no %q argument in %s", tool.Name, p, b)
			}
		}
		if len(schema.Properties) != len(props) {
			t.Errorf("%s: arguments %v, want exactly %v", tool.Name, keys(schema.Properties), props)
		}
		if tool.Name == "edit_file" {
			items, _ = schema.Properties["edits"]["items"].(map[string]any)
		}
	}
	if len(want) > 0 {
		t.Errorf("tools missing: %v", keys(want))
	}
	variants, _ := items["properties"].(map[string]any)
	if got, wantV := keys(variants), []string{"append", "delete", "insert_after", "insert_before", "prepend", "replace", "replace_lines", "set_line"}; !slices.Equal(got, wantV) {
		t.Errorf("edit variants %v, want %v", got, wantV)
	}
}

func keys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

const mainGo = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

func TestReadFile(t *testing.T) {
	ten := ""
	for i := 1; i <= 10; i++ {
		ten += fmt.Sprintf("line %d\n", i)
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("main.go", mainGo)
			s.write("ten.txt", ten)
			s.write("empty.txt", "")
			s.write("dir/x.txt", "x\n")

			t.Run("tags every line like the published format", func(t *testing.T) {
				got := s.ok("read_file", map[string]any{"path": "main.go"})
				want := "File: main.go (5 lines)\n\n```\n1:c9|package main\n2:05|\n3:76|func main() {\n4:16|\tprintln(\"hi\")\n5:18|}\n```"
				if got != want {
					t.Errorf("got\n%q\nwant\n%q", got, want)
				}
			})
			t.Run("pages with offset and limit and says where to continue", func(t *testing.T) {
				got := s.ok("read_file", map[string]any{"path": "ten.txt", "offset": 3, "limit": 2})
				header, _, _ := strings.Cut(got, "\n")
				if want := "File: ten.txt (10 lines) [showing lines 3-4] (6 more lines below; continue with offset=5)"; header != want {
					t.Errorf("header %q, want %q", header, want)
				}
				if ls := tagged(t, got); len(ls) != 2 || !strings.HasPrefix(ls[0], "3:") || !strings.HasSuffix(ls[1], "|line 4") {
					t.Errorf("lines %q", ls)
				}
			})
			t.Run("plain drops the hashes", func(t *testing.T) {
				got := s.ok("read_file", map[string]any{"path": "ten.txt", "offset": 9, "plain": true})
				if ls := tagged(t, got); !slices.Equal(ls, []string{"9|line 9", "10|line 10"}) {
					t.Errorf("lines %q", ls)
				}
			})
			t.Run("an empty file says how to add content", func(t *testing.T) {
				got := s.ok("read_file", map[string]any{"path": "empty.txt"})
				if !strings.HasPrefix(got, "File: empty.txt (0 lines") || !strings.Contains(got, "append") {
					t.Errorf("got %q", got)
				}
			})
			t.Run("an absolute path inside the root works", func(t *testing.T) {
				got := s.ok("read_file", map[string]any{"path": filepath.Join(s.root, "dir", "x.txt")})
				if ls := tagged(t, got); len(ls) != 1 || !strings.HasSuffix(ls[0], "|x") {
					t.Errorf("got %q", got)
				}
			})
			for _, tc := range []struct {
				name, path string
				want       []string
			}{
				{"a missing file is a tool error naming the reason", "nope.go", []string{"Error reading nope.go (NOT_FOUND):", "(NOT_FOUND)"}},
				{"a path outside the root is refused", "../etc/passwd", []string{"(OUTSIDE_ROOT)"}},
				{"a directory is refused", "dir", []string{"(NOT_REGULAR_FILE)"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					got := s.fail("read_file", map[string]any{"path": tc.path})
					for _, w := range tc.want {
						if !strings.Contains(got, w) {
							t.Errorf("error %q does not contain %q", got, w)
						}
					}
				})
			}
			t.Run("an offset past the end is a tool error", func(t *testing.T) {
				got := s.fail("read_file", map[string]any{"path": "ten.txt", "offset": 50})
				if !strings.Contains(got, "LINE_OUT_OF_RANGE") {
					t.Errorf("got %q", got)
				}
			})
		})
	}
}

// refs reads path through the bridge and returns each line's LINE:HASH,
// refs[1] being line 1.
func (s *session) refs(path string) []string {
	s.t.Helper()
	out := []string{""}
	for _, l := range tagged(s.t, s.ok("read_file", map[string]any{"path": path})) {
		out = append(out, ref(l))
	}
	return out
}

func TestEditFileVariants(t *testing.T) {
	const start = "a\nb\nc\nd\n"
	type edits = []map[string]any
	cases := []struct {
		name  string
		edits func(r []string) edits
		want  string
		moved string // how the reply says the other lines moved
	}{
		{"set_line replaces one line", func(r []string) edits {
			return edits{{"set_line": map[string]any{"anchor": r[2], "new_text": "B"}}}
		}, "a\nB\nc\nd\n", "Line numbers unchanged."},
		{"set_line with empty text deletes the line", func(r []string) edits {
			return edits{{"set_line": map[string]any{"anchor": r[2], "new_text": ""}}}
		}, "a\nc\nd\n", "Lines after 2 moved up 1."},
		{"replace_lines replaces a range", func(r []string) edits {
			return edits{{"replace_lines": map[string]any{"start_anchor": r[2], "end_anchor": r[3], "new_text": "X\nY\nZ"}}}
		}, "a\nX\nY\nZ\nd\n", "Lines after 3 moved down 1."},
		{"insert_after inserts below the anchor", func(r []string) edits {
			return edits{{"insert_after": map[string]any{"anchor": r[1], "text": "a2\na3"}}}
		}, "a\na2\na3\nb\nc\nd\n", "Lines after 1 moved down 2."},
		{"insert_before inserts above the anchor", func(r []string) edits {
			return edits{{"insert_before": map[string]any{"anchor": r[1], "text": "z"}}}
		}, "z\na\nb\nc\nd\n", "All lines moved down 1."},
		{"delete removes a range", func(r []string) edits {
			return edits{{"delete": map[string]any{"start_anchor": r[2], "end_anchor": r[3]}}}
		}, "a\nd\n", "Lines after 3 moved up 2."},
		{"delete without end_anchor removes one line", func(r []string) edits {
			return edits{{"delete": map[string]any{"start_anchor": r[4]}}}
		}, "a\nb\nc\n", "Line numbers unchanged."},
		{"append adds at the end", func([]string) edits {
			return edits{{"append": map[string]any{"text": "e"}}}
		}, "a\nb\nc\nd\ne\n", "Line numbers unchanged."},
		{"prepend adds at the start", func([]string) edits {
			return edits{{"prepend": map[string]any{"text": "0"}}}
		}, "0\na\nb\nc\nd\n", "All lines moved down 1."},
		{"replace swaps exact text without refs", func([]string) edits {
			return edits{{"replace": map[string]any{"old_text": "b\nc", "new_text": "bc"}}}
		}, "a\nbc\nd\n", "Lines after 3 moved up 1."},
		{"a batch refers to the file as read and is applied at once", func(r []string) edits {
			return edits{
				{"set_line": map[string]any{"anchor": r[1], "new_text": "A"}},
				{"insert_after": map[string]any{"anchor": r[4], "text": "e"}},
				{"delete": map[string]any{"start_anchor": r[2]}},
			}
		}, "A\nc\nd\ne\n", "Lines 3-4 moved up 1."},
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			for i, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					path := fmt.Sprintf("f%d.txt", i)
					s.write(path, start)
					got := s.ok("edit_file", map[string]any{"path": path, "edits": tc.edits(s.refs(path))})
					if disk := s.read(path); disk != tc.want {
						t.Fatalf("file = %q, want %q", disk, tc.want)
					}
					header, body, _ := strings.Cut(got, "\n")
					if want := fmt.Sprintf("Updated %s (%d lines). %s", path, strings.Count(tc.want, "\n"), tc.moved); header != want {
						t.Errorf("header %q, want %q", header, want)
					}
					// One tagged diff: every unchanged and added line shown
					// is the file's line now, with its ref.
					if !strings.HasPrefix(body, "```diff\n") || !strings.HasSuffix(body, "\n```") {
						t.Fatalf("no diff block in:\n%s", got)
					}
					current := tagged(t, s.ok("read_file", map[string]any{"path": path}))
					added := 0
					for _, l := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(body, "```diff\n"), "\n```"), "\n") {
						switch {
						case l == "..." || strings.HasPrefix(l, "-"):
						case strings.HasPrefix(l, " ") || strings.HasPrefix(l, "+"):
							if !slices.Contains(current, l[1:]) {
								t.Errorf("diff line %q is not in the file as read now: %q", l, current)
							}
							if l[0] == '+' {
								added++
							}
						default:
							t.Errorf("diff line %q has no prefix", l)
						}
					}
					if added == 0 && strings.Count(tc.want, "\n") >= strings.Count(start, "\n") {
						t.Errorf("no added line in:\n%s", got)
					}
				})
			}
		})
	}
}

func TestEditFileStaleRefShowsFreshTags(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("f.go", "one\ntwo\nthree\nfour\nfive\n")
			old := s.refs("f.go")
			// Another writer changes line 3 behind the agent's back.
			s.write("f.go", "one\ntwo\nTHREE!\nfour\nfive\n")
			got := s.fail("edit_file", map[string]any{"path": "f.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": old[3], "new_text": "3"}},
			}})
			fresh := s.refs("f.go")
			want := "1 line(s) changed since last read; use the updated refs below (>>> marks changed lines)\n" +
				"    " + fresh[1] + "|one\n    " + fresh[2] + "|two\n>>> " + fresh[3] + "|THREE!\n    " + fresh[4] + "|four\n    " + fresh[5] + "|five"
			if got != want {
				t.Errorf("stale error\n%q\nwant\n%q", got, want)
			}
			if disk := s.read("f.go"); disk != "one\ntwo\nTHREE!\nfour\nfive\n" {
				t.Fatalf("a stale edit wrote the file: %q", disk)
			}
			// The ref from the error works.
			line := strings.Split(got, "\n")[3]
			s.ok("edit_file", map[string]any{"path": "f.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": strings.TrimPrefix(line, ">>> "), "new_text": "3"}},
			}})
			if disk := s.read("f.go"); disk != "one\ntwo\n3\nfour\nfive\n" {
				t.Fatalf("file = %q", disk)
			}
		})
	}
}

func TestEditFileErrorsWriteNothing(t *testing.T) {
	const start = "a\nb\n"
	cases := []struct {
		name  string
		edits any
		want  []string
	}{
		{"no edits", []any{}, []string{"edits is empty"}},
		{"fields outside their operation", []any{map[string]any{"old_text": "a", "new_text": "b"}},
			[]string{"edits[0] has the fields [new_text, old_text] but no operation around them", `wrap them: {"replace": {"old_text"`}},
		{"an unknown operation", []any{map[string]any{"substitute": map[string]any{}}},
			[]string{"edits[0] must contain one of", "got keys [substitute]"}},
		{"two operations in one item", []any{map[string]any{
			"set_line": map[string]any{"anchor": "1:xx", "new_text": "x"},
			"append":   map[string]any{"text": "y"}}},
			[]string{"edits[0] has 2 operations (set_line, append)"}},
		{"a malformed ref", []any{map[string]any{"set_line": map[string]any{"anchor": "first", "new_text": "x"}}},
			[]string{"(INVALID_REF)"}},
		{"a line past the end", []any{map[string]any{"set_line": map[string]any{"anchor": "9:00", "new_text": "x"}}},
			[]string{"(LINE_OUT_OF_RANGE)"}},
		{"a required field missing", []any{map[string]any{"set_line": map[string]any{"anchor": "1:00"}}},
			[]string{"new_text"}},
		{"overlapping edits", nil, []string{"(OVERLAPPING_EDITS)"}},
		{"no change", nil, []string{"(NO_CHANGE)"}},
		{"text not found", []any{map[string]any{"replace": map[string]any{"old_text": "zzz", "new_text": "y"}}},
			[]string{"(TEXT_NOT_FOUND)"}},
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					s.write("f.txt", start)
					r := s.refs("f.txt")
					edits := tc.edits
					switch tc.name {
					case "overlapping edits":
						edits = []any{
							map[string]any{"set_line": map[string]any{"anchor": r[1], "new_text": "x"}},
							map[string]any{"delete": map[string]any{"start_anchor": r[1], "end_anchor": r[2]}},
						}
					case "no change":
						edits = []any{map[string]any{"set_line": map[string]any{"anchor": r[2], "new_text": "b"}}}
					}
					got := s.fail("edit_file", map[string]any{"path": "f.txt", "edits": edits})
					for _, w := range tc.want {
						if !strings.Contains(got, w) {
							t.Errorf("error %q does not contain %q", got, w)
						}
					}
					if disk := s.read("f.txt"); disk != start {
						t.Errorf("file changed to %q", disk)
					}
				})
			}
			t.Run("a missing file says to create it with write_file", func(t *testing.T) {
				got := s.fail("edit_file", map[string]any{"path": "new.txt", "edits": []any{map[string]any{"append": map[string]any{"text": "x"}}}})
				if !strings.Contains(got, "(NOT_FOUND)") || !strings.Contains(got, "Write") {
					t.Errorf("got %q", got)
				}
			})
		})
	}
}

func TestWriteFile(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			if got := s.ok("write_file", map[string]any{"path": "dir/new.txt", "content": "x\ny\n"}); got != "Created dir/new.txt (2 lines)" {
				t.Errorf("create: %q", got)
			}
			if got := s.ok("write_file", map[string]any{"path": "dir/new.txt", "content": "z"}); got != "Overwrote dir/new.txt (1 line)" {
				t.Errorf("overwrite: %q", got)
			}
			if disk := s.read("dir/new.txt"); disk != "z" {
				t.Errorf("file = %q", disk)
			}
			if got := s.fail("write_file", map[string]any{"path": "../out.txt", "content": "x"}); !strings.Contains(got, "(OUTSIDE_ROOT)") {
				t.Errorf("outside root: %q", got)
			}
		})
	}
}

func TestGrep(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("a.go", "package a\n\nfunc Alpha() {}\n")
			s.write("b.go", "package b\n// see Alpha\nvar x = 1\n")
			s.write("notes.txt", "Alpha notes\n")
			r := map[string][]string{"a.go": s.refs("a.go"), "b.go": s.refs("b.go"), "notes.txt": s.refs("notes.txt")}

			got := s.ok("grep", map[string]any{"pattern": "Alpha"})
			want := "```\na.go:>>" + r["a.go"][3] + "|func Alpha() {}\nb.go:>>" + r["b.go"][2] + "|// see Alpha\nnotes.txt:>>" + r["notes.txt"][1] + "|Alpha notes\n```"
			if got != want {
				t.Errorf("grep\n%q\nwant\n%q", got, want)
			}
			got = s.ok("grep", map[string]any{"pattern": "alpha", "i": true, "glob": "*.go", "pre": 1, "post": 1})
			want = "```\na.go:  " + r["a.go"][2] + "|\na.go:>>" + r["a.go"][3] + "|func Alpha() {}\n--\nb.go:  " + r["b.go"][1] + "|package b\nb.go:>>" + r["b.go"][2] + "|// see Alpha\nb.go:  " + r["b.go"][3] + "|var x = 1\n```"
			if got != want {
				t.Errorf("grep with context\n%q\nwant\n%q", got, want)
			}
			got = s.ok("grep", map[string]any{"pattern": "Alpha", "type": "go"})
			if !strings.Contains(got, "a.go:>>") || !strings.Contains(got, "b.go:>>") || strings.Contains(got, "notes.txt") {
				t.Errorf("type go: %q", got)
			}
			if got := s.fail("grep", map[string]any{"pattern": "Alpha", "type": "no-such-type"}); !strings.Contains(got, "no-such-type") {
				t.Errorf("unknown type: %q", got)
			}
			if got := s.ok("grep", map[string]any{"pattern": "Omega"}); got != "No matches found." {
				t.Errorf("no match: %q", got)
			}
			got = s.ok("grep", map[string]any{"pattern": "package", "limit": 1})
			if !strings.Contains(got, "a.go:>>") || strings.Contains(got, "b.go") || !strings.Contains(got, "Stopped at 1 matching lines") {
				t.Errorf("limit 1: %q", got)
			}
			if got := s.fail("grep", map[string]any{"pattern": "("}); !strings.Contains(got, "Error searching the workspace") {
				t.Errorf("bad pattern: %q", got)
			}
		})
	}
}

func TestAgentName(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []mcp.Option
		want string
	}{
		{"defaults to the MCP client's name and a tag of the session", nil, "agent=mcp/test-client/"},
		{"can be set", []mcp.Option{mcp.WithAgent("alice")}, "agent=alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, "server", tc.opts...)
			s.write("f.txt", "x\n")
			s.ok("read_file", map[string]any{"path": "f.txt"})
			if logs := s.logs.String(); !strings.Contains(logs, tc.want) {
				t.Errorf("server log has no %q:\n%s", tc.want, logs)
			}
		})
	}
}

// TestMalformedArgumentsAreExplained: arguments the input schema refuses
// come back as a tool error that names the argument and what is wrong with
// it, so a model can correct the call; nothing is read or written.
func TestMalformedArgumentsAreExplained(t *testing.T) {
	s := newSession(t, "embedded")
	s.write("a", "one\n")
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       []string
	}{
		{"a required argument missing", "read_file", map[string]any{}, []string{`missing properties: ["path"]`}},
		{"a string given as a number", "read_file", map[string]any{"path": 5}, []string{"/properties/path", `want "string"`}},
		{"null for a string", "read_file", map[string]any{"path": nil}, []string{"/properties/path", `"null"`}},
		{"an unknown argument", "read_file", map[string]any{"path": "a", "bogus": 1}, []string{`additional properties ["bogus"]`}},
		{"a fraction for an integer", "read_file", map[string]any{"path": "a", "limit": 2.5}, []string{"/properties/limit", `want "integer"`}},
		{"edits neither a list, an object nor a string", "edit_file", map[string]any{"path": "a", "edits": 5}, []string{"/properties/edits", "array"}},
		{"a field of the wrong type inside an operation", "edit_file", map[string]any{"path": "a", "edits": []any{
			map[string]any{"set_line": map[string]any{"anchor": 5, "new_text": "x"}}}}, []string{"set_line/properties/anchor", `want "string"`}},
		{"content missing", "write_file", map[string]any{"path": "a"}, []string{`missing properties: ["content"]`}},
		{"pattern missing", "grep", map[string]any{"path": "."}, []string{`missing properties: ["pattern"]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.fail(tc.tool, tc.args)
			for _, w := range append([]string{`validating "arguments"`}, tc.want...) {
				if !strings.Contains(got, w) {
					t.Errorf("%s %v: the error lacks %q:\n%s", tc.tool, tc.args, w, got)
				}
			}
			if now := s.read("a"); now != "one\n" {
				t.Errorf("the file changed to %q", now)
			}
		})
	}
}

// TestNumbersBeyondInt32 checks that offsets and limits too large for the
// service's 32-bit fields keep their meaning instead of wrapping around
// (wrapped, 2^32+1 would be a limit of 1 and an offset of 2^32+2 would read
// line 2).
func TestNumbersBeyondInt32(t *testing.T) {
	s := newSession(t, "embedded")
	s.write("f.txt", "a\nb\nc\n")
	if got := s.ok("read_file", map[string]any{"path": "f.txt", "limit": 1<<32 + 1}); len(tagged(t, got)) != 3 {
		t.Errorf("limit 2^32+1 should show the whole 3-line file:\n%s", got)
	}
	if got := s.fail("read_file", map[string]any{"path": "f.txt", "offset": 1<<32 + 2}); !strings.Contains(got, "LINE_OUT_OF_RANGE") {
		t.Errorf("offset 2^32+2 is past the end of a 3-line file, got:\n%s", got)
	}
	if got := s.ok("grep", map[string]any{"pattern": "[a-c]", "limit": 1<<32 + 1}); strings.Contains(got, "Stopped") || strings.Count(got, ":>>") != 3 {
		t.Errorf("grep limit 2^32+1 should show all 3 matches:\n%s", got)
	}
	for _, args := range []map[string]any{
		{"path": "f.txt", "offset": -1<<32 + 1},
		{"path": "f.txt", "limit": -1<<32 + 1},
	} {
		if got := s.fail("read_file", args); !strings.Contains(got, "negative") {
			t.Errorf("read_file %v: want a negative-number error, got:\n%s", args, got)
		}
	}
	if got := s.fail("grep", map[string]any{"pattern": "a", "limit": -1<<32 + 1}); !strings.Contains(got, "negative") {
		t.Errorf("grep limit -2^32+1: want a negative-number error, got:\n%s", got)
	}
}

// TestServeMatchesNew makes the same calls through mcp.Serve (what hashline
// mcp runs, over a stream pair) and through mcp.New on the SDK's in-memory
// transport, and wants the same results, long and short, successes and
// tool errors.
func TestServeMatchesNew(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			mem := s.memorySession()
			var big strings.Builder
			for i := range 3000 {
				fmt.Fprintf(&big, "\tx%d := \"<a href=\\\"%d\\\">&amp;</a>\" // héllo 世界 🙂 \u2028\n", i, i)
			}
			s.write("big.go", big.String())
			s.write("small.go", mainGo)
			s.write("w.txt", "old\n")
			stale := []map[string]any{}
			for i := 1; i <= 40; i++ {
				stale = append(stale, map[string]any{"set_line": map[string]any{"anchor": fmt.Sprintf("%d:zz", i*50), "new_text": "x"}})
			}
			for _, tc := range []struct {
				name, tool string
				args       map[string]any
				isError    bool
			}{
				{"a long page", "read_file", map[string]any{"path": "big.go"}, false},
				{"a long plain page", "read_file", map[string]any{"path": "big.go", "plain": true, "offset": 100}, false},
				{"a short read", "read_file", map[string]any{"path": "small.go"}, false},
				{"many grep matches", "grep", map[string]any{"pattern": "href", "limit": 500, "post": 1}, false},
				{"a long stale-reference view", "edit_file", map[string]any{"path": "big.go", "edits": stale}, true},
				{"a short tool error", "read_file", map[string]any{"path": "nope.go"}, true},
				{"an argument error", "read_file", map[string]any{"path": 5}, true},
				{"a write", "write_file", map[string]any{"path": "w.txt", "content": "new\n"}, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					viaServe, isErr := s.call(tc.tool, tc.args)
					res, err := mem.CallTool(s.ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
					if err != nil {
						t.Fatal(err)
					}
					viaNew := res.Content[0].(*sdk.TextContent).Text
					if isErr != tc.isError || res.IsError != tc.isError {
						t.Fatalf("isError: Serve %v, New %v, want %v\n%.300s", isErr, res.IsError, tc.isError, viaServe)
					}
					if viaServe != viaNew {
						t.Errorf("Serve and New differ:\nServe %.300q\nNew   %.300q", viaServe, viaNew)
					}
				})
			}
		})
	}
}

func TestListDirectory(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write(".gitignore", "*.log\n")
			s.write("a.go", "package a\n")
			s.write("debug.log", "x\n")
			s.write("pkg/b.go", "package pkg\n")
			s.write("pkg/notes.md", "# notes\n")
			tests := []struct {
				name string
				args map[string]any
				want string
			}{
				{"the root, without ignored or hidden entries", map[string]any{}, "a.go\npkg/"},
				{"the whole tree", map[string]any{"recursive": true}, "a.go\npkg/\npkg/b.go\npkg/notes.md"},
				{"a directory and a glob", map[string]any{"path": "pkg", "glob": "*.md"}, "pkg/notes.md"},
				{"hidden entries", map[string]any{"hidden": true, "glob": ".*"}, ".gitignore"},
				{"nothing matches", map[string]any{"glob": "*.rs"}, "No entries."},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if got := s.ok("list_directory", tt.args); got != tt.want {
						t.Errorf("got %q, want %q", got, tt.want)
					}
				})
			}
			if got := s.fail("list_directory", map[string]any{"path": "../x"}); !strings.Contains(got, "Error listing ../x (OUTSIDE_ROOT)") {
				t.Errorf("outside the root: %q", got)
			}
			if got := s.fail("list_directory", map[string]any{"page_token": "bogus!"}); !strings.Contains(got, "INVALID_ARGUMENT") {
				t.Errorf("bad page token: %q", got)
			}
		})
	}
}

func TestListDirectoryPagesThroughALongListing(t *testing.T) {
	s := newSession(t, "embedded")
	const n = 1200
	for i := range n {
		s.write(fmt.Sprintf("d/f%04d", i), "")
	}
	var all []string
	args := map[string]any{"path": "d"}
	for pages := 1; ; pages++ {
		got := s.ok("list_directory", args)
		lines := strings.Split(got, "\n")
		last := lines[len(lines)-1]
		if !strings.HasPrefix(last, "[more: call again with page_token ") {
			all = append(all, lines...)
			break
		}
		all = append(all, lines[:len(lines)-1]...)
		var tok string
		if _, err := fmt.Sscanf(strings.TrimPrefix(last, "[more: call again with page_token "), "%q]", &tok); err != nil {
			t.Fatalf("page %d ends %q: %v", pages, last, err)
		}
		args["page_token"] = tok
		if pages > 2 {
			t.Fatalf("more than 2 pages for %d entries", n)
		}
	}
	if len(all) != n || all[0] != "d/f0000" || all[n-1] != fmt.Sprintf("d/f%04d", n-1) || !slices.IsSorted(all) || len(slices.Compact(slices.Clone(all))) != n {
		t.Errorf("got %d entries, want each of %d once, in order", len(all), n)
	}
}
