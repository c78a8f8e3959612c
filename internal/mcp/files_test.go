package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exists reports whether rel is on disk in the session's workspace.
func (s *session) exists(rel string) bool {
	s.t.Helper()
	_, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(rel)))
	return err == nil
}

func TestDeleteFile(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("a.txt", "a\n")
			s.write("dir/b.txt", "b\n")
			if err := os.Mkdir(filepath.Join(s.root, "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			if got := s.ok("delete_file", map[string]any{"path": "a.txt"}); got != "Deleted a.txt" {
				t.Errorf("reply %q", got)
			}
			if s.exists("a.txt") {
				t.Error("a.txt is still there")
			}
			if got := s.ok("delete_file", map[string]any{"path": "empty"}); got != "Deleted directory empty" {
				t.Errorf("reply %q", got)
			}
			for _, tc := range []struct{ name, path, want string }{
				{"a directory with entries is refused", "dir", "DIRECTORY_NOT_EMPTY"},
				{"a missing file is refused", "a.txt", "NOT_FOUND"},
				{"the root is refused", ".", "INVALID_PATH"},
				{"a path outside the root is refused", "../x", "OUTSIDE_ROOT"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					got := s.fail("delete_file", map[string]any{"path": tc.path})
					if !strings.HasPrefix(got, "Error deleting "+tc.path+" ("+tc.want+"): ") {
						t.Errorf("reply %q, want the reason %s", got, tc.want)
					}
					if s.read("dir/b.txt") != "b\n" {
						t.Error("dir/b.txt changed")
					}
				})
			}
		})
	}
}

func TestMoveFile(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("a.go", "one\ntwo\n")
			s.write("b.go", "bee\n")
			r := s.refs("a.go")
			got := s.fail("move_file", map[string]any{"from": "a.go", "to": "b.go"})
			if !strings.HasPrefix(got, "Error moving a.go (ALREADY_EXISTS): ") {
				t.Errorf("a move onto an existing file: %q", got)
			}
			if s.read("a.go") != "one\ntwo\n" || s.read("b.go") != "bee\n" {
				t.Fatal("a refused move changed the files")
			}
			if got := s.ok("move_file", map[string]any{"from": "a.go", "to": "pkg/a.go"}); got != "Moved a.go to pkg/a.go" {
				t.Errorf("reply %q", got)
			}
			if s.exists("a.go") || s.read("pkg/a.go") != "one\ntwo\n" {
				t.Fatal("the file did not move")
			}
			// The refs read at the old path hold at the new one.
			s.ok("edit_file", map[string]any{"path": "pkg/a.go", "edits": []any{map[string]any{"set_line": map[string]any{"anchor": r[2], "new_text": "TWO"}}}})
			if got := s.read("pkg/a.go"); got != "one\nTWO\n" {
				t.Errorf("pkg/a.go = %q", got)
			}
			if got := s.ok("move_file", map[string]any{"from": "pkg/a.go", "to": "b.go", "overwrite": true}); got != "Moved pkg/a.go to b.go, replacing the file there" {
				t.Errorf("reply %q", got)
			}
			if s.read("b.go") != "one\nTWO\n" || s.exists("pkg/a.go") {
				t.Fatal("the overwriting move did not happen")
			}
		})
	}
}

