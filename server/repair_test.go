package server_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// funcFile is a tab-indented Go file:
//
//	1 package p
//	2
//	3 func f(x bool) int {
//	4 	if x {
//	5 		a()
//	6 	}
//	7 	return 1
//	8 }
const funcFile = "package p\n\nfunc f(x bool) int {\n\tif x {\n\t\ta()\n\t}\n\treturn 1\n}\n"

func TestEditRepairsSlipsAndReportsThem(t *testing.T) {
	tests := []struct {
		name   string
		edit   *hashlinev1.FileEdit
		want   string
		repair *hashlinev1.Repair
		asSent string // the file with strict
	}{
		{
			name:   "diff markers are stripped",
			edit:   client.Replace(tag(funcFile, 5), "", "-\t\ta()\n+\t\tb()"),
			want:   strings.Replace(funcFile, "a()", "b()", 1),
			repair: &hashlinev1.Repair{Kind: "DIFF_MARKERS_STRIPPED", Line: 5},
			asSent: strings.Replace(funcFile, "\t\ta()", "-\t\ta()\n+\t\tb()", 1),
		},
		{
			name:   "a repeated line after the range is dropped",
			edit:   client.Replace(tag(funcFile, 5), tag(funcFile, 6), "\t\tb()\n\t}\n\treturn 1"),
			want:   strings.Replace(funcFile, "a()", "b()", 1),
			repair: &hashlinev1.Repair{Kind: "BOUNDARY_ECHO_DROPPED", Line: 7},
			asSent: strings.Replace(funcFile, "\t\ta()\n\t}", "\t\tb()\n\t}\n\treturn 1", 1),
		},
		{
			name:   "an insert repeating its anchor drops it",
			edit:   client.InsertAfter(tag(funcFile, 5), "\t\ta()\n\t\tb()"),
			want:   strings.Replace(funcFile, "\t\ta()", "\t\ta()\n\t\tb()", 1),
			repair: &hashlinev1.Repair{Kind: "ANCHOR_ECHO_DROPPED", Line: 5},
			asSent: strings.Replace(funcFile, "\t\ta()", "\t\ta()\n\t\ta()\n\t\tb()", 1),
		},
		{
			name:   "lost indentation is restored",
			edit:   client.Replace(tag(funcFile, 7), "", "return 2"),
			want:   strings.Replace(funcFile, "return 1", "return 2", 1),
			repair: &hashlinev1.Repair{Kind: "INDENT_RESTORED", Line: 7},
			asSent: strings.Replace(funcFile, "\treturn 1", "return 2", 1),
		},
		{
			name:   "escaped tabs become tabs",
			edit:   client.Replace(tag(funcFile, 7), "", `\treturn 2`),
			want:   strings.Replace(funcFile, "return 1", "return 2", 1),
			repair: &hashlinev1.Repair{Kind: "TAB_ESCAPES_EXPANDED", Line: 7},
			asSent: strings.Replace(funcFile, "\treturn 1", `\treturn 2`, 1),
		},
		{
			name:   "pasted tags are stripped",
			edit:   client.Replace(tag(funcFile, 7), "", "7:00|\treturn 2"),
			want:   strings.Replace(funcFile, "return 1", "return 2", 1),
			repair: &hashlinev1.Repair{Kind: "PREFIX_STRIPPED", Line: 7},
			asSent: strings.Replace(funcFile, "\treturn 1", "7:00|\treturn 2", 1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.seed("f.go", funcFile)
			resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.go", Edits: []*hashlinev1.FileEdit{tt.edit}})
			if err != nil {
				t.Fatal(err)
			}
			if got := e.read("f.go"); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
			rs := resp.GetRepairs()
			if len(rs) != 1 || rs[0].GetKind() != tt.repair.GetKind() || rs[0].GetLine() != tt.repair.GetLine() || rs[0].GetEditIndex() != 0 || rs[0].GetDetail() == "" {
				t.Fatalf("repairs = %v, want one %v", rs, tt.repair)
			}
			if !slices.Contains(resp.GetWarnings(), "edit 0: "+rs[0].GetDetail()) {
				t.Errorf("warnings %q lack the repair's sentence", resp.GetWarnings())
			}

			t.Run("and with strict the text is written as sent", func(t *testing.T) {
				e := newEnv(t)
				e.seed("f.go", funcFile)
				resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.go", Strict: true, Edits: []*hashlinev1.FileEdit{tt.edit}})
				if err != nil {
					t.Fatal(err)
				}
				if got := e.read("f.go"); got != tt.asSent {
					t.Errorf("file = %q, want %q", got, tt.asSent)
				}
				if len(resp.GetRepairs()) > 0 || len(resp.GetWarnings()) > 0 {
					t.Errorf("strict reported repairs %v, warnings %q", resp.GetRepairs(), resp.GetWarnings())
				}
			})
		})
	}
}

