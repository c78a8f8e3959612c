package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rm, mv and apply transcripts: like TestCLI's, against a real
// hashlined and with --local (both must print the same bytes), with the
// workspace's tree recorded after the refusals to show they left the disk
// as it was.

// diskTree records every file and directory of the workspace in a transcript.
func diskTree() step { return step{dump: treeDump} }

const treeDump = "\x00tree"

// recordTree is record with diskTree steps.
func recordTree(t *testing.T, dir string, run runner, steps []step) string {
	t.Helper()
	var b strings.Builder
	for _, s := range steps {
		if s.dump != treeDump {
			b.WriteString(record(t, dir, run, []step{s}))
			continue
		}
		var entries []string
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if d.IsDir() {
				rel += "/"
			}
			entries = append(entries, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "# tree: %s\n\n", strings.Join(entries, " "))
	}
	return b.String()
}

var changeCases = []struct {
	name  string
	files map[string]string
	dirs  []string
	steps []step
}{
	{"rm_mv", map[string]string{"notes.txt": "one\ntwo\n", "keep/a.txt": "a\n"}, []string{"empty"}, []step{
		cli("read", "notes.txt"),
		cli("rm", "keep"),
		cli("rm", "empty"),
		cli("rm", "notes.txt", "--expect", "v2-00000000000000000000000000000000"),
		cli("mv", "notes.txt", "keep/a.txt"),
		cli("mv", "notes.txt", "keep"),
		cli("mv", "notes.txt", "notes.txt"),
		cli("mv", "missing.txt", "x.txt"),
		cli("mv", "notes.txt", "../outside.txt"),
		cli("rm", "."),
		cli("rm", "../outside.txt"),
		diskTree(),
		dump("keep/a.txt"),
		cli("mv", "notes.txt", "keep/a.txt", "--overwrite"),
		cli("mv", "keep/a.txt", "docs/notes.md", "--expect", "v2-04d2649eb72531af4fa85b201f661081"),
		// The refs read at the old path hold at the new one.
		cli("edit", "docs/notes.md", "--replace", "2:f4", "--text", "TWO"),
		cli("rm", "docs/notes.md", "--expect", "v2-00000000000000000000000000000000"),
		cli("rm", "docs/notes.md"),
		cli("rm", "docs/notes.md"),
		cli("rm"),
		cli("mv", "a"),
		cli("rm", "a", "--bogus"),
		diskTree(),
	}},
	{"apply", map[string]string{"main.go": mainGo, "b.txt": "b\n", "old.txt": "old\n", "d/f.txt": "f\n"}, nil, []step{
		cli("read", "main.go"),
		cli("read", "b.txt"),
		cli("apply").in(`{"changes": [
 {"edit": {"path": "main.go", "edits": [{"replace": {"start": "4:16", "text": "\tprintln(\"hello\")"}}]}},
 {"write": {"path": "util.go", "content": "package main\n"}},
 {"delete": {"path": "old.txt"}},
 {"move": {"from": "b.txt", "to": "pkg/b.txt"}}
]}`),
		diskTree(),
		dump("main.go"),
		// One stale ref refuses the whole set; every failing change is
		// printed, with fresh refs. (pkg/b.txt changes after its read: a
		// mistyped hash would read differently against hashlined, which
		// remembers the read, and with --local, which cannot.)
		cli("write", "pkg/b.txt", "--content", "c\n"),
		cli("apply").in(`{"changes": [
 {"write": {"path": "new.txt", "content": "new\n"}},
 {"edit": {"path": "main.go", "edits": [{"replace": {"start": "4:16", "text": "\tprintln(\"again\")"}}]}},
 {"edit": {"path": "pkg/b.txt", "edits": [{"replace": {"start": "1:bf", "text": "c"}}]}}
]}`),
		cli("apply").in(`{"changes": [
 {"edit": {"path": "main.go", "edits": [{"append": {"text": "// end"}}]}},
 {"delete": {"path": "main.go"}},
 {"move": {"from": "util.go", "to": "main.go", "overwrite": true}}
]}`),
		cli("apply").in(`{"changes": [
 {"delete": {"path": "d"}},
 {"move": {"from": "pkg/b.txt", "to": "util.go"}},
 {"write": {"path": "fine.txt", "content": "x"}}
]}`),
		cli("apply").in(`[{"write": {"path": "../escape.txt", "content": "x"}}, {"write": {"path": "fine.txt", "content": "x"}}]`),
		diskTree(),
		dump("main.go"),
		dump("util.go"),
		cli("apply", "--dry-run").in(`[{"edit": {"path": "main.go", "edits": [{"replace": {"start": "4:d4", "text": "\tprintln(\"dry\")"}}]}}, {"delete": {"path": "d/f.txt"}}, {"write": {"path": "util.go", "content": "package util\n"}}]`),
		dump("main.go"),
		// Malformed input is a usage error, and nothing is sent.
		cli("apply").in(`{"changes": [`),
		cli("apply").in(`{"edits": []}`),
		cli("apply").in(`{"changes": []}`),
		cli("apply").in(`{"changes": {"delete": {"path": "util.go"}}}`),
		cli("apply").in(`{"changes": [{"edit": {"path": "main.go"}}, {"remove": {"path": "util.go"}}, {"delete": {"path": "util.go"}, "move": {"from": "a", "to": "b"}}, {"write": {"path": "x.txt"}}, {"move": {"from": "a", "too": "b"}}, 7]}`),
		cli("apply").in(``),
		cli("apply", "extra"),
		diskTree(),
	}},
}

