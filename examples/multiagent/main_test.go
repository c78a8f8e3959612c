package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemo runs the demo a few times (agents race differently each time)
// and checks what must hold whatever the interleaving: every task done
// exactly once, each line in its section, and the story told.
func TestDemo(t *testing.T) {
	code := func(first, second string) string {
		return "# Release checklist\n## Code\n" + first + "\n" + second + "\n- [x] fix the parser\n- [ ] speed up grep\n" +
			"## Docs\n- [ ] document the rebase\n- [x] write the README\n## Tests and benchmarks\n- [x] fuzz the planner\n"
	}
	// Alice's and Carol's items both go right after "## Code"; the one
	// retried from fresh tags lands above the other.
	finals := []string{
		code("- [ ] handle CRLF files", "- [ ] Watch API"),
		code("- [ ] Watch API", "- [ ] handle CRLF files"),
	}
	for range 3 {
		dir := t.TempDir()
		var out strings.Builder
		if err := run(&out, dir); err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
		b, err := os.ReadFile(filepath.Join(dir, "TODO.md"))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != finals[0] && got != finals[1] {
			t.Fatalf("final file:\n%s\nwant one of:\n%s\n%s", got, finals[0], finals[1])
		}
		for _, want := range []string{
			"eve    edits without reading -> hashline: NOT_READ",
			"rebased from v2-",
			"conflict (CONFLICT at 2:",
			"retrying from the fresh tag 2:",
			"nothing to do",
			"7 edits applied",
			"1 conflict(s) retried from fresh tags, 1 task(s) found already done",
			"Final TODO.md",
			strings.TrimSuffix(string(b), "\n"),
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
		}
	}
}
