package mcp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a model pays for in bytes: the tool list it is given in every
// session, and every reply. These tests hold ours below the published
// hashline server's (the peer), recorded in testdata/peer for the same
// inputs (see its README); run with -v for the figures.

// replyFile is Go source of eleven small functions, what an agent
// typically edits: statements, nested blocks, blank lines, comments.
func replyFile() string {
	var b strings.Builder
	for i := range 11 {
		fmt.Fprintf(&b, `// f%[1]d does step %[1]d of the pipeline.
func f%[1]d(ctx context.Context, in []byte) (int, error) {
	if len(in) == 0 {
		return 0, errEmpty
	}
	n, err := process(ctx, in[%[2]d:])
	if err != nil {
		return 0, fmt.Errorf("f%[1]d: %%w", err)
	}
	return n + %[1]d, nil
}

`, i, i%7)
	}
	return b.String()
}

// Line numbers in replyFile of function k's lines.
func fnLine(k, offset int) int { return 12*k + offset }

const (
	lineIf     = 3  // if len(in) == 0 {
	lineCall   = 6  // n, err := process(...)
	lineReturn = 10 // return n + k, nil
)

// replyCase is an edit_file call on its own copy of replyFile.
type replyCase struct {
	kind, name string
	edits      func(refs []string) []map[string]any // refs[n] is line n's ref
}

// replyCases are typical edits, each kind at a few places: one line
// replaced, a batch of ten one-line edits, two lines inserted, a three-line
// block replaced by four lines, and one deleted. Only the operations the
// peer has are used (set_line, replace_lines, insert_after).
func replyCases() []replyCase {
	var cs []replyCase
	for _, k := range []int{1, 5, 9} {
		cs = append(cs, replyCase{"one line", fmt.Sprintf("line_f%d", k), func(r []string) []map[string]any {
			return []map[string]any{{"set_line": map[string]any{"anchor": r[fnLine(k, lineReturn)], "new_text": fmt.Sprintf("\treturn n * %d, nil", k+1)}}}
		}})
		cs = append(cs, replyCase{"insert", fmt.Sprintf("insert_f%d", k), func(r []string) []map[string]any {
			return []map[string]any{{"insert_after": map[string]any{"anchor": r[fnLine(k, lineCall)], "text": "\t// process may return a short count.\n\tcalls.Add(1)"}}}
		}})
		cs = append(cs, replyCase{"block", fmt.Sprintf("block_f%d", k), func(r []string) []map[string]any {
			return []map[string]any{{"replace_lines": map[string]any{"start_anchor": r[fnLine(k, lineIf)], "end_anchor": r[fnLine(k, lineIf+2)],
				"new_text": "\tif len(in) < minLen {\n\t\tlog.Printf(\"short input: %d bytes\", len(in))\n\t\treturn 0, errShort\n\t}"}}}
		}})
		cs = append(cs, replyCase{"delete", fmt.Sprintf("delete_f%d", k), func(r []string) []map[string]any {
			return []map[string]any{{"replace_lines": map[string]any{"start_anchor": r[fnLine(k, lineIf)], "end_anchor": r[fnLine(k, lineIf+2)], "new_text": ""}}}
		}})
	}
	for _, skip := range []int{0, 5, 10} {
		cs = append(cs, replyCase{"10-edit batch", fmt.Sprintf("batch_skip%d", skip), func(r []string) []map[string]any {
			var es []map[string]any
			for k := range 11 {
				if k != skip {
					es = append(es, map[string]any{"set_line": map[string]any{"anchor": r[fnLine(k, lineReturn)], "new_text": fmt.Sprintf("\treturn n * %d, nil", k+1)}})
				}
			}
			return es
		}})
	}
	return cs
}

// replyRefs are the refs of replyFile's lines, indexed by line number.
func replyRefs(t testing.TB, s *session, path string) []string {
	t.Helper()
	refs := []string{""}
	for _, l := range tagged(t, s.ok("read_file", map[string]any{"path": path})) {
		refs = append(refs, ref(l))
	}
	return refs
}

