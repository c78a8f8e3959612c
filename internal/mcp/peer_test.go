package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hashline/hashline/client"
	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

// The published hashline MCP server (mcp-hashline-edit-server 0.2.0, on
// Bun) recorded reading the files below; testdata/peer/README.md says how.
// These tests hold our tags byte-identical to its tags without needing Bun.

var updatePeer = flag.String("update-peer", "", "re-record testdata/peer by running the peer installed in this directory (tools/peer after npm ci)")

type peerFile struct{ name, content string }

// peerFiles are the inputs, built here so that no byte of them depends on
// how git checks files out.
func peerFiles() []peerFile {
	return []peerFile{
		{"ascii.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"},
		{"unicode_space.txt", strings.Join([]string{
			"plain ascii", "nbsp:\u00a0x", "em\u2003space", "ideographic\u3000space", "zwnbsp\ufeffmid",
			"line\u2028sep\u2029para", "nel\u0085x", "mongolian\u180ex", "zero\u200bwidth", "ogham\u1680x",
			"narrow\u202fnbsp medium\u205fmath", "vt\vff\fx", "caf\u00e9 na\u00efve", "\u00e9", "\u00ff\u00fe",
			"日本語 テキスト", "emoji 😀 x", "tab\tsep", "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a",
			"\ufeffleading zwnbsp", "\u00a1\u2027\u202a\u205e\u3001\ufefe\u1681 near misses",
		}, "\n") + "\n"},
		{"crlf.txt", "a\r\nb b\r\n\r\n  indented\r\nlone\rcr\r\nlf only\nlast\r\n"},
		{"long_lines.txt", "short\n" + strings.Repeat("x", 10000) + "\n" + wordLine(1500) + "\n" +
			strings.Repeat("y", 4096) + "\n" + strings.Repeat("z", 4097) + "\n" + strings.Repeat("é", 3000) + "\nend\n"},
		{"empty_lines.txt", "\n\n   \n\t\n\nx\n\n"},
		{"no_final_newline.txt", "no final newline\nsecond"},
		{"empty.txt", ""},
		{"bom.txt", "\ufeffbom first\nsecond\n"},
		{"random.txt", randomLines(1000)},
	}
}

func wordLine(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%d", i)
	}
	return b.String()
}