func TestEditRefusesAGuessWithBothReadings(t *testing.T) {
	e := newEnv(t)
	e.seed("f.go", funcFile)
	before := e.snapshot()
	// The last "}" repeats line 8, and neither reading keeps the bracket
	// balance of line 7: an echo or a second brace is a guess.
	edit := client.Replace(tag(funcFile, 7), "", "\treturn 2\n}\n}")
	_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.go", Edits: []*hashlinev1.FileEdit{edit}})
	var ce *client.Error
	if !errors.As(err, &ce) || !errors.Is(err, client.ErrInvalidEdit) || status.Code(err) != codes.InvalidArgument {
		t.Fatalf("err = %v, want INVALID_EDIT", err)
	}
	if len(ce.Edits) != 1 || ce.Edits[0].GetField() != "text" || ce.Edits[0].GetReason() != "INVALID_EDIT" {
		t.Fatalf("edit errors = %v", ce.Edits)
	}
	for _, m := range []string{"keeping the repeated line:", "dropping it:", tag(funcFile, 6) + "|\t}", "    +}", tag(funcFile, 8) + "|}", "strict"} {
		if !strings.Contains(ce.Message, m) || !strings.Contains(ce.Edits[0].GetMessage(), m) {
			t.Errorf("message does not show %q:\n%s", m, ce.Message)
		}
	}
	e.assertUnchanged(before)

	// Either reading can be sent next: strict keeps the brace.
	if _, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "f.go", Strict: true, Edits: []*hashlinev1.FileEdit{edit}}); err != nil {
		t.Fatal(err)
	}
	if got, want := e.read("f.go"), strings.Replace(funcFile, "\treturn 1\n}", "\treturn 2\n}\n}\n}", 1); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

// TestRepairsLookAtTheCurrentFileAfterARebase: the echo is judged against
// the lines around the range in the file as it is now, after another
// agent's edit moved them.
func TestRepairsLookAtTheCurrentFileAfterARebase(t *testing.T) {
	e := newEnv(t)
	a, b := e.agent("a"), e.agent("b")
	e.write("f.go", funcFile)
	e.readAs(a, "f.go")
	e.readAs(b, "f.go")
	e.editAs(b, "f.go", client.InsertAfter(tag(funcFile, 1), "\nimport \"os\""))
	resp := e.editAs(a, "f.go", client.Replace(tag(funcFile, 5), "", "\tif x {\n\t\tos.Exit(1)"))
	want := "package p\n\nimport \"os\"\n\nfunc f(x bool) int {\n\tif x {\n\t\tos.Exit(1)\n\t}\n\treturn 1\n}\n"
	if got := e.read("f.go"); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	if rs := resp.GetRepairs(); resp.GetRebasedFrom() == "" || len(rs) != 1 || rs[0].GetKind() != "BOUNDARY_ECHO_DROPPED" || rs[0].GetLine() != 6 {
		t.Errorf("rebased from %q, repairs %v; want a rebase and the echo of line 6 (line 4 before)", resp.GetRebasedFrom(), rs)
	}
}
