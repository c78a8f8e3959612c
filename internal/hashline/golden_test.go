package hashline

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected sections of testdata/*.txtar")

// A golden file is a txtar archive. Its comment describes the case; the
// inputs are
//
//	input (or input.q, a Go-quoted string for CR, BOM or no final newline)
//	edits.json   the batch; refs may be "@N" (line N with its hash) or "!N"
//	             (line N with a wrong hash)
//	options.json optional {"context": 3, "hashLen": 2, "maxLineBytes": 0,
//	             "strict": false}
//
// and the expected results, rewritten by -update, are output (or output.q),
// diff (or diff.q), tagged (the tagged diff), shifts ("FROM-TO +BY" a line),
// windows, replaced, warnings and, when the texts were repaired, repairs
// (KIND edit N line L: detail) for a batch that applies,
// or error (the reason, then the message) for one that is refused.

type goldenEdit struct {
	Op      string `json:"op"`
	Start   string `json:"start,omitempty"`
	End     string `json:"end,omitempty"`
	Anchor  string `json:"anchor,omitempty"`
	Text    string `json:"text,omitempty"`
	OldText string `json:"oldText,omitempty"`
	NewText string `json:"newText,omitempty"`
	All     bool   `json:"all,omitempty"`
}

type goldenOptions struct {
	Context      *int `json:"context"`
	HashLen      int  `json:"hashLen"`
	MaxLineBytes int  `json:"maxLineBytes"`
	Strict       bool `json:"strict"`
}

var inputSections = map[string]bool{"input": true, "input.q": true, "edits.json": true, "options.json": true}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("found %d golden files, want at least 15", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := runGolden(t, a)
			if *update {
				out := &txtar.Archive{Comment: a.Comment}
				for _, f := range a.Files {
					if inputSections[f.Name] {
						out.Files = append(out.Files, f)
					}
				}
				out.Files = append(out.Files, got...)
				if err := os.WriteFile(file, txtar.Format(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := map[string]string{}
			for _, f := range a.Files {
				if !inputSections[f.Name] {
					want[f.Name] = string(f.Data)
				}
			}
			for _, f := range got {
				w, ok := want[f.Name]
				if !ok {
					t.Errorf("missing section %q; got:\n%s", f.Name, f.Data)
				} else if w != string(f.Data) {
					t.Errorf("section %q:\ngot:\n%s\nwant:\n%s", f.Name, f.Data, w)
				}
				delete(want, f.Name)
			}
			for name := range want {
				t.Errorf("unexpected section %q", name)
			}
		})
	}
}

// runGolden applies the archive's batch and renders the expected sections.
func runGolden(t *testing.T, a *txtar.Archive) []txtar.File {
	t.Helper()
	sections := map[string][]byte{}
	for _, f := range a.Files {
		sections[f.Name] = f.Data
	}
	var in string
	if q, ok := sections["input.q"]; ok {
		s, err := strconv.Unquote(strings.TrimSpace(string(q)))
		if err != nil {
			t.Fatalf("input.q: %v", err)
		}
		in = s
	} else {
		in = string(sections["input"])
	}
	var ges []goldenEdit
	if err := json.Unmarshal(sections["edits.json"], &ges); err != nil {
		t.Fatalf("edits.json: %v", err)
	}
	var o goldenOptions
	if b, ok := sections["options.json"]; ok {
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("options.json: %v", err)
		}
	}
	h := Hasher{}
	if o.HashLen != 0 {
		var err error
		if h, err = NewHasher(o.HashLen); err != nil {
			t.Fatal(err)
		}
	}
	opts := ApplyOptions{Hasher: h, Context: 3, OldLabel: "a/file", NewLabel: "b/file", MaxLineBytes: o.MaxLineBytes}
	if o.Context != nil {
		opts.Context = *o.Context
	}
	d := ParseDocument([]byte(in))
	var edits []Edit
	for _, ge := range ges {
		op, err := ParseOp(ge.Op)
		if ge.Op == "" {
			op, err = 0, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		start := ge.Start
		if ge.Anchor != "" {
			start = ge.Anchor
		}
		edits = append(edits, Edit{Op: op, Start: start, End: ge.End, Text: ge.Text, OldText: ge.OldText, NewText: ge.NewText, All: ge.All})
	}
	res, err := ApplyEdits(d, resolveEdits(d, h, edits), opts, Strict(o.Strict))
	if err != nil {
		var be *BatchError
		if !errors.As(err, &be) {
			t.Fatalf("ApplyEdits: %v", err)
		}
		return []txtar.File{{Name: "error", Data: []byte(fmt.Sprintf("reason: %s\n%s\n", be.Reason(), be))}}
	}
	checkDiff(t, d.Text(), res.Doc.Text(), res.Diff)
	checkTagged(t, d, res, opts)
	var files []txtar.File
	files = append(files, section("output", string(res.Doc.Bytes())))
	files = append(files, section("diff", res.Diff))
	files = append(files, section("tagged", res.TaggedDiff+"\n"))
	var sh bytes.Buffer
	for _, s := range res.Shifts {
		fmt.Fprintf(&sh, "%d-%d %+d\n", s.From, s.To, s.By)
	}
	files = append(files, section("shifts", sh.String()))
	var w bytes.Buffer
	for _, win := range res.Windows {
		fmt.Fprintf(&w, "@@ %d-%d\n", win.Start, win.End)
		for _, l := range win.Lines {
			fmt.Fprintf(&w, "%s\n", l)
		}
	}
	files = append(files, section("windows", w.String()))
	var r bytes.Buffer
	for _, l := range res.Replaced {
		fmt.Fprintf(&r, "%s\n", l)
	}
	files = append(files, section("replaced", r.String()))
	var ws bytes.Buffer
	for _, s := range res.Warnings {
		fmt.Fprintf(&ws, "%s\n", s)
	}
	files = append(files, section("warnings", ws.String()))
	if len(res.Repairs) > 0 {
		var rs bytes.Buffer
		for _, r := range res.Repairs {
			fmt.Fprintf(&rs, "%s edit %d line %d: %s\n", r.Kind, r.EditIndex, r.Line, r.Detail)
		}
		files = append(files, section("repairs", rs.String()))
	}
	return files
}

// section stores s raw when txtar can hold it readably, else Go-quoted under
// name+".q".
func section(name, s string) txtar.File {
	if s == "" || strings.HasSuffix(s, "\n") && !strings.ContainsAny(s, "\r\ufeff") {
		return txtar.File{Name: name, Data: []byte(s)}
	}
	return txtar.File{Name: name + ".q", Data: []byte(strconv.Quote(s) + "\n")}
}
