package server_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/workspace"
)

// TestEditOfLargeFileChangedOutside covers the speculative path of Edit: a
// file large enough that Edit works from the snapshot the server holds
// while it reads the file to check it. Whatever happened to the file
// outside the server between the agent's read and the edit, the result must
// be the one an edit made from the file as it is would have. Changes that
// keep the file's size get past the size check and are caught only by the
// comparison; the others are turned away before the edit speculates.
func TestEditOfLargeFileChangedOutside(t *testing.T) {
	var b strings.Builder
	for i := range 8000 { // 320 KB, over the size Edit speculates from
		fmt.Fprintf(&b, "\tvalue%05d := compute(%05d) // a line\n", i+1, i+1)
	}
	orig := b.String()
	line := func(s string, n int) string { return strings.SplitAfter(s, "\n")[n-1] }
	replace := func(s string, n int, text string) string {
		return strings.Replace(s, line(s, n), text+"\n", 1)
	}
	// upper rewrites line n in capitals: the file keeps its size, so only
	// the comparison of bytes can tell it from the snapshot.
	upper := func(s string, n int) string {
		return replace(s, n, strings.ToUpper(strings.TrimSuffix(line(s, n), "\n")))
	}
	const target, elsewhere = 2000, 10
	edited := replace(orig, target, "\tedited := true")
	tests := []struct {
		name    string
		outside func(p string) error // what happens to the file after the read
		dryRun  bool
		want    string // the file after the edit; "" when the edit must fail
		code    codes.Code
		reason  string
	}{
		{name: "unchanged", want: edited},
		{name: "rewritten with the same bytes", outside: func(p string) error {
			return os.WriteFile(p, []byte(orig), 0o644)
		}, want: edited},
		{name: "another line changed, same size", outside: func(p string) error {
			return os.WriteFile(p, []byte(upper(orig, elsewhere)), 0o644)
		}, want: upper(edited, elsewhere)},
		{name: "the referenced line changed, same size", outside: func(p string) error {
			return os.WriteFile(p, []byte(upper(orig, target)), 0o644)
		}, code: codes.Aborted, reason: "STALE_REF"},
		{name: "another line changed, same size, dry run", dryRun: true, outside: func(p string) error {
			return os.WriteFile(p, []byte(upper(orig, elsewhere)), 0o644)
		}, want: upper(edited, elsewhere)},
		{name: "another line changed", outside: func(p string) error {
			return os.WriteFile(p, []byte(replace(orig, elsewhere, "\toutside := 1")), 0o644)
		}, want: replace(edited, elsewhere, "\toutside := 1")},
		{name: "lines inserted above", outside: func(p string) error {
			return os.WriteFile(p, []byte("// header\n// more\n"+orig), 0o644)
		}, want: "// header\n// more\n" + edited},
		{name: "the referenced line changed", outside: func(p string) error {
			return os.WriteFile(p, []byte(replace(orig, target, "\toutside := 2")), 0o644)
		}, code: codes.Aborted, reason: "STALE_REF"},
		{name: "deleted", outside: os.Remove, code: codes.NotFound},
		{name: "another line changed, dry run", dryRun: true, outside: func(p string) error {
			return os.WriteFile(p, []byte(replace(orig, elsewhere, "\toutside := 3")), 0o644)
		}, want: replace(edited, elsewhere, "\toutside := 3")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.seed("big.go", orig)
			p := filepath.Join(e.root, "big.go")
			before := orig
			if tt.outside != nil {
				if err := tt.outside(p); err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(p); err == nil {
					before = string(b)
				}
			}
			resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "big.go", DryRun: tt.dryRun,
				Edits: []*hashlinev1.FileEdit{client.Replace(tag(orig, target), "", "\tedited := true")}})
			if tt.want == "" {
				if status.Code(err) != tt.code {
					t.Fatalf("Edit: %v; want code %v", err, tt.code)
				}
				var stale client.StaleRefError
				if tt.reason == "STALE_REF" && !errors.As(err, &stale) {
					t.Fatalf("Edit: %v; want a StaleRefError", err)
				}
				if tt.outside != nil && tt.code != codes.NotFound && e.read("big.go") != before {
					t.Fatal("a refused edit changed the file")
				}
				return
			}
			if err != nil {
				t.Fatalf("Edit: %v", err)
			}
			if resp.GetVersion() != workspace.Version([]byte(tt.want)) {
				t.Errorf("version %s is not the version of the expected result", resp.GetVersion())
			}
			if got := int(resp.GetTotalLines()); got != strings.Count(tt.want, "\n") {
				t.Errorf("totalLines %d, want %d", got, strings.Count(tt.want, "\n"))
			}
			got := e.read("big.go")
			if tt.dryRun {
				if got != before {
					t.Fatal("a dry run changed the file")
				}
				return
			}
			if got != tt.want {
				t.Fatalf("the file after the edit differs from the edit applied to the file as it was (%d bytes, want %d)", len(got), len(tt.want))
			}
			// The server's memory follows: a read shows the edited line.
			r, err := e.c.Read(e.ctx, &hashlinev1.ReadRequest{Path: "big.go", Offset: target - 2, Limit: 5})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(r.GetText(), "edited := true") || r.GetVersion() != resp.GetVersion() {
				t.Fatalf("read after the edit: version %s, text %q", r.GetVersion(), r.GetText())
			}
		})
	}
}