// TestEditFileSeveralFiles: files edits several files in one call, all or
// nothing: a stale ref in one file refuses the call, writes nothing,
// names the file and shows its fresh refs, which then work.
func TestEditFileSeveralFiles(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			s := newSession(t, backend)
			s.write("a.go", "a1\na2\n")
			s.write("b.go", "b1\nb2\n")
			ra, rb := s.refs("a.go"), s.refs("b.go")
			got := s.ok("edit_file", map[string]any{"files": []any{
				map[string]any{"path": "a.go", "edits": []any{map[string]any{"set_line": map[string]any{"anchor": ra[1], "new_text": "A1"}}}},
				map[string]any{"path": "b.go", "edits": []any{map[string]any{"append": map[string]any{"text": "b3"}}}},
			}})
			if s.read("a.go") != "A1\na2\n" || s.read("b.go") != "b1\nb2\nb3\n" {
				t.Fatalf("files not both written: %q %q", s.read("a.go"), s.read("b.go"))
			}
			for _, want := range []string{"Updated a.go (2 lines).", "Updated b.go (3 lines).", "+1:", "+3:"} {
				if !strings.Contains(got, want) {
					t.Errorf("the reply lacks %q:\n%s", want, got)
				}
			}

			// Another writer changes b.go behind the agent's back.
			s.write("b.go", "b1\nB2!\nb3\n")
			got = s.fail("edit_file", map[string]any{"files": []any{
				map[string]any{"path": "a.go", "edits": []any{map[string]any{"set_line": map[string]any{"anchor": ra[2], "new_text": "A2"}}}},
				map[string]any{"path": "b.go", "edits": []any{map[string]any{"set_line": map[string]any{"anchor": rb[2], "new_text": "BB"}}}},
			}})
			if s.read("a.go") != "A1\na2\n" || s.read("b.go") != "b1\nB2!\nb3\n" {
				t.Fatalf("a refused set wrote: %q %q", s.read("a.go"), s.read("b.go"))
			}
			fresh := s.refs("b.go")
			for _, want := range []string{"Nothing was written: 1 of 2 files failed.", "b.go (STALE_REF): ", ">>> " + fresh[2] + "|B2!"} {
				if !strings.Contains(got, want) {
					t.Errorf("the refusal lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, "a.go (") {
				t.Errorf("the refusal names a.go, whose refs hold:\n%s", got)
			}
			// The fresh ref from the refusal works.
			s.ok("edit_file", map[string]any{"files": []any{
				map[string]any{"path": "a.go", "edits": []any{map[string]any{"set_line": map[string]any{"anchor": ra[2], "new_text": "A2"}}}},
				map[string]any{"path": "b.go", "edits": []any{map[string]any{"set_line": map[string]any{"anchor": fresh[2], "new_text": "BB"}}}},
			}})
			if s.read("a.go") != "A1\nA2\n" || s.read("b.go") != "b1\nBB\nb3\n" {
				t.Fatalf("after the retry: %q %q", s.read("a.go"), s.read("b.go"))
			}
		})
	}
}

func TestEditFileSeveralFilesBadArguments(t *testing.T) {
	s := newSession(t, "embedded")
	s.write("a.go", "a\n")
	s.write("b.go", "b\n")
	r := s.refs("a.go")
	good := map[string]any{"path": "a.go", "edits": []any{map[string]any{"set_line": map[string]any{"anchor": r[1], "new_text": "A"}}}}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"files and path together", map[string]any{"path": "a.go", "files": []any{good}}, []string{"not both"}},
		{"an empty files", map[string]any{"files": []any{}}, []string{"files is empty"}},
		{"neither path nor files", map[string]any{"edits": []any{}}, []string{"give path and edits"}},
		{"a path without edits", map[string]any{"path": "a.go"}, []string{"give path and edits"}},
		{"a malformed edit in one file", map[string]any{"files": []any{good, map[string]any{"path": "b.go", "edits": []any{map[string]any{"substitute": map[string]any{}}}}}},
			[]string{"b.go: edits[0] must contain one of"}},
		{"one path twice", map[string]any{"files": []any{good, good}}, []string{"CONFLICTING_CHANGES", "a.go"}},
		{"a file outside the root", map[string]any{"files": []any{good, map[string]any{"path": "../x.go", "edits": []any{map[string]any{"append": map[string]any{"text": "x"}}}}}},
			[]string{"../x.go (OUTSIDE_ROOT)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.fail("edit_file", tc.args)
			for _, w := range append(tc.want, "othing was written") {
				if !strings.Contains(got, w) {
					t.Errorf("the reply lacks %q:\n%s", w, got)
				}
			}
			if s.read("a.go") != "a\n" || s.read("b.go") != "b\n" {
				t.Errorf("files changed: %q %q", s.read("a.go"), s.read("b.go"))
			}
		})
	}
}
