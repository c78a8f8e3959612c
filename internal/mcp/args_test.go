package mcp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// resolved is each argument type's schema, as the tools declare it.
var resolved = map[reflect.Type]*jsonschema.Resolved{}

func resolvedFor[In any](t testing.TB) *jsonschema.Resolved {
	t.Helper()
	rt := reflect.TypeFor[In]()
	if r, ok := resolved[rt]; ok {
		return r
	}
	tool := &sdk.Tool{}
	if rt == reflect.TypeFor[editArgs]() {
		tool = editTool()
	}
	r := resolveSchema[In](tool)
	resolved[rt] = r
	return r
}

// agrees checks decodeArgs against the validator's path alone: the same
// value or an error from both, and, when the fast path takes the arguments,
// that the schema accepts them. It reports whether the fast path took them.
func agrees[In any](t *testing.T, raw string, complete func(*In) bool) (fast bool) {
	t.Helper()
	r := resolvedFor[In](t)
	slow, slowErr := decodeValidated[In](json.RawMessage(raw), r)
	got, err := decodeArgs(json.RawMessage(raw), r, complete)
	// (Error texts may list keys in another order: the validator ranges
	// over a map.)
	if (err == nil) != (slowErr == nil) {
		t.Fatalf("%T %s: error %v, the validator's %v", got, raw, err, slowErr)
	}
	// editArgs.items is what the validator's path saw, not an argument.
	if e, ok := any(&slow).(*editArgs); ok {
		e.items = nil
	}
	if e, ok := any(&got).(*editArgs); ok {
		e.items = nil
	}
	if err == nil && !reflect.DeepEqual(got, slow) {
		t.Fatalf("%T %s: decoded %+v, the validator's path %+v", got, raw, got, slow)
	}
	_, fast = decodeFast(json.RawMessage(raw), complete)
	return fast
}

func TestDecodeArgs(t *testing.T) {
	cases := []struct {
		name, raw string
		fast      bool
		check     func(*testing.T, string) bool
	}{
		{"read: path", `{"path":"a.go"}`, true, read},
		{"read: every argument", `{"path":"a.go","offset":3,"limit":10,"plain":true}`, true, read},
		{"read: no arguments", ``, false, read},
		{"read: empty object", `{}`, false, read},
		{"read: null path", `{"path":null}`, false, read},
		{"read: unknown key", `{"path":"a.go","bogus":1}`, false, read},
		{"read: key in other case", `{"PATH":"a.go"}`, false, read},
		{"read: wrong type", `{"path":5}`, false, read},
		{"read: fraction for an integer", `{"path":"a","limit":2.5}`, false, read},
		{"read: integer written as 2.0", `{"path":"a","limit":2.0}`, false, read},
		{"read: trailing data", `{"path":"a"} {}`, false, read},
		{"read: not an object", `["a"]`, false, read},
		{"read: null in a string", `{"path":"null.go"}`, false, read},
		{"read: exponent for an integer", `{"path":"a","limit":1e2}`, false, read},
		{"read: a key twice", `{"path":"a","path":"b"}`, false, read},
		{"read: an escaped key", `{"p\u0061th":"a"}`, false, read},
		{"edit: one set_line", `{"path":"a","edits":[{"set_line":{"anchor":"1:ab","new_text":"x"}}]}`, true, edit},
		{"edit: every operation", `{"path":"a","edits":[
			{"set_line":{"anchor":"1:ab","new_text":"x"}},
			{"replace_lines":{"start_anchor":"2:ab","end_anchor":"3:cd","new_text":"y"}},
			{"insert_after":{"anchor":"4:ab","text":"z"}},
			{"replace":{"old_text":"o","new_text":"n","all":true}},
			{"insert_before":{"anchor":"5:ab","text":"w"}},
			{"delete":{"start_anchor":"6:ab"}},
			{"append":{"text":"t"}},
			{"prepend":{"text":"p"}}]}`, true, edit},
		{"edit: deleting by an empty new_text", `{"path":"a","edits":[{"set_line":{"anchor":"1:ab","new_text":""}}]}`, false, edit},
		{"edit: new_text missing", `{"path":"a","edits":[{"set_line":{"anchor":"1:ab"}}]}`, false, edit},
		{"edit: unknown key in an operation", `{"path":"a","edits":[{"set_line":{"anchor":"1:ab","new_text":"x","z":1}}]}`, false, edit},
		{"edit: unknown key in an item", `{"path":"a","edits":[{"old_text":"a","new_text":"b"}]}`, false, edit},
		{"edit: two operations in an item", `{"path":"a","edits":[{"append":{"text":"x"},"prepend":{"text":"y"}}]}`, false, edit},
		{"edit: null operation", `{"path":"a","edits":[{"set_line":null,"append":{"text":"x"}}]}`, false, edit},
		{"edit: no edits", `{"path":"a","edits":[]}`, false, edit},
		{"edit: an operation twice in an item", `{"path":"a","edits":[{"replace":{"old_text":"a","new_text":"b","all":true},"replace":{"old_text":"c","new_text":"d"}}]}`, false, edit},
		{"edit: set_line twice, the last incomplete", `{"path":"a","edits":[{"set_line":{"anchor":"1:ab","new_text":"x"},"set_line":{"anchor":"2:cd"}}]}`, false, edit},
		{"edit: edits twice", `{"path":"a","edits":[{"append":{"text":"x"}}],"edits":[{"prepend":{"text":"y"}}]}`, false, edit},
		{"edit: the same key in two objects", `{"path":"a","edits":[{"append":{"text":"x"}},{"append":{"text":"y"}}]}`, true, edit},
		{"edit: edits not a list", `{"path":"a","edits":"x"}`, false, edit},
		{"write: content", `{"path":"a","content":"x\n"}`, true, write},
		{"write: empty content", `{"path":"a","content":""}`, false, write},
		{"write: content missing", `{"path":"a"}`, false, write},
		{"grep: every argument", `{"pattern":"a+","path":"d","glob":"*.go","type":"go","i":true,"pre":1,"post":2,"limit":5}`, true, grep},
		{"grep: pattern missing", `{"path":"d"}`, false, grep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if fast := c.check(t, c.raw); fast != c.fast {
				t.Errorf("fast path taken: %v, want %v", fast, c.fast)
			}
		})
	}
}

