package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkEncode encodes res as the response to call id the way the SDK's
// stdio transport writes it: jsonrpc2 marshals the result, the transport
// encodes the message around it and ends the line.
func sdkEncode(t testing.TB, id int64, res *sdk.CallToolResult) []byte {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	jid, err := jsonrpc.MakeID(float64(id)) // JSON numbers decode as float64
	if err != nil {
		t.Fatal(err)
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: jid, Result: raw})
	if err != nil {
		t.Fatal(err)
	}
	return append(data, '\n')
}

// decodeResult decodes one written response line back into a result.
func decodeResult(t testing.TB, line []byte) *sdk.CallToolResult {
	t.Helper()
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSuffix(line, []byte("\n")))
	if err != nil {
		t.Fatalf("written line is not a JSON-RPC message: %v\n%.300s", err, line)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("written message is a %T", msg)
	}
	var res sdk.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		t.Fatalf("result: %v\n%.300s", err, resp.Result)
	}
	return &res
}

// texts are the contents' texts of res.
func texts(res *sdk.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		out = append(out, c.(*sdk.TextContent).Text)
	}
	return out
}

// roundTrip is what a client decodes from text sent as JSON: the text,
// with each invalid UTF-8 byte as U+FFFD.
func roundTrip(text string) string {
	b, _ := json.Marshal(text)
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}

func TestSplicerWritesWhatTheSDKWould(t *testing.T) {
	long := strings.Repeat("12:3f|\treturn \"x\" // a < b && c > d\n", 40)
	for _, tc := range []struct {
		name    string
		texts   []string
		isError bool
		spliced int // how many texts hold leaves to the splicer
	}{
		{"a short text is the SDK's to encode", []string{"Created f.go (1 line)"}, false, 0},
		{"one byte under the threshold", []string{strings.Repeat("a", spliceMin-1)}, false, 0},
		{"at the threshold", []string{strings.Repeat("a", spliceMin)}, false, 1},
		{"a page of tagged lines", []string{long}, false, 1},
		{"a tool error", []string{long}, true, 1},
		{"quotes, backslashes, control characters", []string{long + "\"\\\x00\x01\x1f\t\r\n\u007f"}, false, 1},
		{"HTML characters and line separators", []string{long + "<script>&amp;</script>\u2028\u2029"}, false, 1},
		{"invalid UTF-8", []string{long + "\xff\xfe ok \xc3"}, false, 1},
		{"non-ASCII", []string{long + "héllo, 世界, 🙂"}, false, 1},
		{"several contents, long and short", []string{long, "short", long + "second"}, false, 2},
		{"text that looks like a placeholder", []string{long + "\x00hl0000000000000000:0"}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func() *sdk.CallToolResult {
				res := &sdk.CallToolResult{IsError: tc.isError}
				for _, s := range tc.texts {
					res.Content = append(res.Content, &sdk.TextContent{Text: s})
				}
				return res
			}
			want := sdkEncode(t, 7, build())
			var out bytes.Buffer
			sp := newSplicer(&out)
			held := sp.hold(build())
			if got := sp.pendingTexts(); got != tc.spliced {
				t.Fatalf("%d texts held, want %d", got, tc.spliced)
			}
			line := sdkEncode(t, 7, held)
			n, err := sp.Write(line)
			if err != nil || n != len(line) {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
			}
			if sp.pendingTexts() != 0 {
				t.Errorf("%d texts still pending after their response", sp.pendingTexts())
			}
			if tc.spliced == 0 && !bytes.Equal(out.Bytes(), want) {
				t.Errorf("nothing held, yet the bytes changed:\n got %s\nwant %s", out.Bytes(), want)
			}
			if !bytes.HasSuffix(out.Bytes(), []byte("}\n")) || bytes.Count(out.Bytes(), []byte("\n")) != 1 {
				t.Errorf("not one line: %q", out.Bytes())
			}
			got, wantRes := decodeResult(t, out.Bytes()), decodeResult(t, want)
			if got.IsError != tc.isError || len(got.Content) != len(tc.texts) {
				t.Fatalf("got isError=%v with %d contents", got.IsError, len(got.Content))
			}
			for i, s := range texts(got) {
				if s != texts(wantRes)[i] || s != roundTrip(tc.texts[i]) {
					t.Errorf("content %d: got %.80q, want %.80q", i, s, roundTrip(tc.texts[i]))
				}
			}
		})
	}
}

