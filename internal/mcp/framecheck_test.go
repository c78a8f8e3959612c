package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// frameSeeds are the fuzz corpus's seeds: good messages and each kind of
// bad frame.
var frameSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"read_file","arguments":{"path":"f.go"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":3,"result":{}}`,
	`  {"jsonrpc":"2.0","id":1,"method":"x"}` + "\r",
	``,
	" \t\r",
	`{"jsonrpc":"2.0","id":1,"method":"tools/ca`,
	`hello`,
	`[]`,
	`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`,
	`"tools/list"`,
	`42`,
	`null`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`,
	`{"jsonrpc":"1.0","id":8,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":"nine","method":9}`,
	`{"jsonrpc":"2.0","id":1,"error":5}`,
	`{"jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x"} {}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"a` + "\xff" + `"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"[[[{{\"\\"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
}

// FuzzCheckFrame checks checkFrame's promise: what it passes is a message
// the SDK decodes, from a valid, shallow enough, UTF-8 JSON object; what it
// refuses gets a JSON-RPC error reply that is itself valid, with the code
// that fits and an id that is null, a string or a number.
func FuzzCheckFrame(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, bad := checkFrame(line)
		blank := len(bytes.TrimSpace(line)) == 0
		valid := json.Valid(line) && utf8.Valid(line) && !tooDeep(line, maxDepth)
		switch {
		case msg == nil && bad == nil:
			if !blank {
				t.Fatalf("%q: neither passed nor refused", line)
			}
		case msg != nil && bad != nil:
			t.Fatalf("%q: both passed and refused", line)
		case msg != nil:
			if !valid || bytes.TrimSpace(line)[0] != '{' {
				t.Fatalf("%q: passed, but not a valid JSON object within the depth", line)
			}
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				t.Fatalf("%q: passed, but the SDK does not decode it: %v", line, err)
			}
		default:
			checkReply(t, line, bad, valid)
		}
		// Nothing a frame holds makes the refusal of its head fail.
		checkReply(t, line, tooLarge(line, MaxFrameBytes), valid)
	})
}

func checkReply(t *testing.T, line []byte, bad *frameError, valid bool) {
	t.Helper()
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	reply := bad.reply()
	if err := json.Unmarshal(reply, &r); err != nil || bytes.ContainsRune(reply, '\n') {
		t.Fatalf("%q: the reply %q is not one line of JSON: %v", line, reply, err)
	}
	if r.JSONRPC != "2.0" || r.Error.Message == "" {
		t.Fatalf("%q: reply %s", line, reply)
	}
	if id := string(r.ID); id != "null" && !strings.HasPrefix(id, `"`) && strings.Trim(id[:1], "-0123456789") != "" {
		t.Fatalf("%q: the reply's id %s is neither null, a string nor a number", line, r.ID)
	}
	switch r.Error.Code {
	case jsonrpc.CodeParseError:
		if valid {
			t.Fatalf("%q: a parse error for a valid frame", line)
		}
		if string(r.ID) != "null" {
			t.Fatalf("%q: a parse error names id %s", line, r.ID)
		}
	case jsonrpc.CodeInvalidRequest:
	default:
		t.Fatalf("%q: code %d", line, r.Error.Code)
	}
}

// tooDeep counts the depth as a JSON decoder does: brackets in strings,
// escaped quotes included, do not count.
func TestTooDeep(t *testing.T) {
	for _, tc := range []struct {
		json string
		max  int
		want bool
	}{
		{`[]`, 1, false},
		{`[[]]`, 1, true},
		{`{"a":[{"b":1}]}`, 3, false},
		{`{"a":[{"b":1}]}`, 2, true},
		{`["[[[[", "\"[[[["]`, 1, false},
		{`["\\", [[]]]`, 2, true},
		{`"{{{{"`, 0, false},
	} {
		if got := tooDeep([]byte(tc.json), tc.max); got != tc.want {
			t.Errorf("tooDeep(%s, %d) = %v, want %v", tc.json, tc.max, got, tc.want)
		}
	}
}

// The refusal of a frame names its id only when the frame is a request
// whose id can be read: a response's id would be taken by the client as
// the answer to one of its own calls.
func TestRequestID(t *testing.T) {
	for _, tc := range []struct {
		frame string
		want  string // "" for none (null)
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"x"}`, "7"},
		{`{"id":"s","jsonrpc":"1.0","method":"x"}`, `"s"`},
		{`{"method":"x","params":{"id":3},"id":-2.5}`, "-2.5"},
		{`{"jsonrpc":"2.0","id":7,"method":"x","params":{"content":"cut sh`, "7"},
		{`{"jsonrpc":"2.0","method":"x","params":{"content":"cut short","id":7`, ""},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, ""},
		{`{"jsonrpc":"2.0","id":{"n":7},"method":"x"}`, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, ""},
		{`[{"jsonrpc":"2.0","id":7,"method":"x"}]`, ""},
		{`hello`, ""},
	} {
		if got := string(requestID([]byte(tc.frame))); got != tc.want {
			t.Errorf("requestID(%s) = %q, want %q", tc.frame, got, tc.want)
		}
	}
}