// TestDecodeArgsRepeatedKeys: a repeated key keeps its last value, as the
// SDK's decode into a map does; the two values are not merged.
func TestDecodeArgsRepeatedKeys(t *testing.T) {
	raw := `{"path":"a","edits":[{"replace":{"old_text":"a","new_text":"b","all":true},"replace":{"old_text":"c","new_text":"d"}}]}`
	got, err := decodeArgs(json.RawMessage(raw), resolvedFor[editArgs](t), (*editArgs).complete)
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Edits[0].Replace; r == nil || *r != (replaceOp{OldText: "c", NewText: "d"}) {
		t.Fatalf("replace = %+v, want the last one alone (all false)", r)
	}
	raw = `{"path":"a","limit":2.0,"offset":1e1}`
	a, err := decodeArgs(json.RawMessage(raw), resolvedFor[readArgs](t), (*readArgs).complete)
	if err != nil || a.Limit != 2 || a.Offset != 10 {
		t.Fatalf("%s: %+v, %v; want limit 2 and offset 10, as the SDK took them", raw, a, err)
	}
}

func TestPlainKeys(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`: true,
		`{"a":"a","b":"a"}`:                         true,
		`["a","a",{"a":1}]`:                         true,
		`{"a":1,"a":2}`:                             false,
		`{"b":{"a":1,"a":2}}`:                       false,
		`{"c":[{"a":1,"a":2}]}`:                     false,
		`{"a\u0062":1}`:                             false,
		`{"a":"x\"y","b":1}`:                        true,
	} {
		if got := plainKeys([]byte(raw)); got != want {
			t.Errorf("plainKeys(%s) = %v, want %v", raw, got, want)
		}
	}
}

func read(t *testing.T, raw string) bool  { return agrees(t, raw, (*readArgs).complete) }
func edit(t *testing.T, raw string) bool  { return agrees(t, raw, (*editArgs).complete) }
func write(t *testing.T, raw string) bool { return agrees(t, raw, (*writeArgs).complete) }
func grep(t *testing.T, raw string) bool  { return agrees(t, raw, (*grepArgs).complete) }

// FuzzDecodeArgs: whatever the arguments, every tool decodes them as the
// validator's path would, and the fast path takes nothing the schema
// refuses.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{"path":"a.go","offset":3,"limit":10,"plain":true}`,
		`{"path":"a","edits":[{"set_line":{"anchor":"1:ab","new_text":"x"}},{"replace":{"old_text":"o","new_text":"n","all":true}}]}`,
		`{"path":"a","edits":[{"delete":{"start_anchor":"6:ab","end_anchor":"7:cd"}},{"append":{"text":"t"}}]}`,
		`{"path":"a","content":"x\n"}`,
		`{"pattern":"a+","glob":"*.go","i":true,"pre":1,"limit":5}`,
		`{"path":"a","edits":[{"set_line":{"anchor":"1:ab","new_text":"x","z":1}}]}`,
		`{"path":"a","limit":1e2}`,
		`{"path":"\u0061","limit":-0}`,
		`{"path":"a","edits":[{"replace":{"old_text":"a","new_text":"b","all":true},"replace":{"old_text":"c","new_text":"d"}}]}`,
		`{"path":"a","path":"b","limit":2.0}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		read(t, raw)
		edit(t, raw)
		write(t, raw)
		grep(t, raw)
	})
}