func TestSplicerLeavesOtherBytesAlone(t *testing.T) {
	var out bytes.Buffer
	sp := newSplicer(&out)
	held := sp.hold(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", spliceMin)}}})
	mark := string(sp.marker)
	for _, line := range []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"no marker"}}` + "\n",
		`{"text":` + mark + `99"}` + "\n", // not pending
		`{"text":` + mark + `0` + "\n",    // no closing quote
		`{"text":` + mark + `x"}` + "\n",  // not a number
	} {
		out.Reset()
		if n, err := sp.Write([]byte(line)); err != nil || n != len(line) {
			t.Fatalf("Write(%q) = %d, %v", line, n, err)
		}
		if out.String() != line {
			t.Errorf("Write(%q) wrote %q", line, out.String())
		}
	}
	if sp.pendingTexts() != 1 {
		t.Fatalf("the held text was taken by a line that did not carry it")
	}
	// The real response still gets it.
	out.Reset()
	line := sdkEncode(t, 1, held)
	if _, err := sp.Write(line); err != nil {
		t.Fatal(err)
	}
	if got := texts(decodeResult(t, out.Bytes())); got[0] != strings.Repeat("x", spliceMin) {
		t.Errorf("got %.40q", got[0])
	}
}

// A JSON-RPC batch is written as one line holding several responses.
func TestSplicerBatch(t *testing.T) {
	var out bytes.Buffer
	sp := newSplicer(&out)
	a, b := strings.Repeat("a", 600), strings.Repeat("b\"", 400)
	ra := sp.hold(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a}}})
	rb := sp.hold(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b}}})
	la, lb := sdkEncode(t, 1, ra), sdkEncode(t, 2, rb)
	batch := "[" + strings.TrimSuffix(string(la), "\n") + "," + strings.TrimSuffix(string(lb), "\n") + "]\n"
	if _, err := sp.Write([]byte(batch)); err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("batch: %v, %d messages\n%.200s", err, len(msgs), out.Bytes())
	}
	for i, want := range []string{a, b} {
		if got := texts(decodeResult(t, msgs[i])); got[0] != want {
			t.Errorf("message %d: got %.40q", i, got[0])
		}
	}
	if sp.pendingTexts() != 0 {
		t.Errorf("%d texts pending", sp.pendingTexts())
	}
}

// FuzzSplicer: whatever the text, the client decodes from the spliced
// response the text the SDK's own encoding gives it.
func FuzzSplicer(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\x00\n\t", "\xff\xfe", "<>&\u2028", "\x00hl0123456789abcdef:0", "世界🙂"} {
		f.Add(s, uint16(0))
		f.Add(s, uint16(spliceMin))
	}
	f.Fuzz(func(t *testing.T, s string, pad uint16) {
		text := strings.Repeat("p", int(pad)%(2*spliceMin)) + s
		var out bytes.Buffer
		sp := newSplicer(&out)
		held := sp.hold(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}})
		if _, err := sp.Write(sdkEncode(t, 3, held)); err != nil {
			t.Fatal(err)
		}
		want := texts(decodeResult(t, sdkEncode(t, 3, &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}})))[0]
		if got := texts(decodeResult(t, out.Bytes()))[0]; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if sp.pendingTexts() != 0 {
			t.Errorf("%d texts pending", sp.pendingTexts())
		}
	})
}
