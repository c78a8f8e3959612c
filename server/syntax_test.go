package server_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
	"github.com/hashline/hashline/internal/checkers"
	"github.com/hashline/hashline/internal/engine"
)

const (
	goodGo   = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	brokenGo = "package main\n\nfunc main() {\n\tprintln(\"hi\"\n}\n"
)

// breakGo drops line 4's closing parenthesis.
func breakGo() *hashlinev1.FileEdit { return client.Replace(tag(goodGo, 4), "", "\tprintln(\"hi\"") }

// TestSyntaxDiagnosticsOnTheWire: an Edit and a Write that break their
// files' syntax are written and answered with diagnostics, each with its
// line's fresh ref; strict_syntax refuses them, FAILED_PRECONDITION
// SYNTAX_ERROR with one SyntaxError per error, and nothing changes.
func TestSyntaxDiagnosticsOnTheWire(t *testing.T) {
	t.Run("advisory edit", func(t *testing.T) {
		e := newEnv(t)
		e.seed("main.go", goodGo)
		resp, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "main.go", Edits: []*hashlinev1.FileEdit{breakGo()}})
		if err != nil {
			t.Fatal(err)
		}
		if e.read("main.go") != brokenGo {
			t.Fatalf("file %q", e.read("main.go"))
		}
		ds := resp.GetDiagnostics()
		if len(ds) != 2 || ds[0].GetRef() != tag(brokenGo, 4) || ds[0].GetLine() != 4 || ds[0].GetColumn() == 0 ||
			ds[0].GetChecker() != "go/parser" || ds[0].GetContent() != "\tprintln(\"hi\"" || ds[1].GetRef() != tag(brokenGo, 5) {
			t.Errorf("diagnostics %v", ds)
		}
		if resp.GetSyntaxNotChecked() != "" {
			t.Errorf("syntax_not_checked %q", resp.GetSyntaxNotChecked())
		}
	})
	t.Run("advisory write", func(t *testing.T) {
		e := newEnv(t)
		resp, err := e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "a.json", Content: "[1,\n"})
		if err != nil {
			t.Fatal(err)
		}
		if ds := resp.GetDiagnostics(); len(ds) != 1 || ds[0].GetRef() != tag("[1,\n", 1) || ds[0].GetChecker() != "encoding/json" {
			t.Errorf("diagnostics %v", ds)
		}
	})
	t.Run("strict edit", func(t *testing.T) {
		e := newEnv(t)
		e.seed("main.go", goodGo)
		before := e.snapshot()
		_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "main.go", StrictSyntax: true, Edits: []*hashlinev1.FileEdit{breakGo()}})
		st := status.Convert(err)
		if st.Code() != codes.FailedPrecondition {
			t.Fatalf("Edit: %v, want FAILED_PRECONDITION", err)
		}
		e.assertUnchanged(before)
		var reason string
		var syn []*hashlinev1.SyntaxError
		for _, d := range st.Details() {
			switch d := d.(type) {
			case *hashlinev1.ErrorInfo:
				reason = d.GetReason()
			case *hashlinev1.SyntaxError:
				syn = append(syn, d)
			}
		}
		if reason != "SYNTAX_ERROR" || len(syn) != 2 || syn[0].GetRef() != tag(brokenGo, 4) || syn[0].GetPath() != "main.go" {
			t.Errorf("reason %q, details %v", reason, syn)
		}
		if !strings.Contains(st.Message(), "nothing was written") {
			t.Errorf("message %q", st.Message())
		}
	})
	t.Run("strict set", func(t *testing.T) {
		e := newEnv(t)
		e.seed("main.go", goodGo)
		e.seed("ok.txt", "a\n")
		before := e.snapshot()
		_, err := e.c.Apply(e.ctx, &hashlinev1.ApplyRequest{StrictSyntax: true, Changes: []*hashlinev1.Change{
			editChange("ok.txt", client.Replace(tag("a\n", 1), "", "b")), editChange("main.go", breakGo()),
		}})
		st := status.Convert(err)
		if st.Code() != codes.FailedPrecondition {
			t.Fatalf("Apply: %v, want FAILED_PRECONDITION", err)
		}
		e.assertUnchanged(before)
		n := 0
		for _, d := range st.Details() {
			if d, ok := d.(*hashlinev1.SyntaxError); ok {
				n++
				if d.GetChangeIndex() != 1 || d.GetPath() != "main.go" {
					t.Errorf("detail %v, want change 1", d)
				}
			}
		}
		if n != 2 {
			t.Errorf("%d SyntaxError details, want 2", n)
		}
	})
	t.Run("strict check command of the operator's", func(t *testing.T) {
		rules, err := engine.ParseCommands([]string{`*.txt=sh -c 'echo "bad: $(cat)"; exit 1'`})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, engine.WithCommands(rules, nil, checkers.Options{}))
		e.seed("a.txt", "a\n")
		before := e.snapshot()
		_, err = e.c.Write(e.ctx, &hashlinev1.WriteRequest{Path: "a.txt", Content: "b\n", StrictSyntax: true})
		st := status.Convert(err)
		if st.Code() != codes.FailedPrecondition {
			t.Fatalf("Write: %v, want FAILED_PRECONDITION", err)
		}
		e.assertUnchanged(before)
		var syn []*hashlinev1.SyntaxError
		for _, d := range st.Details() {
			if d, ok := d.(*hashlinev1.SyntaxError); ok {
				syn = append(syn, d)
			}
		}
		if len(syn) != 1 || syn[0].GetSource() != "check" || syn[0].GetRef() != "" || syn[0].GetLine() != 0 || syn[0].GetChecker() != "sh" || syn[0].GetMessage() != "exited with status 1: bad: b" {
			t.Errorf("details %v", syn)
		}
		if !strings.Contains(st.Message(), "1 finding of the operator's checks") {
			t.Errorf("message %q", st.Message())
		}
	})
	t.Run("strict glob of the server", func(t *testing.T) {
		e := newEnv(t, engine.WithSyntax(engine.SyntaxAdvisory, "*.go"))
		e.seed("main.go", goodGo)
		before := e.snapshot()
		_, err := e.c.Edit(e.ctx, &hashlinev1.EditRequest{Path: "main.go", Edits: []*hashlinev1.FileEdit{breakGo()}})
		if !errors.Is(err, client.ErrSyntaxError) {
			t.Fatalf("Edit: %v, want SYNTAX_ERROR", err)
		}
		e.assertUnchanged(before)
	})
}