// TestEditOfLargeFileRebasedWhileChangedOutside: the speculative path with
// a rebase. Agent a's tags come from a version that another agent's edit
// has since replaced, and the file was then changed outside the server,
// keeping its size. The edit must be rebased onto the file as it is.
func TestEditOfLargeFileRebasedWhileChangedOutside(t *testing.T) {
	var b strings.Builder
	for i := range 8000 {
		fmt.Fprintf(&b, "\tvalue%05d := compute(%05d) // a line\n", i+1, i+1)
	}
	orig := b.String()
	e := newEnv(t)
	e.seed("big.go", orig) // agent "test" has seen orig
	other := client.New(e.conn, client.WithAgentID("other"))
	if _, err := other.Read(e.ctx, &hashlinev1.ReadRequest{Path: "big.go", Limit: 1}); err != nil {
		t.Fatal(err)
	}
	// The other agent inserts a line at the top: every line moves down.
	if _, err := other.Edit(e.ctx, &hashlinev1.EditRequest{Path: "big.go",
		Edits: []*hashlinev1.FileEdit{client.InsertBefore(tag(orig, 1), "// top")}}); err != nil {
		t.Fatal(err)
	}
	// Outside the server, line 11 (orig's line 10) is rewritten in capitals.
	cur := e.read("big.go")
	lines := strings.SplitAfter(cur, "\n")
	lines[10] = strings.ToUpper(lines[10])
	outside := strings.Join(lines, "")
	if err := os.WriteFile(filepath.Join(e.root, "big.go"), []byte(outside), 0o644); err != nil {
		t.Fatal(err)
	}
	// Agent "test" edits orig's line 2000 with the tag it read.
	resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "big.go",
		Edits: []*hashlinev1.FileEdit{client.Replace(tag(orig, 2000), "", "\tedited := true")}})
	if err != nil {
		t.Fatal(err)
	}
	lines[2000] = "\tedited := true\n" // orig's line 2000 is line 2001 now
	want := strings.Join(lines, "")
	if got := e.read("big.go"); got != want {
		t.Fatalf("the file differs from the edit rebased onto it (%d bytes, want %d)", len(got), len(want))
	}
	if resp.GetRebasedFrom() == "" || resp.GetVersion() != workspace.Version([]byte(want)) {
		t.Fatalf("rebasedFrom %q, version %s", resp.GetRebasedFrom(), resp.GetVersion())
	}
}
