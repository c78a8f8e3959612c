package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDemo runs the demo and checks the workspace it leaves and the story
// it tells: alice's set landed whole with main.go rebased, carol's stale
// set changed nothing until its retry, and the watcher saw each set's
// changes under one id.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	var out strings.Builder
	if err := run(&out, dir); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	root := filepath.Join(dir, "work")
	want := map[string]string{
		"greet/greet.go":      "package greet\n\n// Greet returns a friendly greeting for name.\nfunc Greet(name string) string {\n\treturn \"Hello, \" + name\n}\n",
		"greet/greet_test.go": "package greet\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {\n\tif got := Greet(\"Ada\"); got != \"Hello, Ada\" {\n\t\tt.Errorf(\"Greet = %q\", got)\n\t}\n}\n",
		"main.go":             "// Command demo greets the world.\npackage main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/demo/greet\"\n)\n\nfunc main() {\n\t// Say hello.\n\tfmt.Println(greet.Greet(\"world\"))\n}\n",
		"docs/NOTES.md":       "Rename Hello to Greet.\n",
	}
	for p, w := range want {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != w {
			t.Errorf("%s =\n%s\nwant\n%s", p, b, w)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "NOTES.md")); !os.IsNotExist(err) {
		t.Errorf("NOTES.md is still there: %v", err)
	}
	// Nothing of the server's is left in the workspace, and its intent log
	// is empty once every set is done.
	left, err := os.ReadDir(filepath.Join(dir, "state", "intents"))
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("intent log holds %d entries", len(left))
	}
	s := out.String()
	for _, w := range []string{
		"change 2: main.go edited, rebased over bob's change (1 reference(s) moved)",
		"change 3: NOTES.md moved to docs/NOTES.md",
		"refused whole, nothing written (STALE_REF)",
		"change 1 (greet/greet.go): STALE_REF",
		"carol's retry: applied",
		"modified main.go              by bob\n",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("output lacks %q:\n%s", w, s)
		}
	}
	// alice's four changes share one set id, carol's two another.
	sets := map[string]int{}
	for _, m := range regexp.MustCompile(`by (alice|carol)(?: from \S+)? in set (\S+)`).FindAllStringSubmatch(s, -1) {
		sets[m[1]+" "+m[2]]++
	}
	if len(sets) != 2 {
		t.Fatalf("sets seen %v, want one of alice's and one of carol's:\n%s", sets, s)
	}
	for k, n := range sets {
		if w := map[bool]int{true: 4, false: 2}[strings.HasPrefix(k, "alice")]; n != w {
			t.Errorf("set %s has %d events, want %d", k, n, w)
		}
	}
	if !strings.Contains(s, "moved    docs/NOTES.md        by alice from NOTES.md in set ") {
		t.Errorf("no MOVED event for NOTES.md:\n%s", s)
	}
}
