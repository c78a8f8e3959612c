package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	changeIDRE = regexp.MustCompile(`\bc[1-9][0-9]*-[0-9a-f]{8}\b`)
	stampRE    = regexp.MustCompile(`\b20[0-9]{2}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?\b`)
)

// sameLog replaces what differs from run to run in log and blame output:
// change ids (the log's number is random) and times.
func sameLog(s string) string {
	ids := map[string]string{}
	s = changeIDRE.ReplaceAllStringFunc(s, func(id string) string {
		if ids[id] == "" {
			ids[id] = "ID" + string(rune('A'+len(ids)))
		}
		return ids[id]
	})
	return stampRE.ReplaceAllStringFunc(s, func(t string) string {
		if strings.Contains(t, "T") {
			return "TIME"
		}
		return "DATE"
	})
}

// TestLogAndBlame: a change made outside the server, found by a read,
// is in hashline log as (external) with its lines, and hashline blame
// attributes the lines it wrote to it.
func TestLogAndBlame(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.go": mainGo})
			env, extra := m.setup(t, dir)
			run := binary(t, dir, env, extra)
			var b strings.Builder
			b.WriteString(record(t, dir, run, []step{cli("read", "main.go", "--limit", "1"), cli("log")}))
			changed := strings.Replace(mainGo, "println(\"hi\")", "println(\"hello\")", 1) + "// changed outside\n"
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(changed), 0o644); err != nil {
				t.Fatal(err)
			}
			b.WriteString("# main.go changed outside the server\n\n")
			b.WriteString(record(t, dir, run, []step{
				cli("read", "main.go", "--limit", "1"),
				cli("log"),
				cli("log", "main.go", "--diff"),
				cli("log", "--agent", "nobody"),
				cli("log", ".", "--since", "1h", "--limit", "1"),
				cli("blame", "main.go"),
				cli("blame", "main.go", "--offset", "4", "--limit", "1"),
				cli("log", "--since", "yesterday"),
				cli("log", "--limit", "-1"),
				cli("blame"),
				cli("blame", "none.go"),
			}))
			golden(t, "log_blame", sameLog(b.String()))

			stdout, _, code := run([]string{"log", "--json"}, "")
			if code != 0 || !strings.Contains(stdout, `"changeId"`) || !strings.Contains(stdout, `"agent"`) {
				t.Errorf("log --json: exit %d\n%s", code, stdout)
			}
			stdout, _, code = run([]string{"blame", "main.go", "--json"}, "")
			if code != 0 || !strings.Contains(stdout, `"changeId"`) || !strings.Contains(stdout, `"beforeHistory"`) {
				t.Errorf("blame --json: exit %d\n%s", code, stdout)
			}
		})
	}
}

// TestRevert: hashline revert undoes one agent's change and keeps
// another's, undoes its own revert, refuses one a later change is in the
// way of (exit 5, the lines shown), and plans without writing with
// --dry-run.
func TestRevert(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"main.go": mainGo})
			env, extra := m.setup(t, dir)
			run := binary(t, dir, env, extra)
			newest := func() string {
				t.Helper()
				stdout, stderr, code := run([]string{"log", "--limit", "1"}, "")
				id := changeIDRE.FindString(stdout)
				if code != 0 || id == "" {
					t.Fatalf("log: exit %d\n%s%s", code, stdout, stderr)
				}
				return id
			}
			var b strings.Builder
			b.WriteString(record(t, dir, run, []step{
				cli("read", "--agent", "alice", "main.go"),
				cli("edit", "--agent", "alice", "main.go", "--replace", "4:16", "--text", "\tprintln(\"hello\")"),
			}))
			alice := newest()
			b.WriteString(record(t, dir, run, []step{
				cli("read", "--agent", "bob", "main.go"),
				cli("edit", "--agent", "bob", "main.go", "--append", "--text", "// bob"),
				cli("revert", alice, "--dry-run"),
				dump("main.go"),
				cli("revert", "--agent", "alice", alice),
				dump("main.go"),
				cli("log"),
			}))
			revert := newest()
			b.WriteString(record(t, dir, run, []step{
				cli("revert", "--agent", "alice", revert),
				dump("main.go"),
			}))
			redo := newest()
			b.WriteString(record(t, dir, run, []step{
				cli("read", "--agent", "bob", "main.go"),
				cli("edit", "--agent", "bob", "main.go", "--replace", "4:d4", "--text", "\tprintln(\"hello, bob\")"),
				cli("revert", "--agent", "alice", redo),
				dump("main.go"),
				cli("revert", "c0-0"),
				cli("revert"),
			}))
			golden(t, "revert", sameLog(b.String()))

			stdout, _, code := run([]string{"revert", alice, "--dry-run", "--json"}, "")
			if code != 5 {
				t.Errorf("revert --json of a change bob's line is in the way of: exit %d\n%s", code, stdout)
			}
			stdout, _, code = run([]string{"revert", newest(), "--dry-run", "--json"}, "")
			if code != 0 || !strings.Contains(stdout, `"reverted"`) || !strings.Contains(stdout, `"dryRun": true`) {
				t.Errorf("revert --dry-run --json: exit %d\n%s", code, stdout)
			}
		})
	}
}
