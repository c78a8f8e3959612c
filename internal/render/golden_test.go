package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	hashlinev1 "github.com/hashline/hashline/gen/go/hashline/v1"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txtar's outputs from the renderings")

// The golden files, testdata/KIND.txtar, hold inputs NAME.json (the
// response as protojson; for grep, status and the refusals an object of
// the arguments) and, for each variant of the kind, the output
// NAME.VARIANT followed by one newline that is not part of it (a txtar
// file ends in a newline; MCP's texts do not). The TypeScript client's
// tests (client/ts/test/format.test.ts) render the same inputs and
// compare with the same outputs, for the renderings it has.

// A variant renders a decoded input one way.
type variant struct {
	name   string
	render func(t *testing.T, in []byte) string
}

// kinds lists every golden file and its variants; every input must have
// an output for each (go test -update writes them).
var kinds = map[string][]variant{
	"read": {
		{"cli", func(t *testing.T, in []byte) string {
			return Read(decode(t, in, &hashlinev1.ReadResponse{}), Options{})
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			return Read(decode(t, in, &hashlinev1.ReadResponse{}), Options{Face: MCP})
		}},
		{"mcp-plain", func(t *testing.T, in []byte) string {
			return Read(decode(t, in, &hashlinev1.ReadResponse{}), Options{Face: MCP, Plain: true})
		}},
	},
	"edit": {
		{"cli", func(t *testing.T, in []byte) string {
			return Edit(decode(t, in, &hashlinev1.EditResponse{}), Options{})
		}},
		{"cli-diff", func(t *testing.T, in []byte) string {
			return Edit(decode(t, in, &hashlinev1.EditResponse{}), Options{Diff: true})
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			return Edit(decode(t, in, &hashlinev1.EditResponse{}), Options{Face: MCP})
		}},
	},
	"write": {
		{"cli", func(t *testing.T, in []byte) string {
			return Write(decode(t, in, &hashlinev1.WriteResponse{}), Options{})
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			return Write(decode(t, in, &hashlinev1.WriteResponse{}), Options{Face: MCP})
		}},
	},
	"delete": {
		{"cli", func(t *testing.T, in []byte) string {
			return Delete(decode(t, in, &hashlinev1.DeleteResponse{}), Options{})
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			return Delete(decode(t, in, &hashlinev1.DeleteResponse{}), Options{Face: MCP})
		}},
	},
	"move": {
		{"cli", func(t *testing.T, in []byte) string {
			return Move(decode(t, in, &hashlinev1.MoveResponse{}), Options{})
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			return Move(decode(t, in, &hashlinev1.MoveResponse{}), Options{Face: MCP})
		}},
	},
	"apply": {
		{"cli", func(t *testing.T, in []byte) string {
			return Apply(decode(t, in, &hashlinev1.ApplyResponse{}), Options{})
		}},
		{"cli-diff", func(t *testing.T, in []byte) string {
			return Apply(decode(t, in, &hashlinev1.ApplyResponse{}), Options{Diff: true})
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			return Apply(decode(t, in, &hashlinev1.ApplyResponse{}), Options{Face: MCP})
		}},
	},
	"revert": {
		{"cli", func(t *testing.T, in []byte) string {
			return Revert(decode(t, in, &hashlinev1.RevertResponse{}), Options{})
		}},
		{"client", func(t *testing.T, in []byte) string {
			return Revert(decode(t, in, &hashlinev1.RevertResponse{}), Options{Face: Client})
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			return Revert(decode(t, in, &hashlinev1.RevertResponse{}), Options{Face: MCP})
		}},
	},
	"grep": {
		{"cli", func(t *testing.T, in []byte) string { f, s := decodeGrep(t, in); return Grep(f, s, Options{}) }},
		{"mcp", func(t *testing.T, in []byte) string { f, s := decodeGrep(t, in); return Grep(f, s, Options{Face: MCP}) }},
		{"mcp-context", func(t *testing.T, in []byte) string {
			f, s := decodeGrep(t, in)
			return Grep(f, s, Options{Face: MCP, Context: true})
		}},
	},
	"list": {
		{"cli", func(t *testing.T, in []byte) string {
			return List(decode(t, in, &hashlinev1.ListResponse{}), Options{})
		}},
		{"cli-long", func(t *testing.T, in []byte) string {
			return List(decode(t, in, &hashlinev1.ListResponse{}), Options{Size: true, Versions: true})
		}},
		{"client", func(t *testing.T, in []byte) string {
			return List(decode(t, in, &hashlinev1.ListResponse{}), Options{Face: Client})
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			return List(decode(t, in, &hashlinev1.ListResponse{}), Options{Face: MCP})
		}},
	},
	"status": {
		{"cli", func(t *testing.T, in []byte) string {
			var a struct {
				Where  string
				Status json.RawMessage
			}
			decodeArgs(t, in, &a)
			return Status(a.Where, decode(t, a.Status, &hashlinev1.StatusResponse{}))
		}},
	},
	"history": {
		{"cli", func(t *testing.T, in []byte) string {
			return History(decode(t, in, &hashlinev1.HistoryResponse{}), Options{})
		}},
		{"cli-diff", func(t *testing.T, in []byte) string {
			return History(decode(t, in, &hashlinev1.HistoryResponse{}), Options{Diff: true})
		}},
		{"client", func(t *testing.T, in []byte) string {
			return History(decode(t, in, &hashlinev1.HistoryResponse{}), Options{Face: Client})
		}},
	},
	"blame": {
		{"cli", func(t *testing.T, in []byte) string {
			return Blame(decode(t, in, &hashlinev1.BlameResponse{}), Options{})
		}},
		{"client", func(t *testing.T, in []byte) string {
			return Blame(decode(t, in, &hashlinev1.BlameResponse{}), Options{Face: Client})
		}},
	},
	"stale": {
		{"cli", func(t *testing.T, in []byte) string {
			a := decodeStale(t, in)
			return Stale(a.Message, a.CurrentVersion, CLI)
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			a := decodeStale(t, in)
			return Stale(a.Message, a.CurrentVersion, MCP)
		}},
	},
	"refused": {
		{"cli", func(t *testing.T, in []byte) string {
			a := decodeRefused(t, in)
			return Refused(a.Doing, a.Path, a.Why, a.Message, CLI)
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			a := decodeRefused(t, in)
			return Refused(a.Doing, a.Path, a.Why, a.Message, MCP)
		}},
	},
	"changes": {
		{"cli", func(t *testing.T, in []byte) string {
			c, s, n := decodeChanges(t, in)
			return RefusedChanges(c, s, n, CLI)
		}},
		{"mcp", func(t *testing.T, in []byte) string {
			c, s, n := decodeChanges(t, in)
			return RefusedChanges(c, s, n, MCP)
		}},
	},
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(kinds) {
		t.Errorf("testdata has %d golden files, the test knows %d kinds", len(files), len(kinds))
	}
	for kind, variants := range kinds {
		t.Run(kind, func(t *testing.T) {
			file := filepath.Join("testdata", kind+".txtar")
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			outputs := map[string][]byte{}
			var inputs []txtar.File
			for _, f := range a.Files {
				if strings.HasSuffix(f.Name, ".json") {
					inputs = append(inputs, f)
				} else {
					outputs[f.Name] = f.Data
				}
			}
			if len(inputs) == 0 {
				t.Fatalf("%s holds no input", file)
			}
			fresh := &txtar.Archive{Comment: a.Comment}
			for _, in := range inputs {
				name := strings.TrimSuffix(in.Name, ".json")
				fresh.Files = append(fresh.Files, in)
				for _, v := range variants {
					out := name + "." + v.name
					var got string
					t.Run(name+"/"+v.name, func(t *testing.T) {
						got = v.render(t, in.Data)
						want, ok := outputs[out]
						delete(outputs, out)
						switch {
						case *update:
						case !ok:
							t.Errorf("%s has no %s; go test -update writes it", file, out)
						case got+"\n" != string(want):
							t.Errorf("%s:\ngot\n%s\nwant\n%s", out, got, strings.TrimSuffix(string(want), "\n"))
						}
					})
					fresh.Files = append(fresh.Files, txtar.File{Name: out, Data: []byte(got + "\n")})
				}
			}
			if *update {
				if err := os.WriteFile(file, txtar.Format(fresh), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for out := range outputs {
				t.Errorf("%s holds %s, which no input and variant renders", file, out)
			}
		})
	}
}

// TestCLIAndClientFacesAgree: the Go client's Format functions print what
// the CLI prints, except for the end of a listing (ListEnd).
func TestCLIAndClientFacesAgree(t *testing.T) {
	for _, kind := range []string{"read", "edit", "write", "delete", "move", "apply", "grep"} {
		a, err := txtar.ParseFile(filepath.Join("testdata", kind+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if !strings.HasSuffix(f.Name, ".json") {
				continue
			}
			var cli, client string
			switch kind {
			case "read":
				r := decode(t, f.Data, &hashlinev1.ReadResponse{})
				cli, client = Read(r, Options{}), Read(r, Options{Face: Client})
			case "edit":
				r := decode(t, f.Data, &hashlinev1.EditResponse{})
				cli, client = Edit(r, Options{Diff: true}), Edit(r, Options{Face: Client, Diff: true})
			case "write":
				r := decode(t, f.Data, &hashlinev1.WriteResponse{})
				cli, client = Write(r, Options{}), Write(r, Options{Face: Client})
			case "delete":
				r := decode(t, f.Data, &hashlinev1.DeleteResponse{})
				cli, client = Delete(r, Options{}), Delete(r, Options{Face: Client})
			case "move":
				r := decode(t, f.Data, &hashlinev1.MoveResponse{})
				cli, client = Move(r, Options{}), Move(r, Options{Face: Client})
			case "apply":
				r := decode(t, f.Data, &hashlinev1.ApplyResponse{})
				cli, client = Apply(r, Options{Diff: true}), Apply(r, Options{Face: Client, Diff: true})
			case "grep":
				fs, s := decodeGrep(t, f.Data)
				cli, client = Grep(fs, s, Options{}), Grep(fs, s, Options{Face: Client})
			}
			if cli != client {
				t.Errorf("%s %s: the CLI prints\n%s\nthe client\n%s", kind, f.Name, cli, client)
			}
		}
	}
}

func decode[M proto.Message](t *testing.T, data []byte, m M) M {
	t.Helper()
	if err := protojson.Unmarshal(data, m); err != nil {
		t.Fatalf("decoding %T: %v\n%s", m, err, data)
	}
	return m
}

// decodeArgs decodes an input that is not one message, refusing unknown
// fields as protojson does.
func decodeArgs(t *testing.T, data []byte, v any) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		t.Fatalf("decoding %T: %v\n%s", v, err, data)
	}
}

func decodeGrep(t *testing.T, data []byte) ([]*hashlinev1.GrepFile, *hashlinev1.GrepSummary) {
	var a struct {
		Files   []json.RawMessage
		Summary json.RawMessage
	}
	decodeArgs(t, data, &a)
	files := make([]*hashlinev1.GrepFile, len(a.Files))
	for i, f := range a.Files {
		files[i] = decode(t, f, &hashlinev1.GrepFile{})
	}
	return files, decode(t, a.Summary, &hashlinev1.GrepSummary{})
}

type staleArgs struct{ Message, CurrentVersion string }

func decodeStale(t *testing.T, data []byte) staleArgs {
	var a staleArgs
	decodeArgs(t, data, &a)
	return a
}

type refusedArgs struct{ Doing, Path, Why, Message string }

func decodeRefused(t *testing.T, data []byte) refusedArgs {
	var a refusedArgs
	decodeArgs(t, data, &a)
	return a
}

func decodeChanges(t *testing.T, data []byte) ([]*hashlinev1.ChangeError, []*hashlinev1.StaleRef, int) {
	var a struct {
		Changes, Stale []json.RawMessage
		Total          int
	}
	decodeArgs(t, data, &a)
	changes := make([]*hashlinev1.ChangeError, len(a.Changes))
	for i, c := range a.Changes {
		changes[i] = decode(t, c, &hashlinev1.ChangeError{})
	}
	stale := make([]*hashlinev1.StaleRef, len(a.Stale))
	for i, s := range a.Stale {
		stale[i] = decode(t, s, &hashlinev1.StaleRef{})
	}
	return changes, stale, a.Total
}
