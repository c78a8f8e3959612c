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
	mc := &mcase{class: cl, name: "c.go", calls: []any{[]any{}}}
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
		"- control (1): 1 line(s) changed since last read\n",
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
