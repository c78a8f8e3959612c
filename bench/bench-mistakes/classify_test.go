package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestClassifyJudgesTheFileAndTheReplies(t *testing.T) {
	pre, want, other := []byte("a\nb\n"), []byte("a\nB\n"), []byte("a\nb\nb\n")
	for _, tc := range []struct {
		name     string
		expect   expectation
		final    []byte
		refusals []bool
		out      outcome
	}{
		{"the intended file is right", expectApply, want, []bool{false}, right},
		{"the intended file is right even after a refused first try", expectApply, want, []bool{true, false}, right},
		{"a refusal with the file unchanged is refused", expectApply, pre, []bool{true}, refused},
		{"a success that changed nothing is corrupt", expectApply, pre, []bool{false}, corrupt},
		{"another file is corrupt", expectApply, other, []bool{false}, corrupt},
		{"another file is corrupt even if the call was refused", expectApply, other, []bool{true}, corrupt},
		{"no call at all is not a refusal", expectApply, pre, nil, corrupt},
		{"where refusing is right, a refusal with the file unchanged is right", expectRefuse, pre, []bool{true}, right},
		{"where refusing is right, every call must be refused", expectRefuse, pre, []bool{true, false}, corrupt},
		{"where refusing is right, a refusal that wrote is corrupt", expectRefuse, other, []bool{true}, corrupt},
		{"where refusing is right, applying is corrupt", expectRefuse, want, []bool{false}, corrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := want
			if tc.expect == expectRefuse {
				w = pre
			}
			if got := classify(tc.expect, pre, w, tc.final, tc.refusals); got != tc.out {
				t.Errorf("got %v, want %v", got, tc.out)
			}
		})
	}
}

