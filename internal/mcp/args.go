package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// handler is a tool's typed handler, as the SDK's typed tools take it.
type handler[In any] func(context.Context, *sdk.CallToolRequest, In) (*sdk.CallToolResult, any, error)

// addTool registers a tool as sdk.AddTool does, with the same input schema
// (inferred from In unless the tool sets one) and the same verdict on every
// call's arguments, but decodes plain, well-formed arguments without
// running the schema validator.
//
// The SDK validates each call's arguments against the JSON Schema before
// decoding them, on a goroutine it starts for the call: 40-100 µs per call
// on the benchmark machine, two thirds of it growing that goroutine's
// stack for the validator's recursion. A tool call that does a 100-line
// edit takes about 0.8 ms in all. Here arguments are first decoded
// strictly (exact key names, no unknown key at any depth, no null, no type
// mismatch, no repeated or escaped key; see decodeFast), and complete then
// checks that every required value is present and not empty; in that case
// the schema accepts them too (FuzzDecodeArgs checks this). Anything else is
// judged by the schema, with the SDK's messages. With a splicer, every
// result's long texts are left to it (see splicer.hold).
func addTool[In any](s *sdk.Server, sp *splicer, t *sdk.Tool, complete func(*In) bool, h handler[In]) {
	resolved := resolveSchema[In](t)
	s.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		in, err := decodeArgs(req.Params.Arguments, resolved, complete)
		if err != nil {
			return sp.hold(errorResult(err.Error())), nil
		}
		res, _, err := h(ctx, req, in)
		if err != nil {
			return sp.hold(errorResult(err.Error())), nil
		}
		return sp.hold(res), nil
	})
}

// resolveSchema gives t the input schema inferred from In, as sdk.AddTool
// does, unless it has one, and returns it resolved for validation.
func resolveSchema[In any](t *sdk.Tool) *jsonschema.Resolved {
	if t.InputSchema == nil {
		schema, err := jsonschema.For[In](&jsonschema.ForOptions{})
		if err != nil {
			panic(err) // the argument types are static
		}
		t.InputSchema = schema
	}
	resolved, err := t.InputSchema.(*jsonschema.Schema).Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		panic(err)
	}
	return resolved
}

// strict is how arguments are decoded without the validator: key names
// match exactly, as the SDK's decoder matches them, and an unknown key at
// any depth sends the arguments to the validator.
const strict = segjson.DisallowUnknownFields | segjson.DontMatchCaseInsensitiveStructFields

// decodeArgs decodes a call's arguments into an In: by decodeFast if it
// takes them, otherwise by decodeValidated.
func decodeArgs[In any](raw json.RawMessage, resolved *jsonschema.Resolved, complete func(*In) bool) (In, error) {
	if in, ok := decodeFast(raw, complete); ok {
		return in, nil
	}
	return decodeValidated[In](raw, resolved)
}

// decodeFast takes arguments that decode strictly and are complete. It
// leaves to the validator's path whatever could decode differently there:
// a "null" anywhere (decoded here as a zero value, refused by the schema
// in most places; even inside a string, which costs only time); a key
// twice in one object (the validator's path keeps the last value, a
// struct decoder merges both); a key with an escape (which could spell
// another key); and any number a strict decode refuses (2.0 for an
// integer, which the validator's path turns into 2).
func decodeFast[In any](raw json.RawMessage, complete func(*In) bool) (In, bool) {
	var in In
	if len(raw) == 0 || bytes.Contains(raw, []byte("null")) || !plainKeys(raw) {
		return in, false
	}
	rest, err := segjson.Parse(raw, &in, strict)
	if err != nil || len(rest) != 0 || !complete(&in) {
		return *new(In), false
	}
	return in, true
}

// plainKeys reports whether every object in the JSON text b has distinct
// keys without escapes. Malformed text may pass; the strict decode that
// follows refuses it.
func plainKeys(b []byte) bool {
	var objects [][][]byte // per open object or array: its keys so far; nil for an array
	afterOpenOrComma := false
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			objects = append(objects, [][]byte{})
			afterOpenOrComma = true
		case '[':
			objects = append(objects, nil)
			afterOpenOrComma = false
		case '}', ']':
			if len(objects) > 0 {
				objects = objects[:len(objects)-1]
			}
			afterOpenOrComma = false
		case ',':
			afterOpenOrComma = true
		case '"':
			j := i + 1
			escaped := false
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					escaped = true
					j++
				}
			}
			if afterOpenOrComma && len(objects) > 0 && objects[len(objects)-1] != nil {
				key := b[i+1 : min(j, len(b))]
				top := objects[len(objects)-1]
				if escaped || slices.ContainsFunc(top, func(k []byte) bool { return bytes.Equal(k, key) }) {
					return false
				}
				objects[len(objects)-1] = append(top, key)
			}
			afterOpenOrComma = false
			i = j
		}
	}
	return true
}

// decodeValidated is what the SDK does: decode into a map (a repeated key
// keeps its last value), apply the schema's defaults and validate, encode
// the map again, and decode that into In, leaving unset the unknown keys
// the schema allows (in edit items).
func decodeValidated[In any](raw json.RawMessage, resolved *jsonschema.Resolved) (In, error) {
	var in In
	m := map[string]any{}
	if len(raw) > 0 {
		if err := segjson.Unmarshal(raw, &m); err != nil {
			return in, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	var v any = m
	if err := resolved.ApplyDefaults(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
	}
	if err := resolved.Validate(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %w", err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return in, fmt.Errorf("validating \"arguments\": marshalling with defaults: %v", err)
	}
	if _, err := segjson.Parse(data, &in, segjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return *new(In), err
	}
	if va, ok := any(&in).(validatedArgs); ok {
		va.validated(m)
	}
	return in, nil
}

// validatedArgs is implemented by arguments that look at what the
// validator's path decoded: the unknown keys the schema allows are dropped
// from In, and only this path can meet them (decodeFast refuses them).
type validatedArgs interface{ validated(m map[string]any) }
