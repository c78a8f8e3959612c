package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxFrameBytes is the largest JSON-RPC message hashline mcp reads: one
// line of stdin, its newline aside. A longer line is refused with an error
// reply and the session goes on; it is never held in memory whole.
const MaxFrameBytes = 16 << 20

// maxDepth is how deeply a message may nest. MCP messages nest a handful of
// levels; a bound far above that keeps every decoder after this one (the
// SDK's refuses deeper input outright, and others recurse) safe from a
// frame built to exhaust them.
const maxDepth = 512

// idHead is how much of a frame's start is searched for its id when the
// frame cannot be decoded whole (too large): enough for the envelope's
// keys before a large params, bounded so a refusal stays cheap.
const idHead = 1 << 20

// The texts of the error replies, each said once. They tell the client's
// author (or the model reading them) what to send instead.
var (
	msgDeep      = fmt.Sprintf("the message nests deeper than %d levels; no MCP message needs that many", maxDepth)
	msgNotJSON   = "the line is not one complete JSON value (cut short, several values, or not JSON): send each JSON-RPC message as one JSON object on its own line"
	msgNotUTF8   = `the message is not valid UTF-8, as JSON text must be: send other bytes as \u escapes inside strings`
	msgBatch     = "JSON-RPC batches (arrays of messages) are not accepted: send each message as its own line"
	msgNotObject = `a JSON-RPC message is a JSON object: {"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	msgBadShape  = `not a JSON-RPC 2.0 message (%v): want "jsonrpc":"2.0", an "id" that is a number or a string (none for a notification), and a string "method"`
	msgTooLarge  = "the message is larger than %[1]s, the most hashline mcp reads in one line, and was not read. " +
		"To write a larger file, write_file its first part and add the rest with edit_file append items, each call under %[1]s; " +
		"or write it with the CLI: hashline write FILE < content"
)

// frameError is a frame refused before the SDK sees it, answered with a
// JSON-RPC error reply on the same output.
type frameError struct {
	code    int64
	id      json.RawMessage // the request's own id, or nil when it cannot be known (null)
	message string
}

func parseError(message string) *frameError {
	return &frameError{code: jsonrpc.CodeParseError, message: message}
}

// reply is the JSON-RPC error response, without its newline.
func (e *frameError) reply() []byte {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"` // nil is null, as JSON-RPC wants for an unknown id
		Error   wireError       `json:"error"`
	}{"2.0", e.id, wireError{e.code, e.message}})
	if err != nil {
		// Only an id that is not JSON could fail, and ids come from valid
		// frames; null is still a valid reply.
		e.id = nil
		return e.reply()
	}
	return b
}

// checkFrame decides what one line of input is: nothing (blank, as
// newline-delimited JSON allows), a message for the SDK, or a frame to
// refuse. Every frame it passes decodes as the SDK decodes it, so no input
// can end the session; a good frame costs a depth scan, a validity scan
// and the one decode the SDK would make anyway.
func checkFrame(line []byte) (jsonrpc.Message, *frameError) {
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(bytes.TrimRight(trimmed, " \t\r\n")) == 0 {
		return nil, nil
	}
	if tooDeep(line, maxDepth) {
		return nil, parseError(msgDeep)
	}
	if !json.Valid(line) {
		return nil, parseError(msgNotJSON)
	}
	if !utf8.Valid(line) {
		return nil, parseError(msgNotUTF8)
	}
	switch trimmed[0] {
	case '{':
	case '[':
		return nil, &frameError{code: jsonrpc.CodeInvalidRequest, message: msgBatch}
	default:
		return nil, &frameError{code: jsonrpc.CodeInvalidRequest, message: msgNotObject}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, &frameError{code: jsonrpc.CodeInvalidRequest, id: requestID(line), message: fmt.Sprintf(msgBadShape, err)}
	}
	return msg, nil
}

// tooLarge is the refusal of a line longer than limit bytes, of which
// head is the start.
func tooLarge(head []byte, limit int) *frameError {
	size := fmt.Sprintf("%d bytes", limit)
	if limit%(1<<20) == 0 {
		size = fmt.Sprintf("%d MiB", limit>>20)
	}
	return &frameError{code: jsonrpc.CodeInvalidRequest, id: requestID(head[:min(len(head), idHead)]), message: fmt.Sprintf(msgTooLarge, size)}
}

// tooDeep reports whether the JSON in b nests more than max arrays and
// objects deep, brackets inside strings aside. It is one pass with no
// allocation, and stops at the first level too many.
func tooDeep(b []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// requestID is the id of the request frame starts, so that the client can
// match the refusal to its call: the top-level "id", when it is a number
// or a string and the frame names a "method" (a reply to a response would
// be taken as a response to one of the client's own calls). It reads the
// top-level keys in order and gives up (nil: null) where frame stops
// being JSON, which for a frame's head is where it was cut.
func requestID(frame []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(frame))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	method := false
	for dec.More() && (id == nil || !method) {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			break
		}
		switch key {
		case "id":
			if len(value) > 0 && (value[0] == '"' || value[0] == '-' || value[0] >= '0' && value[0] <= '9') && utf8.Valid(value) {
				id = value
			} else {
				return nil
			}
		case "method":
			method = true
		}
	}
	if !method {
		return nil
	}
	return id
}