// The reply sizes are the bytes of the result as the server sent them.
func TestMeasuredConnectionRecordsEachReplysSize(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "t"}, nil)
	type args struct {
		N int `json:"n"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", a.N)}}, IsError: a.N == 0}, nil, nil
	})
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	s, err := connect("t", t.TempDir(), "2025-11-25", ct)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	base := len(`{"content":[{"type":"text","text":""}]}`)
	for _, n := range []int{10, 1000} {
		r, err := s.call("echo", map[string]any{"n": n})
		if err != nil {
			t.Fatal(err)
		}
		if r.refused || r.bytes != base+n || len(r.text) != n {
			t.Errorf("n=%d: %+v, want %d bytes", n, r, base+n)
		}
	}
	r, err := s.call("echo", map[string]any{"n": 0})
	if err != nil || !r.refused {
		t.Errorf("a tool error: %+v, %v", r, err)
	}
	r, err = s.call("echo", map[string]any{"n": "not a number"})
	if err != nil || !r.refused {
		t.Errorf("arguments the schema refuses: %+v, %v", r, err)
	}
	n, err := s.listTools()
	if err != nil || n < len(`{"tools":[{"name":"echo"}]}`) {
		t.Errorf("tools/list: %d bytes, %v", n, err)
	}
}

func TestWriteSectionReplacesOnlyItsOwnSection(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "B.md")
	sec := func(s string) string { return mdBegin + "\n" + s + "\n" + mdEnd + "\n" }
	if err := writeSection(file, sec("one")); err != nil {
		t.Fatal(err)
	}
	others := "# Benchmarks\n\n<!-- bench:main -->\nmain\n<!-- /bench:main -->\n"
	if err := os.WriteFile(file, []byte(others+"\n"+sec("one")+"\n<!-- bench:grep -->\ngrep\n<!-- /bench:grep -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(file, sec("two")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	if want := others + "\n" + sec("two") + "\n<!-- bench:grep -->\ngrep\n<!-- /bench:grep -->\n"; string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if err := os.WriteFile(file, []byte(others), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(file, sec("three")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != others+"\n"+sec("three") {
		t.Errorf("not appended:\n%s", b)
	}
	if err := os.WriteFile(file, []byte(mdBegin+"\nunclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeSection(file, sec("four")); err == nil {
		t.Error("an unclosed section was overwritten")
	}
}

func TestReportCountsAPeerGuessWeRefusedForUs(t *testing.T) {
	r := newReport()
	cl := classes[0]
	mc := &mcase{class: cl, name: "c.go", src: "go:c.go:3 (literal)", calls: []any{[]any{map[string]any{"set_line": map[string]any{}}}}}
	res := func(o outcome, text string, bytes int) *result {
		return &result{outcome: o, read: reply{bytes: 100}, replies: []reply{{refused: o == refused, text: text, bytes: bytes}}}
	}
	r.add(mc, map[string]*result{ours: res(refused, "1 line(s) changed since last read\nmore", 50), peerName: res(right, "Updated", 40)})
	r.add(mc, map[string]*result{ours: res(right, "Updated", 30), peerName: res(right, "Updated", 40)})
	row := r.byKey[cl.key]
	if row.ceded != 1 || row.t[ours][right] != 1 || row.t[ours][refused] != 1 || row.t[peerName][right] != 2 {
		t.Fatalf("row: ceded %d, ours %v, peer %v", row.ceded, *row.t[ours], *row.t[peerName])
	}
	md := r.markdown()
	for _, want := range []string{
		"| control: right tags, right text | 2 | 1 | 1 | 0 | 2 | 0 | 0 | 1 |",
		"| `hashline mcp` right >= the peer's in every class",
		"**control** (1 of 2; the peer right in 1).\n\n- go:c.go:3 (literal), peer right: `[{\"set_line\":{}}]`: 1 line(s) changed since last read\n",
		"| edit_file, applied, control class | 1 / 2 | 30 | 40 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	var met []string
	for _, tg := range r.targets() {
		if tg.met {
			met = append(met, tg.what)
		}
	}
	if j, _ := json.Marshal(met); !strings.Contains(string(j), "in every class") {
		t.Errorf("a class where the only loss is a refused guess failed its target: %s", j)
	}
}

func TestClassifySyntaxJudgesABrokenText(t *testing.T) {
	pre, sent, want := []byte("f(\n\tx)\n"), []byte("f(\n\tx\n"), []byte("f(\n\ty)\n")
	for _, tc := range []struct {
		name      string
		final     []byte
		refusals  []bool
		diagnosed bool
		out       syntaxOutcome
	}{
		{"the broken text written without diagnostics is silent", sent, []bool{false}, false, silent},
		{"the broken text written with diagnostics is flagged", sent, []bool{false}, true, flagged},
		{"a refusal with the file unchanged is refused", pre, []bool{true}, true, refusedSyn},
		{"a success that changed nothing is other", pre, []bool{false}, false, otherSyn},
		{"the intended file is other", want, []bool{false}, false, otherSyn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classifySyntax(pre, sent, tc.final, tc.refusals, tc.diagnosed); got != tc.out {
				t.Errorf("got %v, want %v", got, tc.out)
			}
		})
	}
}

func TestDiagnosticsAreFoundInTheStructuredContent(t *testing.T) {
	for _, tc := range []struct {
		json string
		want bool
	}{
		{`{"diagnostics": [{"line": "3:ab", "message": "expected )"}]}`, true},
		{`{"changes": [{"path": "a.go"}, {"path": "b.go", "diagnostics": [{"message": "x"}]}]}`, true},
		{`{"diagnostics": []}`, false},
		{`{"changes": [{"diagnostics": []}]}`, false},
		{`{"text": "diagnostics"}`, false},
		{`null`, false},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.json), &v); err != nil {
			t.Fatal(err)
		}
		if got := hasDiagnostics(v); got != tc.want {
			t.Errorf("hasDiagnostics(%s) = %v, want %v", tc.json, got, tc.want)
		}
	}
}