func median(xs []int) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// listTools is the tool list as an MCP client holds it, serialised again:
// the same bytes for both servers' lists whatever their own JSON writers
// do with spacing, key order or escapes.
func listTools(t testing.TB, cs *sdk.ClientSession) []byte {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func peerGolden(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "peer", rel))
	if err != nil {
		t.Fatalf("%v (re-record with -update-peer, see testdata/peer/README.md)", err)
	}
	return string(b)
}

// TestEditRepliesAreSmallerThanThePeers: for every typical edit our
// edit_file reply, which carries the fresh refs of every line it shows,
// is smaller than the peer's for the same edit, and so is the median of
// each kind.
func TestEditRepliesAreSmallerThanThePeers(t *testing.T) {
	peerRecorded(t)
	s := newSession(t, "embedded")
	ours := map[string][]int{}
	peer := map[string][]int{}
	var kinds []string
	for _, c := range replyCases() {
		path := c.name + ".go"
		s.write(path, replyFile())
		got := s.ok("edit_file", map[string]any{"path": path, "edits": c.edits(replyRefs(t, s, path))})
		p := peerGolden(t, filepath.Join("edit", c.name+".txt"))
		if len(got) >= len(p) {
			t.Errorf("%s: our reply is %d bytes, the peer's %d\n%s\npeer's:\n%s", c.name, len(got), len(p), got, p)
		}
		if !slices.Contains(kinds, c.kind) {
			kinds = append(kinds, c.kind)
		}
		ours[c.kind] = append(ours[c.kind], len(got))
		peer[c.kind] = append(peer[c.kind], len(p))
	}
	for _, k := range kinds {
		o, p := median(ours[k]), median(peer[k])
		t.Logf("edit_file, %-13s median bytes: ours %5d, peer %5d (%.2fx)", k, o, p, float64(o)/float64(p))
		if o >= p {
			t.Errorf("%s: our median reply is %d bytes, the peer's %d", k, o, p)
		}
	}
}

// repairsReserve is room kept in the tool list beyond what it says now;
// the paragraph on edit repairs (repairs_desc.go) is part of edit_file's
// description already, so it is measured, not reserved.
const repairsReserve = 0

// TestToolListIsSmallerThanThePeers: the tool list, which a model is
// given in every session, teaches our extra operations (insert_before,
// delete, append, prepend) and the reply, and is still smaller than the
// peer's, with room for the repairs paragraph.
func TestToolListIsSmallerThanThePeers(t *testing.T) {
	peerRecorded(t)
	s := newSession(t, "embedded")
	var list json.RawMessage
	if err := json.Unmarshal([]byte(peerGolden(t, "tools.json")), &list); err != nil {
		t.Fatal(err)
	}
	peerList, err := json.Marshal(list) // compact, as listTools gives ours
	if err != nil {
		t.Fatal(err)
	}
	ours := listTools(t, s.cs)
	var texts strings.Builder // what the list says, unescaped
	tools, err := s.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		texts.WriteString(tool.Description)
	}
	t.Logf("tools/list bytes: ours %d (+%d reserved), peer %d (%.2fx)", len(ours), repairsReserve, len(peerList), float64(len(ours)+repairsReserve)/float64(len(peerList)))
	if len(ours)+repairsReserve >= len(peerList) {
		t.Errorf("our tool list is %d bytes, +%d reserved for repairs: not below the peer's %d", len(ours), repairsReserve, len(peerList))
	}
	for _, op := range []string{"insert_before", "delete", "append", "prepend", "replace", "end_anchor?", ">>>", `"+"`, "moved", "grep"} {
		if !strings.Contains(texts.String(), op) {
			t.Errorf("the tool list does not mention %s", op)
		}
	}
}

// TestReadRepliesAreNoLargerThanThePeers: read_file's reply for each
// recorded file is at most the peer's size: the same header and tags, one
// line fewer for a final newline, and long lines cut.
func TestReadRepliesAreNoLargerThanThePeers(t *testing.T) {
	peerRecorded(t)
	s := newSession(t, "embedded")
	for _, f := range peerFiles() {
		s.write(f.name, f.content)
		ours := s.ok("read_file", map[string]any{"path": f.name})
		peer := peerGolden(t, filepath.Join("read", f.name+".txt"))
		if len(ours) > len(peer) {
			t.Errorf("%s: our reply is %d bytes, the peer's %d", f.name, len(ours), len(peer))
		}
	}
}