func TestChangesCLI(t *testing.T) {
	for _, tc := range changeCases {
		var first string
		for _, m := range modes {
			t.Run(tc.name+" "+m.name, func(t *testing.T) {
				dir := t.TempDir()
				writeFiles(t, dir, tc.files)
				for _, d := range tc.dirs {
					if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				env, extra := m.setup(t, dir)
				got := recordTree(t, dir, binary(t, dir, env, extra), tc.steps)
				if first == "" {
					first = got
					golden(t, tc.name, got)
					return
				}
				if got != first {
					t.Errorf("%s prints a different transcript than %s:\n%s", m.name, modes[0].name, lineDiff(first, got))
				}
			})
		}
	}
}

// TestChangesInProcess runs the apply transcript through run in this
// process, so that the commands' own code runs under -race too.
func TestChangesInProcess(t *testing.T) {
	tc := changeCases[1]
	dir := t.TempDir()
	writeFiles(t, dir, tc.files)
	got := recordTree(t, dir, inProcess(dir), tc.steps)
	want, err := os.ReadFile(filepath.Join("testdata", tc.name+".golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("in-process transcript differs from the golden file:\n%s", lineDiff(string(want), got))
	}
}

// TestChangesRequestID re-runs rm, mv and apply with --request-id against
// one real hashlined, as a harness re-runs a command that timed out: the
// second run prints the first one's result and changes nothing more.
func TestChangesRequestID(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	env := []string{"HASHLINE_SERVER=" + startServer(t, dir), "HASHLINE_AGENT=harness"}
	set := `{"changes": [{"write": {"path": "a.txt", "content": "A\n"}}, {"write": {"path": "c.txt", "content": "c\n"}}]}`
	got := recordTree(t, dir, binary(t, dir, env, nil), []step{
		cli("mv", "a.txt", "moved.txt", "--request-id", "m1"),
		cli("mv", "a.txt", "moved.txt", "--request-id", "m1"),
		cli("rm", "b.txt", "--request-id", "r1"),
		cli("rm", "b.txt", "--request-id", "r1"),
		cli("rm", "moved.txt", "--request-id", "r1"),
		cli("apply", "--request-id", "s1").in(set),
		cli("apply", "--request-id", "s1").in(set),
		diskTree(),
		dump("a.txt"),
	})
	golden(t, "changes_request_id", got)
}

func TestChangesHelp(t *testing.T) {
	dir := t.TempDir()
	got := transcript(t, dir, nil, nil, []step{
		cli("rm", "--help"),
		cli("mv", "-h"),
		cli("apply", "--help"),
	})
	golden(t, "changes_help", got)
}
