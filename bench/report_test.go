package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashline/hashline/internal/hashline"
)

func TestMergeKeepsTheOtherSectionsAndOwnsTheRest(t *testing.T) {
	grep := grepBegin + "\n## Grep\n\n| q | rg | ours |\n|---|---|---|\n| x | 1 | 2 |\n" + grepEnd
	mistakes := keptSections[1][0] + "\n## Mistakes\n\n| class | right |\n|---|---|\n| control | 30 |\n" + keptSections[1][1]
	concurrent := "<!-- bench:concurrent -->\n## Concurrent writers\n\n| writers | raw |\n|---|---|\n| 16 | 900 |\n<!-- /bench:concurrent -->"
	shortcuts := "<!-- bench:shortcuts -->\n## Shortcuts\n\n| shortcut | row | without/with |\n|---|---|---|\n| Known | Read | 1.5x |\n<!-- /bench:shortcuts -->"
	for _, tc := range []struct {
		name, old string
		kept      []string // in the order the result must have them
	}{
		{"a new file", "", nil},
		{"only the grep section", grep + "\n", []string{grep}},
		{"an old run of all three", "# Benchmarks\n\nstale intro\n\n" + mainBegin + "\nold numbers\n" + mainEnd + "\n\n" + grep + "\n\n" + mistakes + "\ntrailing junk\n", []string{grep, mistakes}},
		{"grep first", grep + "\n\n" + mainBegin + "\nold\n" + mainEnd + "\n", []string{grep}},
		{"mistakes before grep", mistakes + "\n" + grep + "\n", []string{mistakes, grep}},
		{"only the mistakes section", "intro\n" + mistakes + "\n", []string{mistakes}},
		{"the concurrent writers' section, written by hand", mainBegin + "\nold\n" + mainEnd + "\n\n" + concurrent + "\n", []string{concurrent}},
		{"the shortcuts' section, written by hand, after the concurrent writers'", mainBegin + "\nold\n" + mainEnd + "\n\n" + concurrent + "\n\n" + shortcuts + "\n", []string{concurrent, shortcuts}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := merge(tc.old, mainBegin+"\nnew numbers\n"+mainEnd+"\n")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, "old") || strings.Contains(got, "junk") || strings.Contains(got, "intro\n") || !strings.Contains(got, "new numbers") {
				t.Errorf("our section not replaced:\n%s", got)
			}
			at := 0
			for _, k := range tc.kept {
				i := strings.Index(got[at:], k)
				if i < 0 {
					t.Fatalf("section %.30q lost or out of order:\n%s", k, got)
				}
				at += i + len(k)
			}
			for _, m := range keptSections {
				if n := strings.Count(got, m[0]); n != strings.Count(tc.old, m[0]) {
					t.Errorf("%s appears %d times:\n%s", m[0], n, got)
				}
			}
			if again, _ := merge(got, mainBegin+"\nnew numbers\n"+mainEnd+"\n"); again != got {
				t.Errorf("merging twice changed the file:\n%s\nthen\n%s", got, again)
			}
		})
	}
	for _, m := range keptSections {
		if _, err := merge(m[0]+"\nunclosed", "x"); err == nil {
			t.Errorf("an unclosed %s section was accepted", m[0])
		}
	}
}

func TestReportMarksEachTargetMetOrNot(t *testing.T) {
	r := newReport()
	r.atMost("edit: floor", 1.20, 1.15).bound = 1.18
	r.atMost("read: floor", 1.25, 1.25)
	r.atLeast("big: peer/ours", 4.99, 5)
	r.peerTarget("read, 10k lines", 10_000, 50*time.Millisecond, 10*time.Millisecond, 25*time.Millisecond)
	r.peerTarget("read, 100 lines", 100, 10*time.Millisecond, 11*time.Millisecond, 4*time.Millisecond)
	r.peerTarget("edit, 100 lines", 100, 10*time.Millisecond, 11100*time.Microsecond, 0)
	r.add(&table{title: "T", about: "What T compares.", cols: []string{"a", "b"}, rows: [][]string{{"1", ms(1500 * time.Microsecond)}}})
	md := r.markdown()
	for _, want := range []string{
		"| edit: floor <= 1.15x | 1.20x | 1.18x | **no** |",
		"| read: floor <= 1.25x | 1.25x | — | yes |",
		"| big: peer/ours >= 5.00x | 4.99x | — | **no** |",
		"| read, 10k lines: peer/ours >= 5.00x | 5.00x | 2.00x | yes |",
		"| read, 100 lines: ours/peer <= 1.10x | 1.10x | 0.40x | yes |",
		"| edit, 100 lines: ours/peer <= 1.10x | 1.11x | — | **no** |",
		"### T\n\nWhat T compares.\n\n| a | b |\n|---|---|\n| 1 | 1.50 ms |",
		mainBegin, mainEnd,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestEditCaseTogglesBetweenItsStates(t *testing.T) {
	for _, k := range []int{1, 10} {
		c := newEditCase("t", 100, k)
		if len(c.lines) != k || c.states[0] == c.states[1] {
			t.Fatalf("k=%d: lines %v", k, c.lines)
		}
		for from := range 2 {
			doc := hashline.ParseDocument([]byte(c.states[from]))
			var edits []hashline.Edit
			for j, ln := range c.lines {
				if got := fmt.Sprintf("%d:%s", ln, hashline.Hasher{}.Sum(doc.Line(ln))); got != c.refs[from][j] {
					t.Fatalf("k=%d state %d: ref %s, line is %s", k, from, c.refs[from][j], got)
				}
				edits = append(edits, hashline.Edit{Op: hashline.OpReplace, Start: c.refs[from][j], Text: c.newLine(from, ln)})
			}
			res, err := hashline.ApplyEdits(doc, edits, hashline.ApplyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.Doc.Bytes()); got != c.states[1-from] {
				t.Fatalf("k=%d: applying from state %d does not give the other state", k, from)
			}
		}
	}
}

// bump gives a fixture new bytes on every call, at the same length and
// with the same lines, so that no server answers a read from its snapshot.
func TestBumpChangesTheFileInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.go")
	src := sourceFile(3)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{}
	seen := map[string]bool{src: true}
	for range 3 {
		if err := e.bump(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		if seen[got] || len(got) != len(src) || strings.Count(got, "\n") != 3 || got[8:] != src[8:] {
			t.Fatalf("after a bump:\n%q\nfrom\n%q", got, src)
		}
		seen[got] = true
	}
}
