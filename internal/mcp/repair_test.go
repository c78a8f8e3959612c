package mcp_test

import (
	"strings"
	"testing"
)

// goFunc is a tab-indented Go function:
//
//	1 func f(x bool) int {
//	2 	if x {
//	3 		a()
//	4 	}
//	5 	return 1
//	6 }
const goFunc = "func f(x bool) int {\n\tif x {\n\t\ta()\n\t}\n\treturn 1\n}\n"

func TestEditFileListsItsRepairs(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("f.go", goFunc)
			r := s.refs("f.go")
			// A model's diff, with the line after the range repeated, and a
			// line without its indentation.
			got := s.ok("edit_file", map[string]any{"path": "f.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": r[3], "new_text": "+\t\tb()\n+\t}"}},
				{"set_line": map[string]any{"anchor": r[5], "new_text": "return 2"}},
			}})
			if want := "func f(x bool) int {\n\tif x {\n\t\tb()\n\t}\n\treturn 2\n}\n"; s.read("f.go") != want {
				t.Fatalf("file = %q, want %q", s.read("f.go"), want)
			}
			_, repaired, ok := strings.Cut(got, "\n\nRepaired (")
			if !ok {
				t.Fatalf("no Repaired section in:\n%s", got)
			}
			lines := strings.Split(repaired, "\n")[1:]
			want := []string{
				`- edit 0: text was marked like a diff; removed the "+" of 2 lines`,
				`- edit 0: dropped the text's last line "}", which repeats line 4 (just after line 3)`,
				`- edit 1: the text had lost its indentation; its lines got the indentation "\t" of line 5 in front of their own`,
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("Repaired lists\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
			if strings.Contains(got, "Warnings:") {
				t.Errorf("the repairs are listed twice:\n%s", got)
			}
		})
	}
}

func TestEditFileStrictWritesTheTextAsSent(t *testing.T) {
	s := newSession(t, "embedded")
	s.write("f.go", goFunc)
	r := s.refs("f.go")
	got := s.ok("edit_file", map[string]any{"path": "f.go", "strict": true, "edits": []map[string]any{
		{"set_line": map[string]any{"anchor": r[5], "new_text": "+return 2"}},
	}})
	if want := strings.Replace(goFunc, "\treturn 1", "+return 2", 1); s.read("f.go") != want {
		t.Fatalf("file = %q, want %q", s.read("f.go"), want)
	}
	if strings.Contains(got, "Repaired") || strings.Contains(got, "Warnings") {
		t.Errorf("strict reported repairs:\n%s", got)
	}
}

func TestEditFileRefusesAGuessShowingBothReadings(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("f.go", goFunc)
			r := s.refs("f.go")
			got := s.fail("edit_file", map[string]any{"path": "f.go", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": r[5], "new_text": "\treturn 2\n}\n}"}},
			}})
			for _, m := range []string{"(INVALID_EDIT)", `its last line "}" repeats line 6`, "keeping the repeated line:", "dropping it:", r[4] + "|\t}", r[6] + "|}", "    +}", "strict"} {
				if !strings.Contains(got, m) {
					t.Errorf("refusal does not show %q:\n%s", m, got)
				}
			}
			if s.read("f.go") != goFunc {
				t.Errorf("a refused edit wrote the file: %q", s.read("f.go"))
			}
		})
	}
}

func TestEditFileDescribesRepairsBriefly(t *testing.T) {
	s := newSession(t, "embedded")
	for tool, err := range s.cs.Tools(s.ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == "edit_file" && !strings.Contains(tool.Description, "strict: true") {
			t.Errorf("edit_file's description does not mention strict:\n%s", tool.Description)
		}
	}
}

func TestEditFileRepairsTheLastMistakes(t *testing.T) {
	// 1 interface A {
	// 2     /**
	// 3      * The version.
	// 4      */
	// 5     readonly version: 1;
	// 6
	// 7     readonly name: string;
	// 8 }
	// 9 export const n = 32;
	const ts = "interface A {\n    /**\n     * The version.\n     */\n    readonly version: 1;\n\n    readonly name: string;\n}\nexport const n = 32;\n"
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("a.ts", ts)
			r := s.refs("a.ts")
			// The comment's "*/" echoed before the range, a blank line
			// replaced at column 0, a lone "+" on a line at column 0.
			got := s.ok("edit_file", map[string]any{"path": "a.ts", "edits": []map[string]any{
				{"set_line": map[string]any{"anchor": r[5], "new_text": "     */\n    readonly version: 2;"}},
				{"set_line": map[string]any{"anchor": r[6], "new_text": "readonly id: number;"}},
				{"set_line": map[string]any{"anchor": r[9], "new_text": "+export const n = 33;"}},
			}})
			want := "interface A {\n    /**\n     * The version.\n     */\n    readonly version: 2;\n    readonly id: number;\n    readonly name: string;\n}\nexport const n = 33;\n"
			if s.read("a.ts") != want {
				t.Fatalf("file = %q, want %q", s.read("a.ts"), want)
			}
			_, repaired, ok := strings.Cut(got, "\n\nRepaired (")
			if !ok {
				t.Fatalf("no Repaired section in:\n%s", got)
			}
			lines := strings.Split(repaired, "\n")[1:]
			wantLines := []string{
				`- edit 0: dropped the text's first line "*/", which repeats line 4 (just before line 5)`,
				`- edit 1: the text had lost its indentation; it replaces blank lines, so its lines got the indentation "    " of the lines around them (5 and 7) in front of their own`,
				`- edit 2: text was marked like a diff; removed the "+" of 1 line`,
			}
			if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
				t.Errorf("Repaired lists\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
			}
		})
	}
}

func TestEditFileRefusesABlankLineBetweenDepths(t *testing.T) {
	// 1 def f():
	// 2     if x:
	// 3         y = 1
	// 4
	// 5     return y
	const py = "def f():\n    if x:\n        y = 1\n\n    return y\n"
	s := newSession(t, "embedded")
	s.write("f.py", py)
	r := s.refs("f.py")
	got := s.fail("edit_file", map[string]any{"path": "f.py", "edits": []map[string]any{
		{"set_line": map[string]any{"anchor": r[4], "new_text": "print(y)"}},
	}})
	for _, m := range []string{"(INVALID_EDIT)", "indented differently", "indented as line 3:", "indented as line 5:", "strict"} {
		if !strings.Contains(got, m) {
			t.Errorf("refusal does not show %q:\n%s", m, got)
		}
	}
	if s.read("f.py") != py {
		t.Errorf("a refused edit wrote the file: %q", s.read("f.py"))
	}
}