func TestReportCountsBrokenSyntaxApart(t *testing.T) {
	r := newReport()
	var cl *class
	for _, c := range classes {
		if c.broken {
			cl = c
			break
		}
	}
	if cl == nil {
		t.Fatal("no class breaks the syntax")
	}
	mc := &mcase{class: cl, name: "c.go", calls: []any{[]any{}}}
	res := func(o outcome, s syntaxOutcome) *result {
		return &result{outcome: o, syntax: s, read: reply{bytes: 100}, replies: []reply{{refused: s == refusedSyn, text: "x", bytes: 10}}}
	}
	r.add(mc, map[string]*result{ours: res(corrupt, silent), peerName: res(corrupt, silent), oursStrict: res(refused, refusedSyn)})
	r.add(mc, map[string]*result{ours: res(corrupt, flagged), peerName: res(corrupt, silent), oursStrict: res(refused, refusedSyn)})
	r.add(mc, map[string]*result{ours: res(refused, refusedSyn), peerName: res(corrupt, silent), oursStrict: res(corrupt, flagged)})
	control := &mcase{class: r.byKey["control"].class, name: "k.go", calls: []any{[]any{}}}
	r.add(control, map[string]*result{ours: res(right, silent), peerName: res(right, silent), oursStrict: res(refused, silent)})
	md := r.markdown()
	for _, want := range []string{
		"### Edits that break the syntax",
		"| " + cell(cl.name) + " | 3 | **1** | 1 | 1 | 0 | 2 | **1** | 3 | 0 | 0 | 0 |",
		"| every edit that breaks the syntax flagged by `hashline mcp` | 1 of 3 | **no** |",
		"| every edit that breaks the syntax refused by `hashline mcp` with `strict_syntax`, the file unchanged | 2 of 3 | **no** |",
		"| every control edit written as intended by `hashline mcp` with `strict_syntax` | 0 of 1 | **no** |",
		// The edit written broken without a word is corrupt.
		"| corrupt 0 for `hashline mcp` in every class | " + cl.key + ": 1 | **no** |",
		"The control class's correct edits sent with `strict_syntax`: 0 of 1 written as intended, 1 refused, 0 other.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| "+cell(cl.name)+" | 3 | 0 |") {
		t.Errorf("the broken class is in the outcome table:\n%s", md)
	}
	// The strict server's results are not counted as ours.
	if row := r.byKey[cl.key]; row.t[ours][corrupt] != 2 || row.t[ours][refused] != 1 {
		t.Errorf("ours: %v", row.t[ours])
	}
}

func TestAHashlineSyntaxLineIsDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"Updated a.go (5 lines).\n```diff\n+4:1b|x\n```\nSyntax: this edit introduced 2 errors (go/parser): 4:1b|x — expected", true},
		{"Created a.json (3 lines)\nSyntax: this write introduced 1 error (encoding/json): 2:aa|{", true},
		{"Dry run, nothing written: a.go\nSyntax: this edit would introduce 1 error (go/parser): 4:1b|x", true},
		{"Updated a.go (5 lines).\nSyntax: not checked (the file is larger than 1048576 bytes)", false},
		{"Updated a.go (5 lines).\n+4:1b|// Syntax: this edit introduced 1 error", false},
	} {
		if got := syntaxLine.MatchString(tc.text); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestReportListsOurRefusalsWhereApplyingWasRightUnderTheClassNote(t *testing.T) {
	byKey := map[string]*class{}
	for _, cl := range classes {
		byKey[cl.key] = cl
	}
	res := func(o outcome, text string) *result {
		return &result{outcome: o, replies: []reply{{refused: o == refused, text: text}}}
	}
	call := []any{[]any{map[string]any{"set_line": map[string]any{"anchor": "4:2a", "new_text": "+251 `x`"}}}}
	r := newReport()
	for _, c := range []struct {
		class      string
		src        string
		ours, peer outcome
	}{
		{"diff-plus-one", "go:a.go:4 (literal)", refused, right},
		{"diff-plus-one", "go:b.go:9 (literal)", refused, corrupt},
		{"diff-plus-one", "go:c.go:1 (literal)", right, right},
		{"malformed-op", "go:d.go:2 (rename)", refused, refused},
		{"wrong-hash", "go:e.go:2 (rename)", right, corrupt},
	} {
		mc := &mcase{class: byKey[c.class], name: c.src, src: c.src, calls: call}
		r.add(mc, map[string]*result{ours: res(c.ours, "Error editing (INVALID_EDIT): ambiguous\nthe readings"), peerName: res(c.peer, "Updated")})
	}
	md := r.markdown()
	for _, want := range []string{
		"### Our refusals where applying was right",
		"**diff-plus-one** (2 of 3; the peer right in 1). " + plusRefusals + "\n\n",
		"- go:a.go:4 (literal), peer right: ``[{\"set_line\":{\"anchor\":\"4:2a\",\"new_text\":\"+251 `x`\"}}]``: Error editing (INVALID_EDIT): ambiguous\n",
		"- go:b.go:9 (literal), peer corrupt: ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	for _, not := range []string{"c.go", "d.go", "e.go", "**malformed-op**", "the readings"} {
		if strings.Contains(md, not) {
			t.Errorf("the report lists %q, no refusal where applying was right or past its first line:\n%s", not, md)
		}
	}
}

func TestCodeSpanFencesPastTheBackticksOfItsText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a.b", "`a.b`"},
		{"x `y` z", "``x `y` z``"},
		{"``", "``` `` ```"},
		{"a ``b`` `c`", "``` a ``b`` `c` ```"},
		{"`a", "`` `a ``"},
	} {
		if got := codeSpan(tc.in); got != tc.want {
			t.Errorf("codeSpan(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