// randomLines mixes ASCII, every JavaScript whitespace rune, runes next to
// them in the encoding, Latin-1, CJK and emoji, in lines of 0 to ~700
// bytes, to cross-check the whole hashing path (word-at-a-time stripping,
// stack and pooled buffers). PCG's output is fixed, so the file is too.
func randomLines(n int) string {
	pieces := []string{
		"a", "Z", "0", "_", "{", "}", "(", ")", ";", "=", ":", "|", "\\", "\"", "é", "ñ", "ß", "中", "文", "😀", "\u0301",
		" ", " ", " ", "  ", "\t", "\v", "\f", "\r",
		"\u00a0", "\u1680", "\u2000", "\u2005", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff",
		"\u0085", "\u180e", "\u200b", "\u00a1", "\u2027", "\u202a", "\u205e", "\u3001", "\ufefe", "\u1681", "\u2030",
		"identifier", "return nil", "\tif err != nil {",
	}
	r := rand.New(rand.NewPCG(7, 420))
	var b strings.Builder
	for range n {
		size := r.IntN(40)
		if r.IntN(10) == 0 {
			size = 60 + r.IntN(300)
		}
		for range size {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

type taggedLine struct{ tag, content string }

var taggedRE = regexp.MustCompile(`^(\d+:[0-9a-f]+)\|`)

// parseTagged reads the tagged lines of a read_file result.
func parseTagged(t *testing.T, text string) (header string, lines []taggedLine) {
	t.Helper()
	header, rest, _ := strings.Cut(text, "\n")
	for _, l := range tagged(t, rest) {
		m := taggedRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a tagged line: %q", l)
		}
		lines = append(lines, taggedLine{m[1], l[len(m[0]):]})
	}
	return header, lines
}

// recordOnce re-records testdata/peer when -update-peer is given, once per
// run, before the first test that reads it.
var recordOnce sync.Once

func peerRecorded(t *testing.T) {
	if *updatePeer != "" {
		recordOnce.Do(func() { recordPeer(t, *updatePeer) })
	}
}

func TestReadTagsMatchThePeer(t *testing.T) {
	peerRecorded(t)
	s := newSession(t, "embedded")
	for _, f := range peerFiles() {
		t.Run(f.name, func(t *testing.T) {
			s.write(f.name, f.content)
			golden, err := os.ReadFile(filepath.Join("testdata", "peer", "read", f.name+".txt"))
			if err != nil {
				t.Fatalf("%v (re-record with -update-peer, see testdata/peer/README.md)", err)
			}
			peerHeader, peer := parseTagged(t, string(golden))
			ours := s.ok("read_file", map[string]any{"path": f.name})
			var mine []taggedLine
			if f.content != "" {
				_, mine = parseTagged(t, ours)
			}

			// The peer splits on "\n" alone, so a final newline gives it one
			// more, empty, line (an empty file is one empty line); we keep
			// the final newline as the last line's ending (docs/DESIGN.md §3).
			extra := 0
			if f.content == "" || strings.HasSuffix(f.content, "\n") {
				extra = 1
			}
			if len(peer) != len(mine)+extra {
				t.Fatalf("peer shows %d lines, we show %d (+%d expected)", len(peer), len(mine), extra)
			}
			if want := fmt.Sprintf("File: %s (%d lines)", f.name, len(peer)); peerHeader != want {
				t.Errorf("peer header %q, want %q", peerHeader, want)
			}
			if extra == 1 {
				if last := peer[len(peer)-1]; last.tag != fmt.Sprintf("%d:05", len(peer)) || last.content != "" {
					t.Errorf("peer's extra last line is %q|%q", last.tag, last.content)
				}
			}
			for i, m := range mine {
				p := peer[i]
				if m.tag != p.tag {
					t.Errorf("line %d: our tag %q, peer's %q (content %q)", i+1, m.tag, p.tag, p.content)
				}
				// The peer shows a CRLF line's "\r"; we show content without
				// its line ending. Lines over 4 KiB we show cut, with a marker.
				want := strings.TrimSuffix(p.content, "\r")
				if visible, _, cut := strings.Cut(m.content, " …[line cut: "); cut {
					if !strings.HasPrefix(want, visible) || !strings.HasSuffix(m.content, fmt.Sprintf("%d bytes total]", len(want))) {
						t.Errorf("line %d: cut content %.40q… does not match the peer's", i+1, m.content)
					}
				} else if m.content != want {
					t.Errorf("line %d: our content %q, peer's %q", i+1, m.content, p.content)
				}
			}
		})
	}
}

func TestStaleViewMatchesThePeer(t *testing.T) {
	peerRecorded(t)
	s := newSession(t, "embedded")
	s.write("ascii.go", peerFiles()[0].content)
	golden, err := os.ReadFile(filepath.Join("testdata", "peer", "stale", "ascii.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The peer shows the lines two before to two after the stale one,
	// marking it ">>> "; the headers' wording differs, and the peer adds a
	// quick-fix list. The peer also shows its extra empty line after the
	// final newline (line 8; see TestReadTagsMatchThePeer).
	peer := slices.DeleteFunc(viewLines(string(golden)), func(l string) bool { return l == "    8:05|" })
	// We show three on each side by default (the line before the peer's
	// first here; the file ends after line 7), and as many as an Edit's
	// context asks for.
	wider := append([]string{"    3:7d|import \"fmt\""}, peer...)
	mcpView := s.fail("edit_file", map[string]any{"path": "ascii.go", "edits": []map[string]any{staleEdit}})
	// The wider view still costs no more than the peer's, which spends its
	// bytes on a quick-fix list.
	if len(mcpView) > len(golden) {
		t.Errorf("our stale reply is %d bytes, the peer's %d", len(mcpView), len(golden))
	}
	if _, err := s.c.Read(s.ctx, &hashlinev1.ReadRequest{Path: "ascii.go"}); err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	_, err = s.c.Edit(s.ctx, &hashlinev1.EditRequest{Path: "ascii.go", Context: &two,
		Edits: []*hashlinev1.FileEdit{client.Replace("6:ab", "", "\tfmt.Println(\"bye\")")}})
	var stale client.StaleRefError
	if !errors.As(err, &stale) {
		t.Fatalf("err = %v, want a stale reference", err)
	}
	for _, tt := range []struct {
		name, view string
		want       []string
	}{
		{"edit_file", mcpView, wider},
		{"Edit with context 2", stale.Err.Message, peer},
	} {
		if got := viewLines(tt.view); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: our stale view\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

// staleEdit refers to line 6 of ascii.go with a hash it does not have (and
// no line of the file has, so the peer cannot relocate it).
var staleEdit = map[string]any{"set_line": map[string]any{"anchor": "6:ab", "new_text": "\tfmt.Println(\"bye\")"}}

func viewLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, ">>> ") || strings.HasPrefix(l, "    ") && taggedRE.MatchString(l[4:]) {
			out = append(out, l)
		}
	}
	return out
}

// recordPeer runs the peer (bun src/index.ts of mcp-hashline-edit-server in
// dir's node_modules) over MCP stdio on the inputs and rewrites the goldens.
func recordPeer(t *testing.T, dir string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	bun := filepath.Join(dir, "node_modules", ".bin", "bun")
	entry := filepath.Join(dir, "node_modules", "mcp-hashline-edit-server", "src", "index.ts")
	work := t.TempDir()
	for _, f := range peerFiles() {
		if err := os.WriteFile(filepath.Join(work, f.name), []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bun, entry)
	cmd.Dir = work
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "hashline-peer-recorder"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting the peer: %v", err)
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("peer %s: %v", tool, err)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	put := func(rel, text string) {
		p := filepath.Join("testdata", "peer", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range peerFiles() {
		put(filepath.Join("read", f.name+".txt"), call("read_file", map[string]any{"path": f.name}))
	}
	put(filepath.Join("stale", "ascii.go.txt"), call("edit_file", map[string]any{"path": "ascii.go", "edits": []map[string]any{staleEdit}}))

	// The typical edits of replysize_test.go, each on its own copy of
	// replyFile, with refs from the peer's own read_file. Our engine makes
	// the same edits, so that a case whose files differ (one of the peer's
	// heuristics rewriting an edit) is caught here.
	ours := newSession(t, "embedded")
	for _, c := range replyCases() {
		path := c.name + ".go"
		ours.write(path, replyFile())
		if err := os.WriteFile(filepath.Join(work, path), []byte(replyFile()), 0o644); err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, l := range tagged(t, call("read_file", map[string]any{"path": path})) {
			refs = append(refs, ref(l))
		}
		put(filepath.Join("edit", c.name+".txt"), call("edit_file", map[string]any{"path": path, "edits": c.edits(append([]string{""}, refs...))}))
		ours.ok("edit_file", map[string]any{"path": path, "edits": c.edits(replyRefs(t, ours, path))})
		if got, err := os.ReadFile(filepath.Join(work, path)); err != nil || string(got) != ours.read(path) {
			t.Fatalf("%s: the peer wrote %q (%v), we wrote %q", c.name, got, err, ours.read(path))
		}
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	put("tools.json", string(tools)+"\n")

	bunVersion, err := exec.Command(bun, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	info := cs.InitializeResult().ServerInfo
	put("versions.txt", fmt.Sprintf("bun %s\nmcp-hashline-edit-server %s (reports itself as %s %s)\n@modelcontextprotocol/sdk %s\nrecorded over stdio by the Go MCP SDK, protocol version %s\n",
		strings.TrimSpace(string(bunVersion)), packageVersion(t, filepath.Join(dir, "node_modules", "mcp-hashline-edit-server")),
		info.Name, info.Version, packageVersion(t, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")),
		cs.InitializeResult().ProtocolVersion))
}

var versionRE = regexp.MustCompile(`"version":\s*"([^"]+)"`)

func packageVersion(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := versionRE.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no version in %s/package.json", dir)
	}
	return string(m[1])
}
