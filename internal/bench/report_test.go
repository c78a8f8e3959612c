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

func TestMergeKeepsTheGrepSectionAndOwnsTheRest(t *testing.T) {
	grep := grepBegin + "\n## Grep\n\n| q | rg | ours |\n|---|---|---|\n| x | 1 | 2 |\n" + grepEnd
	for _, tc := range []struct {
		name, old string
		grep      bool
	}{
		{"a new file", "", false},
		{"only the grep section", grep + "\n", true},
		{"an old run of both", "# Benchmarks\n\nstale intro\n\n" + mainBegin + "\nold numbers\n" + mainEnd + "\n\n" + grep + "\ntrailing junk\n", true},
		{"grep first", grep + "\n\n" + mainBegin + "\nold\n" + mainEnd + "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := merge(tc.old, mainBegin+"\nnew numbers\n"+mainEnd+"\n")
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, "old") || strings.Contains(got, "junk") || !strings.Contains(got, "new numbers") {
				t.Errorf("our section not replaced:\n%s", got)
			}
			if strings.Contains(got, grep) != tc.grep || strings.Count(got, grepBegin) > 1 {
				t.Errorf("grep section kept = %v, want %v:\n%s", strings.Contains(got, grep), tc.grep, got)
			}
			if again, _ := merge(got, mainBegin+"\nnew numbers\n"+mainEnd+"\n"); again != got {
				t.Errorf("merging twice changed the file:\n%s\nthen\n%s", got, again)
			}
		})
	}
	if _, err := merge(grepBegin+"\nunclosed", "x"); err == nil {
		t.Error("an unclosed grep section was accepted")
	}
}

func TestReportShowsMissedTargets(t *testing.T) {
	r := newReport()
	r.targetNote("edit", 1.7, 1.5, "a note")
	r.target("read", 1.2, 2)
	r.target("peer", 0.8, -1)
	r.add(&table{title: "T", cols: []string{"a", "b"}, rows: [][]string{{"1", ms(1500 * time.Microsecond)}}})
	md := r.markdown()
	for _, want := range []string{"| edit | 1.70x | **no** | a note |", "| read | 1.20x | yes |  |", "| peer | 0.80x | **no** |  |", "| 1 | 1.50 ms |", mainBegin, mainEnd} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestEditBudget(t *testing.T) {
	us := time.Microsecond
	for _, tc := range []struct {
		floor, inProc, empty time.Duration
		want                 string
	}{
		{660 * us, 650 * us, 320 * us, "1.5x is 0.99 ms; in-process Edit 0.65 ms + empty gRPC call 0.32 ms = 0.97 ms, leaving 0.02 ms"},
		{650 * us, 710 * us, 300 * us, "1.5x is 0.97 ms; in-process Edit 0.71 ms + empty gRPC call 0.30 ms = 1.01 ms, already 0.04 ms over"},
	} {
		if got := editBudget(tc.floor, tc.inProc, tc.empty); got != tc.want {
			t.Errorf("editBudget(%v, %v, %v) =\n%q, want\n%q", tc.floor, tc.inProc, tc.empty, got, tc.want)
		}
	}
}

func TestReadBudget(t *testing.T) {
	us := time.Microsecond
	got := budget(2, 550*us, part{"in-process tagging", 550 * us}, part{"the same response, prebuilt", 570 * us})
	if want := "2x is 1.10 ms; in-process tagging 0.55 ms + the same response, prebuilt 0.57 ms = 1.12 ms, already 0.02 ms over"; got != want {
		t.Errorf("budget =\n%q, want\n%q", got, want)
	}
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{5, 1, 4, 2, 3}
	if got := median(d); got != 3 {
		t.Errorf("median = %v", got)
	}
	if got := percentile(d, 99); got != 5 {
		t.Errorf("p99 = %v", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("empty = %v", got)
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
